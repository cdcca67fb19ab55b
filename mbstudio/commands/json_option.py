"""`--json` on every command that computes: one JSON object on stdout (the figures the text gives, the files
written) in place of the text, so that a script reads the result without parsing sentences."""

from __future__ import annotations

import argparse

from ..io.json_text import json_text

HELP = "print one JSON object on stdout instead of the text: the figures it gives and the files written"


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help=HELP)


def say(args: argparse.Namespace, figures: dict, lines: list[str]) -> None:
    """The figures as JSON with --json, else the text's lines."""
    print(json_text(figures).rstrip() if args.json else "\n".join(lines))


STDOUT = "-"  # `--json` without a file: the object on stdout


def add_json_file(parser: argparse.ArgumentParser, what: str) -> None:
    """`--json` printing `what` on stdout in place of the text, or `--json OUT` writing it to OUT as well."""
    help_text = f"print {what} as one JSON object on stdout instead of the text; --json OUT writes it to OUT"
    parser.add_argument("--json", nargs="?", const=STDOUT, metavar="OUT", help=help_text)


def json_file(args: argparse.Namespace) -> str | None:
    """The file --json OUT names, or None (no --json, or --json alone)."""
    return None if args.json in (None, STDOUT) else args.json
