"""Symbolic equations of motion against independent routes: the float64 dynamics (composite rigid body for M,
Newton-Euler for c and g), the exported Python module, the closed-loop identity of the four-bar at an
assembled state, and the `mbstudio eom` command."""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest
import sympy

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.dynamics import coriolis_forces, gravity_forces, inverse_dynamics, mass_matrix
from mbstudio.kinematics import Mechanism
from mbstudio.symbolic import Cancelled, common_subexpressions, equations_of_motion, latex_fragment, python_module
from mbstudio.symbolic.export import inertial_latex_name, latex_name

# the simplified PUMA takes minutes: the default run checks its unsimplified equations, .ci/run both
# the PUMA (raw 19 s, simplified minutes) runs with the slow checks; the gripper and double pendulum cover the route
TREES = ["double_pendulum", *(pytest.param(n, marks=pytest.mark.slow) for n in ("gripper", "puma560:raw", "puma560"))]
TOL = 1e-12


@functools.cache
def eom(name: str, numeric_inertia: bool = False):
    """A sample's equations; with the suffix ":raw", without simplification."""
    sample, _, variant = name.partition(":")
    return equations_of_motion(samples.load(sample), numeric_inertia=numeric_inertia, simplify=variant != "raw")


@functools.cache
def exported(name: str):
    e = eom(name)
    return e, common_subexpressions(e)


def evaluate(e, matrix: sympy.Matrix, q: np.ndarray, qd: np.ndarray | None = None) -> np.ndarray:
    """The matrix at each sample (N, n), with the document's parameter values."""
    params = e.geometric + e.inertial
    f = sympy.lambdify([e.coordinates, e.velocities, params], matrix, "numpy", cse=True)
    values = [e.values[s.name] for s in params]
    qd = np.zeros_like(q) if qd is None else qd
    return np.array([np.asarray(f(qk, qdk, values), dtype=float) for qk, qdk in zip(q, qd, strict=True)])


def states(n: int, count: int = 8, seed: int = 5):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n)), rng.uniform(-5, 5, (count, n))


def load_module(tmp_path, source: str, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_close(actual, expected):
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.abs(actual - expected).max() <= TOL * scale


@pytest.mark.parametrize("name", TREES)
def test_symbolic_equations_equal_the_float64_dynamics(name):
    e, mech = eom(name), Mechanism(samples.load(name.partition(":")[0]))
    q, qd, _ = states(mech.n)
    assert_close(evaluate(e, e.mass_matrix, q), mass_matrix(mech, q))
    assert_close(evaluate(e, e.bias, q, qd)[..., 0], coriolis_forces(mech, q, qd))
    assert_close(evaluate(e, e.gravity, q)[..., 0], gravity_forces(mech, q))
    assert e.mass_matrix == e.mass_matrix.T


@pytest.mark.parametrize(
    "name", [pytest.param("gripper", marks=pytest.mark.slow) if n == "gripper" else n for n in TREES]
)
def test_exported_module_gives_the_float64_dynamics_batched(name, tmp_path):
    e, cse = exported(name)
    module = load_module(tmp_path, python_module(e, cse), "eom_" + name.replace(":", "_"))
    mech = Mechanism(samples.load(name.partition(":")[0]))
    q, qd, qdd = states(mech.n, count=50, seed=9)
    tau = np.einsum("nij,nj->ni", module.mass_matrix(q), qdd) + module.bias(q, qd) + module.gravity(q)
    assert_close(tau, inverse_dynamics(mech, q, qd, qdd))
    assert_close(module.mass_matrix(q[0]), mass_matrix(mech, q[0])[0])
    assert cse.ops_after < cse.ops_before


def test_exported_parameters_override_the_document_values(tmp_path):
    e, cse = exported("double_pendulum")
    module = load_module(tmp_path, python_module(e, cse), "eom_override")
    model = samples.load("double_pendulum")
    model.parameters[0].value = 1.3
    model.bodies[1].inertia["m"] = 2.5
    mech = Mechanism(model)
    q, qd, qdd = states(2, seed=1)
    params = {"L": 1.3, "m2": 2.5}
    tau = (
        np.einsum("nij,nj->ni", module.mass_matrix(q, params), qdd)
        + module.bias(q, qd, params)
        + module.gravity(q, params)
    )
    assert_close(tau, inverse_dynamics(mech, q, qd, qdd))


@pytest.mark.slow  # the gripper's symbolic equations, the other gripper checks' too
def test_numeric_inertia_substitutes_the_document_values():
    e, symbolic = eom("gripper", numeric_inertia=True), eom("gripper")
    assert e.inertial == []
    assert not {s.name for s in e.mass_matrix.free_symbols} & set(samples.load("gripper").inertial_parameter_names())
    q, qd, _ = states(e.n)
    assert_close(evaluate(e, e.mass_matrix, q), evaluate(symbolic, symbolic.mass_matrix, q))
    assert_close(evaluate(e, e.bias, q, qd), evaluate(symbolic, symbolic.bias, q, qd))


def test_symbols_are_named_as_the_document():
    e = eom("double_pendulum")
    assert [s.name for s in e.coordinates] == ["theta1", "theta2"]
    assert [s.name for s in e.velocities] == ["d_theta1", "d_theta2"]
    assert [s.name for s in e.geometric] == ["L", "g"]  # g: gravity's magnitude, 9.81 in the document
    assert e.values["g"] == 9.81 and "981" not in str(e.gravity)
    assert e.mass_matrix[1, 1] == sympy.Symbol("Izz2", real=True)
    assert all(s.is_real for s in e.mass_matrix.free_symbols)


def test_latex_names():
    assert latex_name("theta1") == r"\theta_{1}"
    assert latex_name("d_theta1") == r"\dot{\theta}_{1}"
    assert latex_name("L") == "L"
    assert latex_name("th2") == r"\mathrm{th}_{2}"
    assert inertial_latex_name("Iyy1") == "I_{yy,1}"
    assert inertial_latex_name("mx4") == "m_{x,4}"
    assert inertial_latex_name("m7") == "m_{7}"


def balanced(text: str) -> bool:
    depth = 0
    for ch in text.replace(r"\{", "").replace(r"\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("name", ["double_pendulum", "gripper", "four_bar"])
def test_latex_fragment_is_well_formed(name, tmp_path):
    e = eom(name)
    tex = latex_fragment(e, common_subexpressions(e))
    assert balanced(tex)
    assert tex.count(r"\begin{align*}") == tex.count(r"\end{align*}") == len(e.groups())
    assert r"M_{1,1}" in tex
    if shutil.which("latex") is None:
        return
    doc = tmp_path / "eom.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\allowdisplaybreaks\n"
        f"\\begin{{document}}\n{tex}\\end{{document}}\n"
    )
    run = subprocess.run(
        ["latex", "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout.decode(errors="replace")[-2000:]


def test_closed_loop_tree_equations_and_constraint_jacobian(tmp_path):
    """At an assembled four-bar state: Newton-Euler on the tree equals M q̈ + c + g, Φ_q equals the float64
    Jacobian, Φ_q R = 0 and Φ_q q̈ = γ; the exported module gives the same Φ_q and γ."""
    e = eom("four_bar")
    assert e.closed and e.notes and "no closed form" in e.notes[0]
    mech = Mechanism(samples.load("four_bar"))
    q = mech.assemble({"theta1": np.array([0.3, 1.7, -2.4])})
    qd = mech.velocities(q, np.array([[1.2], [-0.7], [2.0]]))
    qdd = mech.accelerations(q, qd, np.array([[0.5], [3.0], [-1.5]]))
    tau = (
        np.einsum("nij,nj->ni", evaluate(e, e.mass_matrix, q), qdd)
        + evaluate(e, e.bias, q, qd)[..., 0]
        + evaluate(e, e.gravity, q)[..., 0]
    )
    assert_close(tau, inverse_dynamics(mech, q, qd, qdd))
    phi_q = evaluate(e, e.constraint_jacobian, q)
    assert_close(phi_q, mech.constraint_jacobian(q))
    assert np.abs(phi_q @ mech.r_matrix(q)).max() < 1e-12
    gamma = evaluate(e, e.constraint_rhs, q, qd)[..., 0]
    assert_close(np.einsum("nij,nj->ni", phi_q, qdd), gamma)
    module = load_module(tmp_path, python_module(e, common_subexpressions(e)), "eom_four_bar")
    assert_close(module.constraint_jacobian(q), phi_q)
    assert_close(module.constraint_rhs(q, qd), gamma)
    assert e.independent_rows == list(mech.partition.rows)


def test_progress_reports_every_stage():
    messages = []
    e = equations_of_motion(samples.load("four_bar"), progress=lambda f, m: messages.append((f, m)))
    fractions = [f for f, _ in messages]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1
    assert sum("mass matrix column" in m for _, m in messages) == e.n
    assert any("constraint" in m for _, m in messages)
    cse_messages = []
    common_subexpressions(e, progress=lambda f, m: cse_messages.append(m))
    assert any("common subexpressions" in m for m in cse_messages)


def test_cancel_raises_promptly():
    event = threading.Event()
    set_at = []

    def progress(fraction, message):
        if "gravity" in message:  # cancel once the long per-entry work has begun
            event.set()
            set_at.append(time.perf_counter())

    with pytest.raises(Cancelled):
        equations_of_motion(samples.load("gripper"), progress=progress, cancel=event)
    assert time.perf_counter() - set_at[0] < 2.0
    with pytest.raises(Cancelled):
        equations_of_motion(samples.load("double_pendulum"), cancel=lambda: True)


def test_eom_command_writes_both_files(tmp_path, capsys):
    tex, py = tmp_path / "dp.tex", tmp_path / "dp.py"
    path = str(samples.path("double_pendulum"))
    assert main(["eom", path, "--latex", str(tex), "--python", str(py)]) == 0
    out = capsys.readouterr().out
    assert "mass_matrix" in out and "ops after" in out and re.search(r"time: regressor [\d.]+ s", out)
    assert balanced(tex.read_text())
    module = load_module(tmp_path, py.read_text(), "dp")
    mech = Mechanism(samples.load("double_pendulum"))
    q = states(2)[0]
    assert_close(module.mass_matrix(q), mass_matrix(mech, q))
    assert main(["eom", path, "--numeric-inertia"]) == 0
    assert "0 inertial symbols" in capsys.readouterr().out
