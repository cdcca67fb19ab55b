"""`mbstudio cache`: what the engine cache holds, and removing what has not been used (numerics/cache_upkeep.py)."""

from __future__ import annotations

import argparse
import sys

from ..numerics.cache_upkeep import cache_limit, parse_size, prune, usage
from ..numerics.native_cache import CacheRefused
from .json_option import add_json, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    removal = parser.add_mutually_exclusive_group()
    removal.add_argument(
        "--unused-days", type=float, metavar="DAYS", help="remove the entries not used for this many days"
    )
    removal.add_argument(
        "--trim",
        nargs="?",
        const="",
        metavar="SIZE",
        help="remove the entries unused longest until the cache holds at most 80%% of SIZE (500M, 2G; default: "
        "its limit, MBSTUDIO_CACHE_LIMIT or 2G), keeping those used within the hour",
    )
    removal.add_argument("--clear", action="store_true", help="remove every entry (each is built again when needed)")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    try:
        pruned = _pruned(args)
        held = usage()
    except (ValueError, CacheRefused) as error:
        print(f"mbstudio cache: error: {error}", file=sys.stderr)
        return 2
    figures = {
        "folder": str(held.folder),
        "entries": held.entries,
        "files": held.files,
        "bytes": held.size,
        "limit_bytes": held.limit,
        "oldest_use": held.oldest,
    }
    lines = [held.text()]
    if pruned is not None:
        figures["removed"] = {"entries": pruned.entries, "files": pruned.files, "bytes": pruned.size}
        lines.insert(0, pruned.text())
    say(args, figures, lines)
    return 0


def _pruned(args: argparse.Namespace):
    if args.unused_days is not None:
        if not args.unused_days >= 0:
            raise ValueError(f"--unused-days: {args.unused_days:g} is not a number of days; expected 0 or more")
        return prune(unused_days=args.unused_days)
    if args.trim is not None:
        return prune(limit=parse_size(args.trim, "--trim") if args.trim else cache_limit())
    if args.clear:
        return prune(everything=True)
    return None
