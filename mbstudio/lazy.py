"""Packages whose names are imported when first used: `from mbstudio.model import load` stays what it was, but
`import mbstudio.model.errors` (or a command's --help) no longer imports every module of the package and the
libraries behind them (numpy, gmpy2, mpmath)."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def exports(package: str, modules: dict[str, tuple[str, ...]]) -> Callable[[str], object]:
    """A module-level `__getattr__` for `package`: each name of `modules[module]` is read from that submodule on
    first use (then kept in the package's namespace, so the next use is a plain lookup)."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
