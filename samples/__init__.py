"""The sample models, installed as the package data of `mbstudio._samples` (see pyproject.toml)."""
