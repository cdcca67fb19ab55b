"""`mbstudio samples`: the bundled models and their paths."""

from __future__ import annotations

import argparse

from .. import samples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    for name in samples.names():
        print(f"{name:20s} {samples.path(name)}")
    return 0
