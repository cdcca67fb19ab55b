"""`mbstudio eom FILE [--latex OUT.tex] [--python OUT.py] [--c OUT_DIR] [--numpy OUT.py] [--numeric-inertia]
[--no-simplify]`: symbolic equations of motion, their sizes before and after common-subexpression elimination,
and the exports; `--c` and `--numpy` write the compiled engine's equations as C (io/c_code.py) and as a numpy
module (io/numpy_code.py)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..model import ModelError, check_outputs, load, write_all
from ..symbolic import common_subexpressions, equations_of_motion, latex_fragment, python_module
from .json_option import add_json, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("--latex", metavar="OUT.tex", help="write a LaTeX fragment (needs amsmath)")
    parser.add_argument("--python", metavar="OUT.py", help="write a Python module of numpy functions")
    parser.add_argument(
        "--c",
        metavar="OUT_DIR",
        help="write <model>.h and <model>.c: forward dynamics, state equation, loop closure, RNEA, CRBA, ABA "
        "the regressor and the base regressor in self-contained C (doubles, numeric parameters)",
    )
    parser.add_argument(
        "--prefix",
        metavar="NAME_",
        help="start every exported C symbol with this (default: the model's name in lower case, then _), so that "
        "several models link into one program",
    )
    parser.add_argument(
        "--row-major", action="store_true", help="store the C functions' matrices by rows (default: by columns)"
    )
    parser.add_argument(
        "--numpy",
        metavar="OUT.py",
        help="write the same functions as --c as a module of plain numpy (batches of states at once)",
    )
    parser.add_argument(
        "--numeric-inertia",
        action="store_true",
        help="substitute the document's inertial values instead of the symbols m1, mx1, ...",
    )
    parser.add_argument("--no-simplify", action="store_true", help="skip the trigonometric simplification")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    c_files = _c_paths(args)
    outputs = [p for p in (args.latex, args.python, args.numpy, *c_files) if p]
    if len(set(outputs)) < len(outputs):
        raise ModelError("--latex, --python, --numpy, --c", "name the same file", outputs[0], "different files")
    _check_folder(args.c)
    check_outputs([p for p in outputs if p not in c_files], [args.file])  # before the work, not after
    model = load(args.file)
    written = {}
    figures: dict = {"model": model.name}
    if c_files:
        from ..io.c_code import c_sources

        sources = c_sources(model, Path(c_files[0]).stem, args.prefix, args.row_major)
        written |= {path: sources[Path(path).name] for path in c_files}
    if args.numpy:
        from ..io.numpy_code import numpy_source

        written[args.numpy] = numpy_source(model)
    if args.latex or args.python or not (c_files or args.numpy):
        eom = equations_of_motion(model, numeric_inertia=args.numeric_inertia, simplify=not args.no_simplify)
        cse = common_subexpressions(eom)
        files = {args.latex: latex_fragment, args.python: python_module}
        written |= {path: write(eom, cse) for path, write in files.items() if path}
        figures |= equation_figures(eom, cse)
        if not args.json:
            print(summary(eom, cse))
    if c_files:
        Path(args.c).mkdir(parents=True, exist_ok=True)
        check_outputs(c_files, [args.file])
    write_all(written)  # every file or none
    lines = [f"C: {path} ({len(written[path])} characters)" for path in c_files]
    if args.numpy:
        lines.append(f"numpy: {args.numpy} ({len(written[args.numpy])} characters)")
    figures["written"] = {path: len(text) for path, text in written.items()}  # the characters of each file
    if args.json or lines:
        say(args, figures, lines)
    return 0


def _check_folder(folder: str | None) -> None:
    """--c names a folder, made when missing (with its parents) once the work is done: refused here, before the
    work, when it is a file or when its nearest existing parent takes no new folder."""
    if folder is None:
        return
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ModelError("--c", "names a file, not a folder", folder, "a folder (made when it does not exist)")
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ModelError("--c", f"cannot be made or written in '{existing}'", folder, "a folder you can write in")


def _c_paths(args: argparse.Namespace) -> list[str]:
    """OUT_DIR/<stem>.h and .c, the stem the model file's name made a C identifier."""
    if not args.c:
        return []
    from ..io.c_code import c_stem

    stem = c_stem(Path(args.file).stem)
    return [str(Path(args.c) / f"{stem}.h"), str(Path(args.c) / f"{stem}.c")]


def equation_figures(eom, cse) -> dict:
    """What the summary's table gives, for --json."""
    blocks = {
        block.name: {
            "shape": list(block.shape),
            "entries": len(block.entries),
            "ops_before": block.ops_before,
            "temporaries": len(block.temporaries),
            "ops_after": block.ops_after,
        }
        for block in cse.blocks.values()
    }
    return {
        "coordinates": eom.n,
        "geometric_symbols": len(eom.geometric),
        "inertial_symbols": len(eom.inertial),
        "closed_loop": bool(eom.closed),
        "matrices": blocks,
        "ops_before": cse.ops_before,
        "ops_after": cse.ops_after,
        "seconds": {**eom.provenance["seconds"], "common_subexpressions": cse.seconds},
        "notes": list(eom.notes),
    }


def summary(eom, cse) -> str:
    seconds = eom.provenance["seconds"]
    lines = [
        f"{eom.model_name}: {eom.n} coordinates, {len(eom.geometric)} geometric and "
        f"{len(eom.inertial)} inertial symbols" + (", closed loop" if eom.closed else ""),
        f"{'matrix':22s} {'shape':>7s} {'entries':>8s} {'ops before':>11s} {'temporaries':>12s} {'ops after':>10s}",
    ]
    for block in cse.blocks.values():
        shape = "x".join(map(str, block.shape))
        lines.append(
            f"{block.name:22s} {shape:>7s} {len(block.entries):8d} {block.ops_before:11d} "
            f"{len(block.temporaries):12d} {block.ops_after:10d}"
        )
    lines.append(f"{'total':22s} {'':7s} {'':8s} {cse.ops_before:11d} {'':12s} {cse.ops_after:10d}")
    lines.append(
        f"time: regressor {seconds['regressor']:.2f} s, equations and simplification "
        f"{seconds['equations']:.2f} s, common subexpressions {cse.seconds:.2f} s"
    )
    lines += [f"note: {note}" for note in eom.notes]
    return "\n".join(lines)
