"""Base inertial parameters by the symbolic method of Ros et al. (Iriarte et al. 2017, section 4 and Appendix A).

Two kinds of directions in the 10·nb-dimensional parameter space leave the Lagrangian unchanged (up to a
constant), so each is an exact null-space vector of the observation matrix W:

- parameters without effect on the kinetics (section 4.2), from what each body's motion relative to the
  ground keeps fixed (`ground_motion`): Ω = 0, Ω along a fixed axis, points at rest, gravity along the axis;
- multipole transfers across joints (section 4.3): a monopole at a point both bodies share, a dipole along
  a revolute axis, the quadrupole E − a aᵀ across revolute, cylindrical and planar joints, every quadrupole
  across a prismatic joint, everything across a fixed joint; from the ground, the monopole at a point at
  rest; and between bodies that always turn together (found at random assembled states), every quadrupole,
  plus the monopole and dipoles when they move as translated copies (a parallelogram's opposite rods).

Each direction eliminates one parameter: the directions are brought to reduced echelon form with that
parameter as pivot (a transfer followed by another composes, as in Appendix A: the mass of body 7 goes to
body 1 and with it to the hub), and the base parameters are φ_b = φ1 + β φ2 with β = −(pivot columns).
The result depends only on the span of the directions and on which parameters are eliminated; the default
choice follows the paper's practice (donor's mass, dipole along the axis, the last axial moment; a body's
second moment when its mass moves on to another body), or the user gives the list or a priority order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy

from ..kinematics.geometry import Geometry
from ..kinematics.mechanism import Mechanism
from ..model.document import GROUND, INERTIA_NAMES, Joint, Model, body_key
from ..numerics.backends import Float64, Symbolic
from . import multipoles as mp
from .ground_motion import GroundMotion, ground_facts, is_zero, joint_sides, observed_facts
from .loop_evidence import DIGITS, SCREEN, LoopEvidence, lagrangian_residuals, loop_evidence
from .motion_copies import motion_copies

MONOPOLE_JOINTS = ("revolute", "ball", "spherical", "universal", "fixed")


@dataclass
class Direction:
    """A change of the inertial parameters that leaves the Lagrangian unchanged."""

    condition: int  # the condition of Iriarte et al. (2017), section 4.2 (no effect) or 4.3 (transfer)
    multipole: str  # what is added or moved, in words
    bodies: tuple[str, ...]  # (body,) for a parameter without effect; (donor, acceptor) for a transfer
    joint: str | None  # the joint a transfer crosses
    vector: dict[str, sympy.Expr]  # non-zero components by inertial parameter name
    eliminates: str | None = None  # the parameter it eliminates; None when implied by earlier directions
    preferred: tuple[str, ...] = field(default=(), repr=False)  # default elimination candidates, in order


@dataclass(frozen=True)
class LagrangianCheck:
    """How far the directions found are from leaving the Lagrangian unchanged: the largest change of T and
    of V's variation along any of them, relative to the energies, in float64 and at `digits` digits, at
    random assembled states; `rejected` directions failed and were left out (with a note)."""

    float64: float
    digits: int
    vp: float | None
    rejected: int

    def to_json(self) -> dict:
        return {"float64": self.float64, "digits": self.digits, "vp": self.vp, "rejected": self.rejected}


@dataclass
class SymbolicBaseParameters:
    names: list[str]  # all inertial parameter names, document order
    no_effect: list[Direction]
    transfers: list[Direction]
    redundant: list[Direction]  # found, but in the span of the directions before them
    eliminated: list[str]
    base: dict[str, sympy.Expr]  # kept parameter -> φ_b expression (φ_i + Σ β φ_eliminated)
    beta: dict[str, dict[str, sympy.Expr]]  # kept parameter -> {eliminated parameter: coefficient}
    notes: list[str]
    seconds: float
    check: LagrangianCheck | None = None  # every direction found, tried on the energies (`verify_directions`)

    @property
    def rank(self) -> int:
        return len(self.base)

    def directions(self) -> list[Direction]:
        return self.no_effect + self.transfers

    def null_space(self) -> sympy.Matrix:
        """The directions as columns (10·nb, number of eliminated parameters)."""
        out = sympy.zeros(len(self.names), len(self.directions()))
        for j, d in enumerate(self.directions()):
            for name, value in d.vector.items():
                out[self.names.index(name), j] = value
        return out


def symbolic_base_parameters(
    source: Mechanism | Model, eliminate: Sequence[str] | None = None, priority: Sequence[str] | None = None
) -> SymbolicBaseParameters:
    """Parameters without effect, multipole transfers and base parameters of a mechanism, exactly.

    `eliminate`: the parameters to eliminate (as many as there are independent directions); `priority`: an
    order of preference for eliminated parameters. By default each direction eliminates the parameter the
    paper would (Tables 3 and 4 for the SLA suspension)."""
    start = time.perf_counter()
    model = source.model if isinstance(source, Mechanism) else source
    names = model.inertial_parameter_names()
    unknown = sorted((set(eliminate or ()) | set(priority or ())) - set(names))
    if unknown:
        raise ValueError(
            f"{unknown} are not inertial parameter names; they are {names[0]}, {names[1]}, ..., {names[-1]}"
        )
    geometry = Geometry(model, Symbolic())
    values = {geometry.symbols[p.name]: p.value for p in model.parameters}
    gravity = sympy.Matrix(list(geometry.vector(model.gravity)))  # as numbers: the tests below compare with 0
    float_mech = source if isinstance(source, Mechanism) and isinstance(source.backend, Float64) else Mechanism(model)
    evidence = loop_evidence(float_mech)
    notes: list[str] = list(evidence.notes)
    facts = ground_facts(model, geometry, values)
    facts = ground_facts(model, geometry, values, observed_facts(evidence, facts, geometry, notes))
    donors = mass_donors(model)
    joint_names = {j.name for j in model.joints}
    no_effect, ground_transfers, composite = [], [], []
    for fact in facts:
        found = without_effect(fact, gravity, values, donors)
        no_effect += [d for d in found if d.condition != 1 or len(d.vector) == 1]
        for d in found:
            if d.condition == 1 and len(d.vector) > 1 and len(fact.source) == 1 and fact.source[0] in joint_names:
                d.joint, d.bodies = fact.source[0], (GROUND, fact.body)  # from the ground across this joint
                ground_transfers.append(d)
            elif d.condition == 1 and len(d.vector) > 1:
                composite.append(d)
    moving = [d for joint in model.joints for d in joint_transfers(model, geometry, joint, notes)]
    moving += copy_transfers(evidence, geometry, notes)
    if model.couplings:
        notes.append(
            f"couplings ({', '.join(c.name for c in model.couplings)}): the method transfers multipoles across "
            "joints and does not see the regroupings a coupling makes (a gear pair's axial moments), so its rank "
            "can exceed the numerical routes'"
        )
    candidates, check = verify_directions(evidence, names, no_effect + moving + ground_transfers + composite, notes)
    kept_directions, redundant, pivots = reduce_directions(candidates, names, eliminate, priority, values)
    if eliminate is not None and len(eliminate) != len(pivots):
        raise ValueError(
            f"{len(pivots)} independent directions were found, so {len(pivots)} parameters must be "
            f"eliminated; {len(eliminate)} were given"
        )
    base, beta = base_expressions(names, pivots)
    transfer_ids = {id(d) for d in moving + ground_transfers}
    return SymbolicBaseParameters(
        names,
        [d for d in kept_directions if id(d) not in transfer_ids],
        [d for d in kept_directions if id(d) in transfer_ids],
        redundant,
        [p for p, _ in pivots],
        base,
        beta,
        notes,
        time.perf_counter() - start,
        check,
    )


def verify_directions(
    evidence: LoopEvidence, names: list[str], candidates: list[Direction], notes: list[str]
) -> tuple[list[Direction], LagrangianCheck]:
    """Every direction tried on the kinetic and potential energy at random assembled states, in float64 and
    at DIGITS digits (`loop_evidence.lagrangian_residuals`): those that change the Lagrangian are left out,
    with a note. None should: this guards the rules, those read from the loops above all, against a case
    they were not written for."""
    changes = lagrangian_residuals(evidence, names, [d.vector for d in candidates])
    kept = []
    for d, (low, high) in zip(candidates, changes, strict=True):
        if evidence.unchanged(low, high):
            kept.append(d)
        else:
            in_vp = low <= SCREEN and high is not None  # double precision passed: DIGITS digits rejected it
            change, where = (high, f"at {DIGITS} digits") if in_vp else (low, "in double precision")
            notes.append(
                f"the direction '{d.multipole}' ({', '.join(d.bodies)}) changes the Lagrangian by {change:.2g} of "
                f"the energies at random states {where}: left out"
            )
    highs = [h for _, h in changes if h is not None]
    check = LagrangianCheck(
        max((c for c, _ in changes), default=0.0),
        evidence.vp.digits if evidence.vp else 16,
        max(highs, default=0.0) if evidence.vp else None,
        len(candidates) - len(kept),
    )
    return kept, check


# ---------------------------------------------------------------------------------------- directions
def parameter_names(body: str) -> list[str]:
    return [f"{n}{body}" for n in INERTIA_NAMES]


def body_vector(body: str, values10: Sequence, sign: int = 1) -> dict[str, sympy.Expr]:
    return {n: sign * sympy.sympify(v) for n, v in zip(parameter_names(body), values10, strict=True) if v != 0}


def combined(*parts: dict[str, sympy.Expr]) -> dict[str, sympy.Expr]:
    out: dict[str, sympy.Expr] = {}
    for part in parts:
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v != 0}


def largest_first(body: str, first: Sequence[int], a: sympy.Matrix, values: dict) -> tuple[str, ...]:
    """Names of body parameters `first` (indices of φ), ordered by the size of a's matching component."""
    order = sorted(range(3), key=lambda k: -abs(float(a[k].subs(values))))
    return tuple(parameter_names(body)[first[k]] for k in order)


def mass_donors(model: Model) -> set[str]:
    """Bodies whose mass moves on to another moving body (their ground monopole eliminates a moment)."""
    return {
        donor_and_acceptor(model, j)[0]
        for j in model.joints
        if j.type in MONOPOLE_JOINTS and GROUND not in (body_key(j.parent), body_key(j.child))
    }


def donor_and_acceptor(model: Model, joint: Joint) -> tuple[str, str]:
    """The paper's direction of transfer: towards the body with more joints (the hub), else to the parent."""

    def degree(label: str) -> int:
        return sum(label in (body_key(j.parent), body_key(j.child)) for j in model.joints)

    parent, child = body_key(joint.parent), body_key(joint.child)
    return (parent, child) if degree(parent) < degree(child) else (child, parent)


def without_effect(fact: GroundMotion, gravity: sympy.Matrix, values: dict, donors: set[str]) -> list[Direction]:
    """Directions of section 4.2 for one fact: conditions 1 (monopole at rest), 2 (dipole along Ω),
    4 (any dipole where Ω = 0 or, at a point at rest or sliding along Ω, with g·d constant), 5 (quadrupoles
    normal to Ω) and 6 (any quadrupole where Ω = 0)."""
    b, names = fact.body, parameter_names(fact.body)
    out: list[Direction] = []

    def add(condition: int, multipole: str, vec: Sequence, preferred: Sequence[str]) -> None:
        out.append(Direction(condition, multipole, (b,), None, body_vector(b, vec), None, tuple(preferred)))

    def monopole_at(c: sympy.Matrix) -> None:
        at_origin = is_zero(values, *c)
        vec = mp.monopole([0, 0, 0] if at_origin else c)
        moments = [names[i] for i in mp.DIAGONAL]
        add(
            1,
            "monopole at the origin" if at_origin else f"monopole at {tuple(c)}",
            vec,
            moments + [names[0]] if b in donors else [names[0]] + moments,
        )

    if fact.kind in ("fixed", "translation"):
        if fact.kind == "fixed":
            monopole_at(sympy.zeros(3, 1))
        for k in range(3):
            add(4, f"dipole along {'xyz'[k]}", mp.dipole(sympy.eye(3)[:, k], [0, 0, 0]), [names[1 + k]])
        for k in range(6):
            add(6, f"quadrupole {INERTIA_NAMES[4 + k]}", mp.quadrupole(mp.unit_tensor(k)), [names[4 + k]])
    elif fact.kind == "axis":
        a = fact.axis
        add(2, f"dipole along the axis {tuple(a)}", mp.dipole(a, [0, 0, 0]), largest_first(b, (1, 2, 3), a, values))
        for q in mp.perpendicular_quadrupoles(a, values):
            vec = mp.quadrupole(q)
            own = [n for n, v in zip(names, vec, strict=True) if v == 1]
            add(5, f"quadrupole normal to the axis {tuple(a)}", vec, own)
        on = fact.point if fact.point is not None else fact.line
        if on is not None:
            c = on - on.dot(a) * a  # the axis point nearest the origin
            if fact.point is not None:
                monopole_at(c)
            # at a point of the axis line, at rest or sliding along it, Ω × v = 0: a dipole there acts through
            # gravity alone, not at all when g ∥ axis (or g = 0)
            if fact.world_axis is not None and is_zero(values, *gravity.cross(fact.world_axis)):
                for d in mp.perpendicular_directions(a, values):
                    add(
                        4,
                        f"dipole {tuple(d)} normal to the axis, which gravity is parallel to",
                        mp.dipole(d, c),
                        largest_first(b, (1, 2, 3), d, values),
                    )
    elif fact.kind == "point":
        monopole_at(fact.point)
        if is_zero(values, *gravity):
            for k in range(3):
                add(
                    4,
                    f"dipole along {'xyz'[k]} at the fixed point",
                    mp.dipole(sympy.eye(3)[:, k], fact.point),
                    [names[1 + k]],
                )
    return out


def transfer(
    condition: int,
    multipole: str,
    donor: str,
    acceptor: str,
    joint: str | None,
    vec_acceptor: Sequence,
    vec_donor: Sequence,
    preferred: Sequence[str],
) -> Direction:
    """Moving a multipole: it is added to the acceptor (`vec_acceptor`, its axes) and removed from the donor."""
    vector = combined(body_vector(acceptor, vec_acceptor), body_vector(donor, vec_donor, -1))
    return Direction(condition, multipole, (donor, acceptor), joint, vector, None, tuple(preferred))


def joint_transfers(model: Model, geometry: Geometry, joint: Joint, notes: list[str]) -> list[Direction]:
    """Multipole transfers of section 4.3 across a joint between two moving bodies, donor to acceptor."""
    parent, child = body_key(joint.parent), body_key(joint.child)
    if GROUND in (parent, child) or joint.type in ("free", "free_euler"):
        return []  # ground joints: their monopole is found as a point at rest; a free joint moves nothing
    donor, acceptor = donor_and_acceptor(model, joint)
    to_child, to_parent = joint_sides(model, geometry, joint)
    fd, fa = (
        (to_child.near_frame, to_parent.near_frame) if donor == child else (to_parent.near_frame, to_child.near_frame)
    )
    d_names = parameter_names(donor)
    rotation = fa.rotation * fd.rotation.T  # donor axes -> acceptor axes (joint frames coincide at rest)
    za, zd = fa.rotation[:, 2], fd.rotation[:, 2]
    out: list[Direction] = []

    def move(condition: int, multipole: str, vec_a: Sequence, vec_d: Sequence, preferred: Sequence[str]) -> None:
        out.append(transfer(condition, multipole, donor, acceptor, joint.name, vec_a, vec_d, preferred))

    if joint.type in MONOPOLE_JOINTS:
        move(1, "monopole at the joint centre", mp.monopole(fa.origin), mp.monopole(fd.origin), [d_names[0]])
    if joint.type == "revolute":
        values = {geometry.symbols[p.name]: p.value for p in model.parameters}
        move(
            2,
            "dipole along the joint axis",
            mp.dipole(za, fa.origin),
            mp.dipole(zd, fd.origin),
            largest_first(donor, (1, 2, 3), zd, values),
        )
    if joint.type in ("revolute", "cylindrical", "planar"):
        vec_d = mp.quadrupole(mp.axial_quadrupole(zd))
        move(
            5,
            "quadrupole E - a a^T about the joint axis",
            mp.quadrupole(mp.axial_quadrupole(za)),
            vec_d,
            [d_names[i] for i in reversed(mp.DIAGONAL) if vec_d[i] != 0],
        )  # Khalil's YY for a z axis
    if joint.type == "fixed":
        for k in range(3):
            e = sympy.eye(3)[:, k]
            move(
                4,
                f"dipole along the donor's {'xyz'[k]} axis",
                mp.dipole(rotation * e, fa.origin),
                mp.dipole(e, fd.origin),
                [d_names[1 + k]],
            )
    if joint.type in ("prismatic", "fixed"):
        for k in range(6):
            q = mp.unit_tensor(k)
            move(
                6,
                f"quadrupole {INERTIA_NAMES[4 + k]} of the donor",
                mp.quadrupole(rotation * q * rotation.T),
                mp.quadrupole(q),
                [d_names[4 + k]],
            )
    if joint.type in ("cylindrical", "planar"):
        notes.append(
            f"joint '{joint.name}' ({joint.type}): only the quadrupole about its axis is transferred; "
            "no monopole or dipole transfer holds for it in general"
        )
    return out


def copy_transfers(evidence: LoopEvidence, geometry: Geometry, notes: list[str]) -> list[Direction]:
    """Transfers between bodies whose motions are copies (`motion_copies`) but share no prismatic or fixed
    joint: every quadrupole (condition 6, turned by the constant rotation between them), and where points of
    corresponding velocities exist (a parallelogram's opposite rods, a symmetric trapezoid's mirror-image rods)
    the monopole and the three dipoles there (conditions 1 and 4)."""
    model = geometry.model
    joined = {
        frozenset((body_key(j.parent), body_key(j.child))) for j in model.joints if j.type in ("prismatic", "fixed")
    }
    out = []
    for copy in motion_copies(evidence, geometry, notes, joined):
        donor, acceptor = sorted((copy.first, copy.second), key=lambda x: (-len(joints_of(model, x)), x))[::-1]
        forward = donor == copy.first
        rotation = copy.rotation if forward else copy.rotation.T  # donor axes -> acceptor axes
        carried = copy.point_map if forward else copy.point_map.T
        names = parameter_names(donor)
        kind = "mirror image" if copy.mirrored else "copy"
        for k in range(6):
            q = mp.unit_tensor(k)
            out.append(
                transfer(
                    6,
                    f"quadrupole {INERTIA_NAMES[4 + k]} of the donor (angular velocities related by a rotation)",
                    donor,
                    acceptor,
                    None,
                    mp.quadrupole(rotation * q * rotation.T),
                    mp.quadrupole(q),
                    [names[4 + k]],
                )
            )
        if copy.points is None:
            continue
        xd, xa = copy.points if forward else copy.points[::-1]
        out.append(
            transfer(
                1,
                f"monopole at points of corresponding velocities ({kind})",
                donor,
                acceptor,
                None,
                mp.monopole(xa),
                mp.monopole(xd),
                [names[0]],
            )
        )
        for k in range(3):
            e = sympy.eye(3)[:, k]
            out.append(
                transfer(
                    4,
                    f"dipole along the donor's {'xyz'[k]} axis at points of corresponding velocities ({kind})",
                    donor,
                    acceptor,
                    None,
                    mp.dipole(carried * e, xa),
                    mp.dipole(e, xd),
                    [names[1 + k]],
                )
            )
    return out


def joints_of(model: Model, label: str) -> list:
    return [j for j in model.joints if label in (body_key(j.parent), body_key(j.child))]


# ---------------------------------------------------------------------------------------- elimination
def simplified(e: sympy.Expr, values: dict) -> sympy.Expr:
    """Exact simplification; expressions with radicals that vanish numerically get the full simplify."""
    e = sympy.cancel(e)
    radical = any(not x.exp.is_integer for x in e.atoms(sympy.Pow))
    if e != 0 and radical and is_zero(values, e):
        e = sympy.simplify(e)
    return e


def reduce_directions(
    candidates: list[Direction],
    names: list[str],
    eliminate: Sequence[str] | None,
    priority: Sequence[str] | None,
    values: dict,
) -> tuple[list[Direction], list[Direction], list[tuple[str, dict[str, sympy.Expr]]]]:
    """Gauss-Jordan over the directions in order: each is reduced by the pivots found so far; a zero
    remainder is redundant, otherwise it eliminates its first candidate parameter with a non-zero entry.
    Returns the independent directions, the redundant ones, and the pivots [(parameter, reduced vector)]
    in reduced echelon form (each vector is 1 on its own parameter and 0 on every other pivot)."""
    pivots: dict[str, dict[str, sympy.Expr]] = {}
    kept, redundant = [], []
    for d in candidates:
        v = dict(d.vector)
        for p, vec in pivots.items():  # one pass: a pivot vector is 0 on every other pivot
            f = v.get(p, 0)
            if f != 0:
                v = combined(v, {k: -f * x for k, x in vec.items()})
        v = {k: s for k, x in v.items() if (s := simplified(x, values)) != 0}
        if not v:
            redundant.append(d)
            continue
        p = choose_pivot(d, v, names, pivots, eliminate, priority)
        v = {k: simplified(x / v[p], values) for k, x in v.items()}
        for q, vec in pivots.items():
            f = vec.get(p, 0)
            if f != 0:
                pivots[q] = {
                    k: s
                    for k, x in combined(vec, {k: -f * y for k, y in v.items()}).items()
                    if (s := simplified(x, values)) != 0
                }
        pivots[p] = v
        d.eliminates = p
        kept.append(d)
    return kept, redundant, list(pivots.items())


def choose_pivot(
    d: Direction,
    v: dict,
    names: list[str],
    pivots: dict,
    eliminate: Sequence[str] | None,
    priority: Sequence[str] | None,
) -> str:
    """The parameter a reduced direction eliminates: the user's list, else priority, preferred, any."""
    if eliminate is not None:
        if all(n in pivots for n in eliminate):
            raise ValueError(
                f"more independent directions were found than the {len(eliminate)} parameters given: "
                "as many parameters as directions must be eliminated"
            )
        allowed = [n for n in eliminate if n in v and n not in pivots]
        if not allowed:
            raise ValueError(
                f"the direction '{d.multipole}' ({', '.join(d.bodies)}"
                f"{'' if d.joint is None else ', joint ' + repr(d.joint)}) has no component on the "
                f"parameters left to eliminate, {[n for n in eliminate if n not in pivots]}: "
                "choose parameters it changes"
            )
        return allowed[0]
    order = [*(priority or ()), *d.preferred, *names]
    return next(n for n in order if n in v and n not in pivots)


def base_expressions(
    names: list[str], pivots: list[tuple[str, dict]]
) -> tuple[dict[str, sympy.Expr], dict[str, dict[str, sympy.Expr]]]:
    """φ_b,i = φ_i − Σ_k φ_{p_k} v_k[i] for each kept parameter i (v_k the reduced pivot vectors)."""
    phi = {n: sympy.Symbol(n, real=True) for n in names}
    eliminated = {p for p, _ in pivots}
    beta = {n: {} for n in names if n not in eliminated}
    for p, vec in pivots:
        for k, x in vec.items():
            if k != p:
                beta[k][p] = sympy.factor(-x)
    base = {n: phi[n] + sum((c * phi[p] for p, c in beta[n].items()), sympy.Integer(0)) for n in beta}
    return base, beta
