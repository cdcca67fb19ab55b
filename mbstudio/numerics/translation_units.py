"""CasADi's C of a library cut into translation units that the C compiler builds in parallel, its long functions
cut into pieces so that compiling them stays cheap in time and memory.

GCC's time and memory on the engine's C go almost all to a few long straight-line functions: a 100-link chain's
articulated-body pass has 66 000 statements, and values that live across thousands of them (the articulated
inertias, from the inward pass to the outward one) took its register allocator 22 of the 27 s it spent on the
function; whole, the function took 780 MB to compile. Such a function is cut into pieces of PIECE statements,
each a function of its own, called one after the other; a value used in another piece than its assignment's, or
more than SPAN statements after it, is stored to an array s[] on the caller's stack when assigned and read from it
where used (the allocator would have spilled it anyway: the processor has 16 registers for thousands of values).
The pieces go to units of about UNIT_CHARS characters (CasADi's preamble, its helpers renamed by
CASADI_CODEGEN_PREFIX so that no two units define the same symbol), the function itself stays in the main unit as
the calls of its pieces; the units compile on as many processes as there are cores, then link. The chain's engine
then compiles in 8 s of CPU instead of 15, none of its compilers above 130 MB, and runs as fast. The statements and
their order are unchanged, so the numbers are the same bits.
"""

from __future__ import annotations

import re

# a function shorter than this compiles in well under a second: a unit of its own would cost more than it saves
SPLIT_CHARS = 200_000
SPAN = 100  # statements: a value used further than this from its assignment is kept in memory
PIECE = 1000  # statements per piece of a long function
UNIT_CHARS = 400_000  # the pieces of long functions in units of about this many characters
# for the long functions' units: GCC's scalar replacement would turn the array of kept values back into variables
UNIT_OPTIONS = ("-fno-tree-sra", "-fvisibility=hidden")

_SIGNATURE = "(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w, int mem)"
_PIECE_SIGNATURE = "(const casadi_real** arg, casadi_real** res, casadi_real* s)"
_FUNCTION = re.compile(r"^static int casadi_(f\d+)" + re.escape(_SIGNATURE) + r" \{\n(.*?)^\}\n", re.M | re.S)
# CasADi's scalar graphs as C: declarations of the work variables a0001..., then one assignment per line
_DECLARATION = re.compile(r"  casadi_real a\d+(, a\d+)*;")
_STATEMENT = re.compile(r"  (a\d+=[^{};]*|if \(res\[\d+\]!=0\) res\[\d+\]\[\d+\]=[^{};]*);")
_VARIABLE = re.compile(r"\ba(\d+)\b")


def translation_units(text: str) -> tuple[str, list[str]]:
    """(the main unit, the units of the long functions' pieces): `text` itself and none when no function is long
    enough and in the straight-line form of CasADi's scalar graphs."""
    first = _FUNCTION.search(text)
    if first is None:
        return text, []
    preamble = text[: first.start()]
    main, pieces, end = [], [], 0
    for found in _FUNCTION.finditer(text):
        name, lines = found.group(1), found.group(2).splitlines()
        if len(found.group(0)) < SPLIT_CHARS or not _straight_line(lines):
            continue
        bodies, size = _pieces(lines)
        names = [f"mbpiece_{name}_{k}" for k in range(len(bodies))]
        pieces += [f"void {piece}{_PIECE_SIGNATURE} {{\n{body}}}\n" for piece, body in zip(names, bodies, strict=True)]
        main.append(text[end : found.start()])
        main += [f"void {piece}{_PIECE_SIGNATURE};\n" for piece in names]
        calls = "".join(f"  {piece}(arg, res, s);\n" for piece in names)
        main.append(f"static int casadi_{name}{_SIGNATURE} {{\n  casadi_real s[{size}];\n{calls}  return 0;\n}}\n")
        end = found.end()
    units = [_unit(preamble, f"mbunit{k}_", "".join(group)) for k, group in enumerate(_grouped(pieces))]
    return "".join(main) + text[end:], units


def _grouped(pieces: list[str]) -> list[list[str]]:
    """The pieces in order, in groups of about UNIT_CHARS characters."""
    groups: list[list[str]] = []
    size = UNIT_CHARS
    for piece in pieces:
        if size + len(piece) > UNIT_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(piece)
        size += len(piece)
    return groups


def _straight_line(lines: list[str]) -> bool:
    """Declarations of work variables, assignments one per line, and return 0."""
    if not lines or lines[-1] != "  return 0;":
        return False
    return all(_DECLARATION.fullmatch(line) or _STATEMENT.fullmatch(line) for line in lines[:-1])


def _pieces(lines: list[str]) -> tuple[list[str], int]:
    """The body cut into pieces of PIECE statements, and the size of the array s[] they share: every value used
    in another piece than its assignment's, or more than SPAN statements after it, is stored to s[] when
    assigned and read from s[] where used (a variable's index in s is its number: its values never overlap)."""
    statements = [_split(line) for line in lines if not _DECLARATION.fullmatch(line)][:-1]
    reads = [_VARIABLE.findall(value) for _, value in statements]
    last_use: dict[int, int] = {}  # the position of an assignment -> that of the last use of its value
    assigned: dict[str, int] = {}  # a variable -> the position of its current assignment
    for position, (target, _) in enumerate(statements):
        for variable in reads[position]:
            if variable in assigned:
                last_use[assigned[variable]] = position
        if target:
            assigned[target] = last_use[position] = position
    kept = {start for start, end in last_use.items() if end - start > SPAN or end // PIECE != start // PIECE}
    out, assigned = [], {}

    def read(match: re.Match) -> str:
        return f"s[{int(match.group(1))}]" if assigned.get(match.group(1)) in kept else match.group(0)

    for position, (target, value) in enumerate(statements):
        if any(assigned.get(variable) in kept for variable in reads[position]):
            value = _VARIABLE.sub(read, value)
        if target:
            assigned[target] = position
            stored = f" s[{int(target)}]=a{target};" if position in kept else ""
            out.append(f"  a{target}={value};{stored}")
        else:
            out.append(f"  {value};")
    bodies = []
    for start in range(0, len(out), PIECE):
        targets = sorted({target for target, _ in statements[start : start + PIECE] if target}, key=int)
        declared = [f"  casadi_real {', '.join('a' + t for t in targets)};"] if targets else []
        bodies.append("\n".join([*declared, *out[start : start + PIECE]]) + "\n")
    return bodies, 1 + max((int(v) for v in assigned), default=0)


def _split(line: str) -> tuple[str, str]:
    """(the number of the variable assigned, or "" for an output; the rest of the statement)."""
    statement = line.strip().removesuffix(";")
    if statement.startswith("a"):
        target, value = statement.split("=", 1)
        return target[1:], value
    return "", statement


def _unit(preamble: str, prefix: str, function: str) -> str:
    """A long function with CasADi's preamble (macros, helpers, sparsity constants), every prefixed symbol
    renamed and the preamble's exported functions made static (the main unit exports them)."""
    renaming = f"#define CASADI_CODEGEN_PREFIX\n#define CODEGEN_PREFIX {prefix}\n#define CASADI_SYMBOL_EXPORT static\n"
    return renaming + preamble + function + "\n#ifdef __cplusplus\n}\n#endif\n"
