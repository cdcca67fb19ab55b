"""Motions the loops impose, and the symbolic directions that follow from them: facts decided
in two precisions (loop_evidence), bodies moving as copies or mirror images of each other (motion_copies), axes
whose points slide along them (ground_motion); each checked against the observation matrix in variable
precision (null_space_checks), not against the numbers of one sample."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.identification.ground_motion import ground_facts, observed_facts
from mbstudio.identification.loop_evidence import loop_evidence
from mbstudio.identification.motion_copies import motion_copies
from mbstudio.identification.symbolic_base import symbolic_base_parameters
from mbstudio.kinematics import Mechanism
from mbstudio.kinematics.geometry import Geometry
from mbstudio.model import dumps, loads
from mbstudio.numerics.backends import Symbolic

from .null_space_checks import S, assert_complete_at


def observed(model) -> list:
    geometry = Geometry(model, Symbolic())
    values = {geometry.symbols[p.name]: p.value for p in model.parameters}
    evidence = loop_evidence(Mechanism(model))
    return observed_facts(evidence, ground_facts(model, geometry, values), geometry, [])


# ---------------------------------------------------------------------------------------- IRSBot-2
@pytest.fixture(scope="module")
def irsbot2():
    model = samples.load("irsbot2")
    return model, symbolic_base_parameters(model)


def test_irsbot2_elbows_and_platform_only_translate_by_their_loops():
    facts = {(f.body, f.kind) for f in observed(samples.load("irsbot2")) if f.source == ("loop closure",)}
    assert {("2a", "translation"), ("2b", "translation"), ("P", "translation")} <= facts


def test_irsbot2_distal_rods_move_as_mirror_images_and_the_cranks_as_translated_copies():
    """Each limb's distal loop is a trapezoid symmetric about the limb's plane y = 0: its rods 4 and 5 move as
    mirror images in that plane (Ω5 = diag(1, −1, −1) Ω4 in their identical body axes), their origins corresponding
    points; the parallelogram's cranks 1 and 3 turn together as translated copies."""
    model = samples.load("irsbot2")
    geometry = Geometry(model, Symbolic())
    copies = {(c.first, c.second): c for c in motion_copies(loop_evidence(Mechanism(model)), geometry, [])}
    assert set(copies) == {("1a", "3a"), ("4a", "5a"), ("1b", "3b"), ("4b", "5b")}
    for limb in "ab":
        rods, cranks = copies[(f"4{limb}", f"5{limb}")], copies[(f"1{limb}", f"3{limb}")]
        assert rods.mirrored and rods.rotation == sympy.diag(1, -1, -1) and rods.point_map == sympy.diag(-1, 1, 1)
        assert rods.points == (sympy.zeros(3, 1), sympy.zeros(3, 1))
        assert not cranks.mirrored and cranks.rotation == sympy.eye(3)


def test_irsbot2_base_parameters_regroup_each_rod_pair(irsbot2):
    """Rank 23 (the symbolic rules once gave 39): what each rod pair carries regroups as mirror images do,
    the elbows keep only their masses, which join the platform's."""
    _, r = irsbot2
    assert r.rank == 23 and not r.notes and r.check.rejected == 0
    m = {n: S(n) for n in r.names}
    l2 = S("l2")
    for limb in "ab":
        b = {k: m[f"{k}{limb}"] for k in ("m4", "m5")}
        pair = {n: (m[f"{n}4{limb}"], m[f"{n}5{limb}"]) for n in ("mx", "my", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")}
        assert r.base[f"mx4{limb}"] == pair["mx"][0] - pair["mx"][1]
        assert r.base[f"my4{limb}"] == pair["my"][0] + pair["my"][1]
        for n in ("Ixy", "Ixz"):
            assert r.base[f"{n}4{limb}"] == pair[n][0] - pair[n][1]
        for n in ("Iyz", "Izz"):
            assert r.base[f"{n}4{limb}"] == pair[n][0] + pair[n][1]
        for n in ("Ixx", "Iyy"):
            assert sympy.expand(r.base[f"{n}4{limb}"] - (sum(pair[n]) - l2**2 / 4 * (b["m4"] + b["m5"]))) == 0
        assert not {n for n in r.base if n.endswith(f"2{limb}") or n.endswith(f"5{limb}") and n[0] == "I"}
    assert {"m2a", "m2b"} <= {x.name for x in r.base["mP"].free_symbols}


def test_irsbot2_symbolic_rank_is_the_rank_of_w_at_30_digits(irsbot2):
    """Where double precision sees 21 (σ22, σ23 at 1e-13 of σ1), W at 30 digits has its ridge after σ23, and the
    87 symbolic directions are null vectors of it."""
    model, r = irsbot2
    s = assert_complete_at(model, r, 30, 16)
    assert float(s[22] / s[0]) < 1e-11  # what double precision cannot resolve


# ---------------------------------------------------------------------------------------- decided beyond rounding
def parallelogram_four_bar(rocker_scale: str):
    """The four-bar sample made a parallelogram (rocker = crank, coupler = ground link) whose rocker length is
    multiplied by `rocker_scale`: "1" keeps it exact, "1 + 1e-9" makes a mechanism whose coupler turns a little."""
    data = json.loads(dumps(samples.load("four_bar")))
    bodies = {b["label"]: b for b in data["bodies"]}
    bodies["2"]["frames"]["C"]["origin"] = ["L0", 0.0, 0.0]
    bodies["3"]["frames"]["C"]["origin"] = [f"L1*({rocker_scale})", 0.0, 0.0]
    initial = {"theta1": 1.0, "theta2": -1.0, "theta3": 1.0, "theta4": 1.0}
    for joint in data["joints"]:
        for c in joint["coordinates"]:
            c["initial"] = initial[c["name"]]
    return loads(json.dumps(data))


def test_copies_turned_by_a_rotation_that_is_not_a_permutation_use_the_exact_initial_pose():
    """The parallelogram's rocker with its body axes turned 45° about its pin: crank and rocker still turn
    together, their relative rotation has entries ±√2/2, taken from the exact tree at the initial pose."""
    data = json.loads(dumps(parallelogram_four_bar("1")))
    rocker = next(b for b in data["bodies"] if b["label"] == "3")
    rocker["frames"]["O3"]["x"] = rocker["frames"]["C"]["x"] = [1.0, 1.0, 0.0]
    rocker["frames"]["C"]["origin"] = ["L1*sqrt(2)/2", "L1*sqrt(2)/2", 0.0]
    model = loads(json.dumps(data))
    geometry = Geometry(model, Symbolic())
    (copy,) = motion_copies(loop_evidence(Mechanism(model)), geometry, [])
    assert {copy.first, copy.second} == {"1", "3"} and not copy.mirrored
    half = sympy.sqrt(2) / 2
    assert {abs(x) for x in copy.rotation} == {0, 1, half}
    r = symbolic_base_parameters(model)
    assert r.rank == 3 and not r.notes
    assert_complete_at(model, r, 30, 20, spread=1.0)


@pytest.mark.parametrize(
    ("scale", "translates", "rank", "digits"),
    [("1", True, 3, 30), ("1 + 1e-9", False, 8, 50), ("1 + 1e-13", False, 8, 50)],
)
def test_a_parallelogram_coupler_translates_and_a_near_one_does_not(scale, translates, rank, digits):
    """The coupler of a parallelogram only translates: its dipoles and quadrupoles have no effect (rank 3). Made
    1e-9 or 1e-13 from a parallelogram, it turns by that much, which double precision cannot tell from rounding
    but 40 digits can: the fact is not taken, the rank is 8, and W at 50 digits agrees (the coupler's effects, of
    order ε and ε², stand above its rounding)."""
    model = parallelogram_four_bar(scale)
    coupler = [f.kind for f in observed(model) if f.body == "2"]
    assert ("translation" in coupler) == translates
    r = symbolic_base_parameters(model)
    assert r.rank == rank and r.check.rejected == 0
    assert_complete_at(model, r, digits, 20, spread=1.0)


# ---------------------------------------------------------------------------------------- a rotor on a slide
def rotor_on_a_rail(rail: list[int]):
    """A carriage on a prismatic joint along `rail`, and a rotor on a revolute coaxial with it (an eccentric
    rotor: its centre of mass off the axis)."""
    inertia = {"m": 1.0, "mx": 0.1, "my": 0.05, "mz": 0.0, "Ixx": 0.04, "Ixy": 0.0, "Ixz": 0.0, "Iyy": 0.04}
    frame = {"origin": [0, 0, 0], "z": rail, "x": [0, 1, 0] if rail[1] == 0 else [1, 0, 0]}
    data = {
        "format": "mbstudio",
        "schema_version": 1,
        "name": "rotor on a rail",
        "parameters": [],
        "bodies": [
            {"label": "c", "name": "carriage", "inertia": dict(inertia, Iyz=0.0, Izz=0.05), "points": {}, "frames": {}},
            {"label": "r", "name": "rotor", "inertia": dict(inertia, Iyz=0.0, Izz=0.06), "points": {}, "frames": {}},
        ],
        "joints": [
            {"name": "slide", "type": "prismatic", "parent": "0", "child": "c", "parent_frame": frame,
             "child_frame": frame, "coordinates": [{"name": "s", "initial": 0.0}]},
            {"name": "spin", "type": "revolute", "parent": "c", "child": "r", "parent_frame": frame,
             "child_frame": {"origin": [0, 0, 0], "z": [0, 0, 1], "x": [1, 0, 0]},
             "coordinates": [{"name": "phi", "initial": 0.0}]},
        ],
        "independent_coordinates": "auto",
    }  # fmt: skip
    return loads(json.dumps(data))


@pytest.mark.parametrize(("rail", "rank"), [([0, 0, 1], 2), ([1, 0, 0], 4)])
def test_a_rotor_sliding_along_its_vertical_axis_has_no_dipole_effect(rail, rank):
    """The rotor's axis is a fixed line whose points slide along it (Ω × v = 0 there): its dipoles normal to the
    axis act through gravity alone, not at all when the rail is vertical (rank 2: the total mass and the moment
    about the axis) but through a gravity torque when it is horizontal (rank 4)."""
    model = rotor_on_a_rail(rail)
    r = symbolic_base_parameters(model)
    facts = [f for f in observed(model) + ground_facts_of(model) if f.body == "r" and f.kind == "axis"]
    assert any(f.line is not None for f in facts)
    assert r.rank == rank and not r.notes
    assert_complete_at(model, r, 30, 12, spread=1.0)


def ground_facts_of(model) -> list:
    geometry = Geometry(model, Symbolic())
    return ground_facts(model, geometry, {geometry.symbols[p.name]: p.value for p in model.parameters})


# ---------------------------------------------------------------------------------------- the linear Delta
def test_linear_delta_assembles_and_its_platform_only_translates():
    """The new sample: 16 bodies, 3 translations of the platform, 12 redundant constraints, closing exactly at
    its reference configuration and at a reachable one."""
    model = samples.load("linear_delta")
    mech = Mechanism(model)
    assert (len(model.bodies), mech.dof, len(mech.redundant_constraints)) == (16, 3, 12)
    assert mech.independent == ["s_x", "s_y", "s_z"]
    assert np.abs(mech.residual(mech.tree.initial_coordinates()[None, :])).max() < 1e-15
    q = mech.assemble({"s_x": 0.1, "s_y": -0.05, "s_z": 0.08})
    state = mech.motion(q)
    assert np.abs(state.R[mech.tree.body_index("P")][0] - np.eye(3)).max() < 1e-12
    rods = [np.asarray(state.R[mech.tree.body_index(b)][0]) for b in ("Rz", "Sz")]
    assert np.abs(rods[0] - rods[1]).max() < 1e-12  # a parallelogram's rods stay parallel


@pytest.mark.slow  # `check` builds the compiled engine of the 21-coordinate machine (40 s)
def test_linear_delta_check_reports_a_parallel_machine_of_three_limbs(capsys):
    assert main(["check", str(samples.path("linear_delta")), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["dof_jacobian"], report["loops"]) == (3, 5)


def test_linear_delta_vertical_limb_bar_slides_along_its_rail():
    """The upper bar of the vertical limb turns about its rail while the carriage slides along it: its dipoles
    normal to the rail have no effect (gravity is parallel to it); the horizontal limbs' bars keep theirs."""
    r = symbolic_base_parameters(samples.load("linear_delta"))
    normal = {d.bodies[0] for d in r.no_effect if d.condition == 4 and "normal to the axis" in d.multipole}
    assert normal == {"Uz"}
    assert r.rank == 35 and not r.notes


# ---------------------------------------------------------------------------------------- the perturbation pass
def test_a_parallelogram_coupler_still_translates_when_every_number_moves_by_1e_13(perturb):
    """docs/architecture.md, principle 9: the loop-imposed fact comes from the model's structure (the rocker and the
    coupler take their lengths from the crank's and the ground link's parameters), so moving every number of the file
    by 1e-13 keeps it, and the rank with it."""
    model = perturb(parallelogram_four_bar("1"))
    assert "translation" in [f.kind for f in observed(model) if f.body == "2"]
    assert symbolic_base_parameters(model).rank == 3


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rank"), [("irsbot2", 23), ("linear_delta", 35)])
def test_the_parallel_machines_symbolic_ranks_survive_rounding(name, rank, perturb):
    r = symbolic_base_parameters(perturb(samples.load(name)))
    assert r.rank == rank and not r.notes and r.check.rejected == 0
