"""The window icon, installed as the package data of `mbstudio._resources` (see pyproject.toml)."""
