"""CasADi's C of a library cut into translation units that the C compiler builds in parallel, its long functions
written so that register allocation stays cheap.

GCC's time on the engine's C is almost all register allocation in a few long straight-line functions: a
100-link chain's articulated-body pass has 66 000 statements, and values that live across thousands of them
(the articulated inertias, from the inward pass to the outward one) take its allocator 22 of the 27 s it spends
on the function. Such values are kept in memory explicitly instead: a value whose last use lies more than
SPAN statements after its assignment is stored to an array on the stack when assigned and read from it where
used (the allocator would have spilled it anyway: the processor has 16 registers for thousands of values). The
function then compiles in a third of the time and runs as fast. Each long function goes to a unit of its own
(CasADi's preamble, its helpers renamed by CASADI_CODEGEN_PREFIX so that no two units define the same symbol),
left in the main unit as a call forwarded to it; the units compile on as many processes as there are cores, then
link. The statements and their order are unchanged, so the numbers are the same bits.
"""

from __future__ import annotations

import re

# a function shorter than this compiles in well under a second: a unit of its own would cost more than it saves
SPLIT_CHARS = 200_000
SPAN = 100  # statements: a value used further than this from its assignment is kept in memory
# for the long functions' units: GCC's scalar replacement would turn the array of kept values back into variables
UNIT_OPTIONS = ("-fno-tree-sra", "-fvisibility=hidden")

_SIGNATURE = "(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w, int mem)"
_FUNCTION = re.compile(r"^static int casadi_(f\d+)" + re.escape(_SIGNATURE) + r" \{\n(.*?)^\}\n", re.M | re.S)
# CasADi's scalar graphs as C: declarations of the work variables a0001..., then one assignment per line
_DECLARATION = re.compile(r"  casadi_real a\d+(, a\d+)*;")
_STATEMENT = re.compile(r"  (a\d+=[^{};]*|if \(res\[\d+\]!=0\) res\[\d+\]\[\d+\]=[^{};]*);")
_VARIABLE = re.compile(r"\ba(\d+)\b")


def translation_units(text: str) -> tuple[str, list[str]]:
    """(the main unit, the units of the long functions): `text` itself and none when no function is long enough
    and in the straight-line form of CasADi's scalar graphs."""
    first = _FUNCTION.search(text)
    if first is None:
        return text, []
    preamble = text[: first.start()]
    main, parts, end = [], [], 0
    for found in _FUNCTION.finditer(text):
        name, lines = found.group(1), found.group(2).splitlines()
        if len(found.group(0)) < SPLIT_CHARS or not _straight_line(lines):
            continue
        prefix = f"mbunit{len(parts)}_"
        parts.append(_unit(preamble, prefix, f"int casadi_{name}{_SIGNATURE} {{\n{_kept_in_memory(lines)}}}\n"))
        main.append(text[end : found.start()])
        main.append(f"int {prefix}{name}{_SIGNATURE};\n")
        main.append(f"static int casadi_{name}{_SIGNATURE} {{\n  return {prefix}{name}(arg, res, iw, w, mem);\n}}\n")
        end = found.end()
    return "".join(main) + text[end:], parts


def _straight_line(lines: list[str]) -> bool:
    """Declarations of work variables, assignments one per line, and return 0."""
    if not lines or lines[-1] != "  return 0;":
        return False
    return all(_DECLARATION.fullmatch(line) or _STATEMENT.fullmatch(line) for line in lines[:-1])


def _kept_in_memory(lines: list[str]) -> str:
    """The body with every value used more than SPAN statements after its assignment stored to s[] when
    assigned and read from s[] where used (a variable's index in s is its number: its values never overlap)."""
    statements = [(k, *_split(line)) for k, line in enumerate(lines) if not _DECLARATION.fullmatch(line)][:-1]
    reads = [_VARIABLE.findall(value) for _, _, value in statements]
    last_use: dict[int, int] = {}  # the position of an assignment -> that of the last use of its value
    assigned: dict[str, int] = {}  # a variable -> the position of its current assignment
    for position, (_, target, _) in enumerate(statements):
        for variable in reads[position]:
            if variable in assigned:
                last_use[assigned[variable]] = position
        if target:
            assigned[target] = last_use[position] = position
    kept = {start for start, end in last_use.items() if end - start > SPAN}
    out, assigned = list(lines), {}

    def read(match: re.Match) -> str:
        return f"s[{int(match.group(1))}]" if assigned.get(match.group(1)) in kept else match.group(0)

    for position, (k, target, value) in enumerate(statements):
        if any(assigned.get(variable) in kept for variable in reads[position]):
            value = _VARIABLE.sub(read, value)
        if target:
            assigned[target] = position
            stored = f" s[{int(target)}]=a{target};" if position in kept else ""
            out[k] = f"  a{target}={value};{stored}"
        else:
            out[k] = f"  {value};"
    size = 1 + max((int(v) for v in assigned), default=0)
    return "\n".join([f"  casadi_real s[{size}];", *out]) + "\n"


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
