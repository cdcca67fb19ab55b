"""The text parsers of jobs/options.py as argparse types, so that a command refuses what the window refuses, with
the same message (the option, the value, what is valid)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..model import ModelError


def argument_type(parse: Callable[[str], object]) -> Callable[[str], object]:
    """`parse` (text -> value, or a ModelError) as an argparse type: the ModelError becomes argparse's message."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ModelError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert
