"""Inertia multipoles (Iriarte et al. 2017, section 4.1) as changes of one body's ten inertial parameters.

A body's parameters φ = (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) are taken about its frame origin in its
axes, with the tensor entries of docs/architecture.md, conventions (Ixy = −∫xy dm). Adding a multipole at a point c of
the body changes them by:

- monopole (a unit point mass at c):  (1, c, |c|²E − c cᵀ)
- dipole d at c (±masses, first moment d):  (0, d, 2 (c·d) E − (c dᵀ + d cᵀ))
- quadrupole Q (a symmetric tensor; its position is irrelevant):  (0, 0, Q)

Vectors are lists of 10 sympy expressions; every function is exact in the geometric symbols.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

# (row, column) of the inertia tensor for the six second-moment parameters Ixx, Ixy, Ixz, Iyy, Iyz, Izz.
TENSOR_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
DIAGONAL = (4, 7, 9)  # indices of Ixx, Iyy, Izz in φ


def tensor_parameters(t: sympy.Matrix) -> list[sympy.Expr]:
    """The six second-moment parameters of a symmetric 3x3 tensor."""
    return [t[i, j] for i, j in TENSOR_ENTRIES]


def unit_tensor(k: int) -> sympy.Matrix:
    """The symmetric tensor whose parameter k (0..5 for Ixx..Izz) is 1 and the others 0."""
    i, j = TENSOR_ENTRIES[k]
    t = sympy.zeros(3, 3)
    t[i, j] = t[j, i] = 1
    return t


def monopole(c: Sequence) -> list[sympy.Expr]:
    c = sympy.Matrix(c)
    return [sympy.Integer(1), *c, *tensor_parameters((c.T * c)[0] * sympy.eye(3) - c * c.T)]


def dipole(d: Sequence, c: Sequence) -> list[sympy.Expr]:
    c, d = sympy.Matrix(c), sympy.Matrix(d)
    t = 2 * (c.T * d)[0] * sympy.eye(3) - (c * d.T + d * c.T)
    return [sympy.Integer(0), *d, *tensor_parameters(t)]


def quadrupole(q: sympy.Matrix) -> list[sympy.Expr]:
    return [sympy.Integer(0)] * 4 + tensor_parameters(q)


def axial_quadrupole(a: Sequence) -> sympy.Matrix:
    """E − a aᵀ for a unit axis a: the one quadrupole that is constant in two bodies turning about a and
    leaves Ω·(q Ω) unchanged when Ω changes along a (Iriarte et al. 2017, section 4.3, condition 5)."""
    a = sympy.Matrix(a)
    return sympy.eye(3) - a * a.T


def _largest(a: sympy.Matrix, values: dict) -> int:
    """Index of a's largest component at the parameter values (a pivot that is surely non-zero)."""
    return max(range(3), key=lambda k: abs(float(a[k].subs(values))))


def perpendicular_quadrupoles(a: Sequence, values: dict) -> list[sympy.Matrix]:
    """A basis of the five symmetric tensors Q with aᵀ Q a = 0 (section 4.2, condition 5): each unit tensor
    minus the multiple of the diagonal entry along a's largest component that cancels aᵀ Q a."""
    a = sympy.Matrix(a)
    p = _largest(a, values)
    kept = TENSOR_ENTRIES.index((p, p))
    out = []
    for k in range(6):
        if k != kept:
            t = unit_tensor(k)
            out.append(t - (a.T * t * a)[0] / a[p] ** 2 * unit_tensor(kept))
    return out


def perpendicular_directions(a: Sequence, values: dict) -> list[sympy.Matrix]:
    """Two directions spanning the plane normal to the unit vector a: e_k − a_k a for the two axes other
    than a's largest component."""
    a = sympy.Matrix(a)
    p = _largest(a, values)
    return [sympy.eye(3)[:, k] - a[k] * a for k in range(3) if k != p]
