"""Common-subexpression elimination of the equations of motion, and their export as a LaTeX fragment and as a
Python module of plain numpy functions.

Each result matrix (M, c, g, and Φ_q, γ for closed loops) is reduced on its own, so every exported function
carries only the temporaries it needs; M's lower triangle is the mirror of its upper one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import sympy
from sympy.printing.latex import greek_letters_set
from sympy.printing.numpy import NumPyPrinter

from .eom import EquationsOfMotion, Monitor

PREFIX = {"mass_matrix": "M", "bias": "C", "gravity": "G", "constraint_jacobian": "J", "constraint_rhs": "R"}
LATEX_NAME = {
    "mass_matrix": "M",
    "bias": "c",
    "gravity": "g",
    "constraint_jacobian": r"\Phi_{q}",
    "constraint_rhs": r"\gamma",
}
CAPITAL_GREEK = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
INERTIAL = re.compile(r"(mx|my|mz|m|Ixx|Ixy|Ixz|Iyy|Iyz|Izz)(.+)")
SIGNATURE = {"mass_matrix": "q", "bias": "q, qd", "gravity": "q", "constraint_jacobian": "q", "constraint_rhs": "q, qd"}
DOC = {
    "mass_matrix": "M(q), shape (..., n, n)",
    "bias": "c(q, qd): Coriolis and centrifugal forces without gravity, shape (..., n)",
    "gravity": "g(q): the forces that hold the mechanism at rest against gravity, shape (..., n)",
    "constraint_jacobian": "Φ_q(q) of the cut joints, shape (..., m, n)",
    "constraint_rhs": "γ(q, qd) = −Φ̇_q qd, with Φ_q q̈ = γ, shape (..., m)",
}


@dataclass
class Block:
    """One result matrix after CSE: `expressions[k]` is the entry at `entries[k]` in the temporaries."""

    name: str
    shape: tuple[int, int]
    entries: list[tuple[int, int]]
    temporaries: list[tuple[sympy.Symbol, sympy.Expr]]
    expressions: list[sympy.Expr]
    symmetric: bool
    ops_before: int
    ops_after: int


@dataclass
class CommonSubexpressions:
    blocks: dict[str, Block]
    seconds: float

    @property
    def ops_before(self) -> int:
        return sum(b.ops_before for b in self.blocks.values())

    @property
    def ops_after(self) -> int:
        return sum(b.ops_after for b in self.blocks.values())


def stored_entries(matrix: sympy.Matrix, symmetric: bool) -> list[tuple[int, int]]:
    """Non-zero entries, the upper triangle only for a symmetric matrix."""
    return [
        (i, j)
        for i in range(matrix.rows)
        for j in range(matrix.cols)
        if (j >= i or not symmetric) and matrix[i, j] != 0
    ]


def eliminate(name: str, matrix: sympy.Matrix, taken: set[str]) -> Block:
    symmetric = name == "mass_matrix"
    entries = stored_entries(matrix, symmetric)
    exprs = [matrix[e] for e in entries]
    names = sympy.numbered_symbols(f"t{PREFIX[name]}", real=True, exclude=[sympy.Symbol(t, real=True) for t in taken])
    temporaries, reduced = sympy.cse(exprs, symbols=names, order="none")
    after = sympy.count_ops([e for _, e in temporaries]) + sympy.count_ops(reduced)
    return Block(name, matrix.shape, entries, temporaries, reduced, symmetric, sympy.count_ops(exprs), after)


def common_subexpressions(eom: EquationsOfMotion, progress=None, cancel=None) -> CommonSubexpressions:
    """CSE of every result matrix; progress per matrix, cancellation between matrices (one sympy.cse call is
    not interruptible: run the job in a separate process for that)."""
    monitor, start = Monitor(progress, cancel), time.perf_counter()
    groups = eom.groups()
    taken = {str(s) for m in groups.values() for s in m.free_symbols}
    blocks = {}
    for k, (name, matrix) in enumerate(groups.items()):
        monitor.report(k / len(groups), f"common subexpressions: {name}")
        blocks[name] = eliminate(name, matrix, taken)
    monitor.report(1.0, "common subexpressions done")
    return CommonSubexpressions(blocks, time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------- LaTeX
def comment_text(value: object) -> str:
    """Free text for a one-line comment (LaTeX `%`, C `//`): every control or line-breaking character becomes
    a space, so nothing after it can leave the comment."""
    return "".join(c if c.isprintable() else " " for c in str(value))


def latex_name(name: str) -> str:
    """theta1 -> \\theta_{1}, d_theta1 -> \\dot{\\theta}_{1}, L -> L, th1 -> \\mathrm{th}_{1}, a_b -> a_{b}."""
    if name.startswith("d_"):
        inner = latex_name(name[2:])
        base, _, sub = inner.partition("_")
        return rf"\dot{{{base}}}" + (f"_{sub}" if sub else "")
    if "_" in name:
        base, sub = name.split("_", 1)
        return f"{latex_name(base)}_{{{sub.replace('_', ',')}}}"
    base, digits = re.fullmatch(r"(.*?)(\d*)", name).groups()
    base = base or digits
    if base in greek_letters_set or base in CAPITAL_GREEK:
        base = "\\" + base
    elif len(base) > 1:
        base = rf"\mathrm{{{base}}}"
    return base + (f"_{{{digits}}}" if digits and base != digits else "")


def inertial_latex_name(name: str) -> str:
    """m1 -> m_{1}, mx1 -> m_{x,1}, Iyy4 -> I_{yy,4}: the parameter names as printed in Iriarte et al. (2017)."""
    kind, label = INERTIAL.fullmatch(name).groups()
    label = label if label.isdigit() else rf"\mathrm{{{label}}}"
    return f"{kind[0]}_{{{kind[1:] + ',' if len(kind) > 1 else ''}{label}}}"


def latex_symbol_names(eom: EquationsOfMotion, cse: CommonSubexpressions) -> dict[sympy.Symbol, str]:
    names = {s: latex_name(s.name) for s in eom.coordinates + eom.velocities + eom.geometric}
    names |= {s: inertial_latex_name(s.name) for s in eom.inertial}
    for block in cse.blocks.values():
        for t, _ in block.temporaries:
            names[t] = f"t^{{{PREFIX[block.name]}}}_{{{t.name[2:]}}}"
    return names


def entry_label(block: Block, i: int, j: int) -> str:
    base = LATEX_NAME[block.name]
    if block.shape[1] == 1:
        return f"{base}_{{{i + 1}}}"
    return f"\\left({base}\\right)_{{{i + 1},{j + 1}}}" if "_" in base else f"{base}_{{{i + 1},{j + 1}}}"


def latex_block(block: Block, names: dict) -> list[str]:
    def tex(expr):
        return sympy.latex(expr, symbol_names=names)

    lines = [
        f"% {block.name}: {len(block.temporaries)} temporaries, {block.ops_after} operations after CSE",
        r"\begin{align*}",
    ]
    rows = [f"  {names[t]} &= {tex(e)}" for t, e in block.temporaries]
    rows += [
        f"  {entry_label(block, i, j)} &= {tex(e)}" for (i, j), e in zip(block.entries, block.expressions, strict=True)
    ]
    if not rows:
        rows = [f"  {LATEX_NAME[block.name]} &= 0"]
    lines += [" \\\\\n".join(rows), r"\end{align*}"]
    return lines


def latex_fragment(eom: EquationsOfMotion, cse: CommonSubexpressions) -> str:
    """A .tex fragment (needs amsmath): the temporaries and the non-zero entries of M, c, g (and Φ_q, γ);
    M is symmetric and only its upper triangle is listed."""
    names = latex_symbol_names(eom, cse)
    lines = [
        f"% Equations of motion of {comment_text(eom.model_name)}: M(q) qdd + c(q, qd) + g(q) = tau",
        *(f"% {k}: {comment_text(v)}" for k, v in eom.provenance.items()),
        r"% long entries: \allowdisplaybreaks in the preamble lets the align* blocks break across pages",
    ]
    equation = r"M(q)\,\ddot{q} + c(q,\dot{q}) + g(q) = \tau"
    if eom.closed:
        equation = r"M\,\ddot{q} + c + g = \tau + \Phi_{q}^{T}\lambda, \quad \Phi_{q}\,\ddot{q} = \gamma"
        lines += [
            r"\noindent Closed loop: the equations projected on the independent coordinates need "
            r"$R = \partial q / \partial q_{\mathrm{ind}}$, which has no closed form in general; "
            r"given are the tree equations with the constraint Jacobian."
        ]
    lines += [r"\[ " + equation + r" \]"]
    for block in cse.blocks.values():
        lines += latex_block(block, names)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- Python
def python_function(block: Block, eom: EquationsOfMotion, printer: NumPyPrinter) -> list[str]:
    """def name(q[, qd], params=None): entries computed over the leading batch axes of q."""
    exprs = [e for _, e in block.temporaries] + list(block.expressions)
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    lines = [
        f"def {block.name}({SIGNATURE[block.name]}, params=None):",
        f'    """{DOC[block.name]}, for q (and qd) of shape (..., n)."""',
        "    _q = numpy.asarray(q, dtype=float)",
    ]
    if "qd" in SIGNATURE[block.name]:
        lines.append("    _qd = numpy.asarray(qd, dtype=float)")
    lines.append("    _p = _parameters(params)")
    lines += [f"    {s.name} = _q[..., {k}]" for k, s in enumerate(eom.coordinates) if s in used]
    lines += [f"    {s.name} = _qd[..., {k}]" for k, s in enumerate(eom.velocities) if s in used]
    lines += [f'    {s.name} = _p["{s.name}"]' for s in eom.geometric + eom.inertial if s in used]
    lines += [f"    {t.name} = {printer.doprint(e)}" for t, e in block.temporaries]
    lines.append(f"    _out = numpy.zeros(_q.shape[:-1] + {block.shape if block.shape[1] > 1 else block.shape[:1]})")
    for (i, j), e in zip(block.entries, block.expressions, strict=True):
        index = f"{i}, {j}" if block.shape[1] > 1 else f"{i}"
        lines.append(f"    _out[..., {index}] = {printer.doprint(e)}")
        if block.symmetric and i != j:
            lines.append(f"    _out[..., {j}, {i}] = _out[..., {i}, {j}]")
    return [*lines, "    return _out", "", ""]


def python_module(eom: EquationsOfMotion, cse: CommonSubexpressions) -> str:
    """Source of a module with mass_matrix(q, params=None), bias(q, qd, params=None), gravity(q, params=None)
    (and constraint_jacobian, constraint_rhs for closed loops); `params` overrides the document's values
    in PARAMETERS; q and qd may carry leading batch axes."""
    printer = NumPyPrinter()
    docstring = "\n".join(
        [
            f"Equations of motion of {eom.model_name}: M(q) qdd + c(q, qd) + g(q) = tau.",
            "",
            "Generated by MB Studio; do not edit.",
            *(f"{k}: {v}" for k, v in eom.provenance.items()),
            *eom.notes,
        ]
    )
    header = [
        repr(docstring),  # free text from the model enters the module only as a string literal
        "",
        "import numpy",
        "",
        f"COORDINATES = {[s.name for s in eom.coordinates]!r}",
        f"PARAMETERS = {eom.values!r}",
        "",
        "",
        "def _parameters(params):",
        '    """The document\'s values, overridden by `params`."""',
        "    return PARAMETERS if params is None else {**PARAMETERS, **params}",
        "",
        "",
    ]
    body = [line for block in cse.blocks.values() for line in python_function(block, eom, printer)]
    return "\n".join(header + body).rstrip() + "\n"
