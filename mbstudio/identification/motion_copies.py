"""Pairs of bodies whose motions are copies of each other, between which multipoles move freely.

Two bodies a and b whose angular velocities are related by a constant rotation A (ground axes), ω_b = A ω_a,
have Ω_b = P Ω_a in body axes with P = R_bᵀ A R_a constant: every quadrupole q of a moves to b as P q Pᵀ without
changing ½ Ωᵀ q Ω (Ros et al., section 4.3, condition 6, which has A = I). When moreover points x_a of a and x_b
of b move as v_b(x_b) = M v_a(x_a), with M = A (a translated copy) or M = −A (a mirror image: M a reflection), the
whole motion of b is that of a carried by the isometry M. A monopole at x_a then moves to x_b, and a dipole d at
x_a to N d at x_b (N = R_bᵀ M R_a, a's body axes to b's), since |M v| = |v|; gravity's work is unchanged when
M g = g. The opposite rods of a parallelogram are translated copies (A = M = I); the two rods of IRSBot-2's
symmetric distal trapezoids are mirror images (A a half turn about the normal of the limb's plane of symmetry,
M = −A the reflection in that plane).

Candidates are exact: A is the identity or a half turn about an axis of the ground's frames, P is made of 0 and
±1 (bodies built alike) or comes from the exact tree at the document's initial configuration, and the points are
the bodies' joint centres and named points. Each relation is decided in two precisions (`loop_evidence`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from ..kinematics.geometry import Geometry
from ..kinematics.tree import KinematicTree
from ..model.document import GROUND, body_key
from ..numerics.backends import Symbolic
from ..numerics.spatial import matvec
from .ground_motion import body_points, exact_frame, is_zero, solvable
from .loop_evidence import SCREEN, LoopEvidence, Motions, vanishing_bound


@dataclass(frozen=True)
class MotionCopy:
    """Body `second` moves as a copy of body `first`."""

    first: str
    second: str
    rotation: sympy.Matrix  # P: Ω_second = P Ω_first (first's body axes to second's), exact
    points: tuple[sympy.Matrix, sympy.Matrix] | None  # x_first, x_second: v_second(x_second) = M v_first(x_first)
    mirrored: bool = False  # M = −A: the second is the first's mirror image (N = −P)

    @property
    def point_map(self) -> sympy.Matrix:
        """N: a dipole of the first (its axes) as the second carries it (its axes)."""
        return -self.rotation if self.mirrored else self.rotation


def motion_copies(
    evidence: LoopEvidence, geometry: Geometry, notes: list[str], skip: set[frozenset] = frozenset()
) -> list[MotionCopy]:
    """Every pair of turning bodies (not in `skip`) whose angular velocities are related by a constant
    rotation, with their points of corresponding velocities when they have some."""
    m = evidence.float64
    model = geometry.model
    turning = [
        b.label for b in model.bodies if max(np.abs(m.bodies[b.label].w).ravel(), default=0) > SCREEN * m.angular_scale
    ]
    turns = half_turns(geometry, m)
    found = []
    for i, a in enumerate(turning):
        for b in turning[i + 1 :]:
            if frozenset((a, b)) in skip:
                continue
            turn = next((t for t in turns if _related(evidence, a, b, t)), None)
            if turn is not None:
                found.append((a, b, turn))
    out = []
    initial: dict = {}  # exact rotations at the initial coordinates, computed when first needed
    for a, b, turn in found:
        rotation = _rotation_between(evidence, geometry, a, b, turn, initial, notes)
        if rotation is None:
            continue
        if not _rotation_holds(evidence, a, b, rotation):
            notes.append(
                f"bodies {a} and {b} turn together, but their exact relative rotation could not be confirmed: "
                "their transfers are missing"
            )
            continue
        out.append(_with_points(evidence, geometry, a, b, turn, rotation, notes))
    return out


def _rotation_between(
    evidence: LoopEvidence, geometry: Geometry, a: str, b: str, turn: sympy.Matrix, initial: dict, notes: list[str]
) -> sympy.Matrix | None:
    """P = R_bᵀ A R_a, constant: its value at the first state closed at DIGITS digits, where each entry that is 0
    or ±1 to `vanishing_bound` is taken as that integer (bodies built alike: most are); any other entry comes from
    the exact tree at the document's initial coordinates, which must then close the loops
    (`LoopEvidence.initial_closes`). None, with a note, when they do not."""
    m = evidence.vp
    with m.backend.context():
        value = m.bodies[b].R[0].T @ m.matrix(turn) @ m.bodies[a].R[0]
    integers = _integers(value, m.accuracy)
    if all(x is not None for x in integers.values()):
        return sympy.Matrix(3, 3, lambda i, j: integers[i, j])
    if "R" not in initial:
        initial["R"] = _initial_rotations(evidence, geometry)
    if initial["R"] is None:
        notes.append(
            f"bodies {a} and {b} move as copies, but their relative rotation is not made of 0 and ±1 and the "
            "initial coordinates do not close the loops, so it is not known exactly: their transfers are missing"
        )
        return None
    exact = initial["R"][b].T * turn * initial["R"][a]
    return sympy.Matrix(3, 3, lambda i, j: sympy.simplify(exact[i, j]) if integers[i, j] is None else integers[i, j])


def _integers(value: np.ndarray, accuracy: float) -> dict:
    """(i, j) -> 0, 1 or −1 where the entry is that integer to the accuracy of the state (`vanishing_bound`),
    else None: the product of two cosines of right angles written to 11 decimals (2e-23) is not 0."""
    bound = vanishing_bound(accuracy)
    return {
        (i, j): next((sympy.Integer(k) for k in (0, 1, -1) if abs(value[i, j] - k) <= bound), None)
        for i in range(3)
        for j in range(3)
    }


def half_turns(geometry: Geometry, m: Motions) -> list[sympy.Matrix]:
    """The identity, then the half turns 2 n nᵀ − E about the axes n of the ground and of the frames that
    joints to the ground have on it (a machine's planes of symmetry are normal to such axes), each once."""
    model = geometry.model
    frames = [j.parent_frame for j in model.joints if body_key(j.parent) == GROUND]
    frames += [j.child_frame for j in model.joints if body_key(j.child) == GROUND]
    axes = [sympy.eye(3)[:, k] for k in range(3)]
    for frame in frames:
        rotation = exact_frame(geometry.frame(model.ground, frame)).rotation
        axes += [rotation[:, k] for k in range(3)]
    out, seen = [sympy.eye(3)], [np.eye(3)]
    for n in axes:
        turn = 2 * n * n.T - sympy.eye(3)
        value = np.asarray(m.matrix(turn), dtype=float)
        if not any(np.abs(value - s).max() < SCREEN for s in seen):
            out.append(turn)
            seen.append(value)
    return out


def _related(evidence: LoopEvidence, a: str, b: str, turn: sympy.Matrix) -> bool:
    """ω_b ≡ A ω_a (ground axes)."""
    return evidence.holds(lambda m: m.world_w(b) - matvec(m.matrix(turn), m.world_w(a)))


def _rotation_holds(evidence: LoopEvidence, a: str, b: str, rotation: sympy.Matrix) -> bool:
    """Ω_b ≡ P Ω_a (body axes)."""
    return evidence.holds(lambda m: m.bodies[b].w - matvec(m.matrix(rotation), m.bodies[a].w))


def _initial_rotations(evidence: LoopEvidence, geometry: Geometry) -> dict[str, sympy.Matrix] | None:
    """Every body's exact rotation at the document's initial coordinates, or None when these do not close the
    loops (`LoopEvidence.initial_closes`)."""
    mech = evidence.mechanism
    if mech.partition.dependent and not evidence.initial_closes():
        return None
    tree = KinematicTree(geometry.model, Symbolic(), mech.topology)
    q0 = mech.tree.initial_coordinates()
    st = tree.motion(np.array([[sympy.nsimplify(x) for x in q0]], dtype=object))
    return {b.label: sympy.Matrix(st.R[tree.body_index(b.label)][0].tolist()) for b in geometry.model.bodies}


def _with_points(
    evidence: LoopEvidence,
    geometry: Geometry,
    a: str,
    b: str,
    turn: sympy.Matrix,
    rotation: sympy.Matrix,
    notes: list[str],
) -> MotionCopy:
    """The copy of a by b, with a pair of points of corresponding velocities (translated copy first, then
    mirror image) when one exists among the candidates and gravity's work allows the transfers."""
    gravity = sympy.Matrix(list(geometry.vector(geometry.model.gravity)))
    values = {geometry.symbols[p.name]: p.value for p in geometry.model.parameters}
    points_a, points_b = body_points(geometry, a), body_points(geometry, b)
    for mirrored in (False, True):
        isometry = -turn if mirrored else turn
        for xa in points_a:
            for xb in points_b:
                if _corresponding(evidence, a, b, xa, xb, isometry):
                    if not is_zero(values, *(isometry * gravity - gravity)):
                        notes.append(
                            f"bodies {a} and {b} move as copies, but the isometry between them moves gravity: "
                            "only their quadrupoles are transferred"
                        )
                        return MotionCopy(a, b, rotation, None)
                    return MotionCopy(a, b, rotation, (xa, xb), mirrored)
    if any(_has_corresponding_points(evidence.float64, a, b, rotation, sign) for sign in (1, -1)):
        notes.append(
            f"bodies {a} and {b} move as copies (points of corresponding velocities exist), but no joint centre "
            "or named point pairs up: the monopole and dipole transfers between them are missing, so up to 4 base "
            "parameters may be too many"
        )
    return MotionCopy(a, b, rotation, None)


def _corresponding(evidence: LoopEvidence, a: str, b: str, xa, xb, isometry: sympy.Matrix) -> bool:
    """v_b(x_b) ≡ M v_a(x_a) (ground axes)."""

    def residual(m: Motions):
        return m.point_velocity(b, m.vector(xb)) - matvec(m.matrix(isometry), m.point_velocity(a, m.vector(xa)))

    return evidence.holds(residual, "speed")


def _has_corresponding_points(m: Motions, a: str, b: str, rotation: sympy.Matrix, sign: int) -> bool:
    """v_b + Ω_b × c = ±P v_a (b's axes) for one constant c: points of corresponding velocities exist."""
    rotated = matvec(np.asarray(m.matrix(rotation), dtype=float), np.asarray(m.bodies[a].v, dtype=float))
    return solvable(m.bodies[b].w, sign * rotated - np.asarray(m.bodies[b].v, dtype=float))
