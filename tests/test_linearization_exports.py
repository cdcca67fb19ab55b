"""Linear models as files and from the command line (io/state_space.py, `mbstudio linearize`): the .mat file
read back by scipy.io (as MATLAB would), JSON and NPZ likewise, a family over a schedule, python-control, and
bad input named with what is valid."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.io.display_units import parse_units
from mbstudio.io.state_space import family_document, in_display_units, model_document, save_state_space
from mbstudio.linear.equilibrium import equilibrium
from mbstudio.linear.linear_model import linearize
from mbstudio.linear.lpv import linear_family
from mbstudio.model import save

INPUTS = ["theta1", "2.tip.fz", "2.ty"]
OUTPUTS = ["theta1", "d_theta2", "2.tip.x", "dd_theta1"]


@pytest.fixture(scope="module")
def lin():
    model = samples.load("double_pendulum")
    return linearize(model, equilibrium(model, hold={"theta1": 0.2}), INPUTS, OUTPUTS)


def _cells(value) -> list[str]:
    """A MATLAB cell array of char as scipy.io reads it back."""
    return [str(np.asarray(x).ravel()[0]) for x in np.asarray(value).ravel()]


def test_the_mat_file_loads_back_with_scipy_io_with_the_same_matrices_and_names(lin, tmp_path):
    path = tmp_path / "model.mat"
    save_state_space(model_document(lin), path)
    S = scipy.io.loadmat(path)
    for name in "ABCD":
        assert np.array_equal(S[name], getattr(lin, name)), name
    assert _cells(S["states"]) == lin.states and _cells(S["inputs"]) == INPUTS and _cells(S["outputs"]) == OUTPUTS
    assert _cells(S["input_units"]) == ["N m", "N", "N m"]
    assert np.allclose(S["q0"].ravel(), lin.q, rtol=0, atol=0)
    held = S["held"][0, 0]["theta1"][0, 0]
    assert held == lin.point.held["theta1"] and str(S["point_kind"][0]) == "equilibrium"
    assert np.allclose(S["eigenvalues"].ravel(), lin.eigenvalues, rtol=0, atol=0)


def test_json_and_npz_hold_the_same(lin, tmp_path):
    save_state_space(model_document(lin), tmp_path / "model.json")
    save_state_space(model_document(lin), tmp_path / "model.npz")
    document = json.loads((tmp_path / "model.json").read_text())
    archive = np.load(tmp_path / "model.npz")
    for name in "ABCD":
        assert np.array_equal(np.array(document[name], float), getattr(lin, name))
        assert np.array_equal(archive[name], getattr(lin, name))
    assert document["outputs"] == OUTPUTS and list(archive["outputs"]) == OUTPUTS
    assert document["provenance"]["operating_point"] == "equilibrium"
    assert json.loads(str(archive["provenance"]))["method"].startswith("CasADi")
    eigenvalues = np.array(document["eigenvalues"]["real"]) + 1j * np.array(document["eigenvalues"]["imag"])
    assert np.array_equal(eigenvalues, lin.eigenvalues)


def test_a_family_is_stacked_as_matlab_model_arrays_in_mat_and_point_first_elsewhere(tmp_path):
    family = linear_family(samples.load("double_pendulum"), "theta1", [-0.2, 0.0, 0.2])
    document = family_document(family)
    save_state_space(document, tmp_path / "family.mat")
    save_state_space(document, tmp_path / "family.npz")
    S, archive = scipy.io.loadmat(tmp_path / "family.mat"), np.load(tmp_path / "family.npz")
    for i, lin in enumerate(family.models):
        assert np.array_equal(S["A"][:, :, i], lin.A) and np.array_equal(archive["A"][i], lin.A)
        assert lin.point.values()["theta1"] == pytest.approx(family.values[i], abs=1e-15)
    assert S["schedule_values"].ravel().tolist() == [-0.2, 0.0, 0.2] and S["schedule_unit"].tolist() == ["rad"]
    in_degrees = in_display_units(document, parse_units("deg"))  # --units deg: the schedule too, named
    assert in_degrees["schedule_unit"] == "deg"
    assert in_degrees["schedule_values"] == pytest.approx(np.degrees([-0.2, 0.0, 0.2]), rel=1e-15)
    # each point holds theta1 with the torque its weights need: antisymmetric about the hanging pose
    held = [lin.point.held["theta1"] for lin in family.models]
    assert held[0] == pytest.approx(-held[2], rel=1e-10) and held[1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow  # importing python-control (and its matplotlib) takes 2 s
def test_python_control_gets_a_named_state_space(lin):
    control = pytest.importorskip("control")
    system = lin.state_space()
    assert isinstance(system, control.StateSpace)
    assert np.array_equal(system.A, lin.A) and system.input_labels == ["tau_theta1", "2_tip_fz", "2_ty"]


def test_the_command_writes_each_format_and_prints_the_point_and_modes(tmp_path, capsys):
    path = tmp_path / "dp.mbs"
    save(samples.load("double_pendulum"), path)
    out = tmp_path / "lin.mat"
    arguments = ["--at", "equilibrium", "--inputs", "theta2", "--outputs", "2.tip.z", "--out", str(out)]
    assert main(["linearize", str(path), *arguments]) == 0
    text = capsys.readouterr().out
    assert "equilibrium found (at rest, q̈ = 0)" in text and "natural [Hz]" in text and f"wrote {out}" in text
    S = scipy.io.loadmat(out)
    assert S["B"].shape == (4, 1) and S["C"].shape == (1, 4)
    assert main(["linearize", str(path), "--at", "theta1=0.3,d_theta1=1", "--json", str(tmp_path / "m.json")]) == 0
    assert "NOT an equilibrium" in capsys.readouterr().out
    document = json.loads((tmp_path / "m.json").read_text())
    assert document["drift"][0] == 1.0 and document["is_equilibrium"] is False  # said, and written
    # Newton finds the equilibrium nearest its start: from near the top, the inverted one, unstable
    assert main(["linearize", str(path), "--at", "equilibrium", "--from", "theta1=3.0,theta2=0.1"]) == 0
    text = capsys.readouterr().out
    assert "theta1 = 3.14159, theta2 = " in text and "unstable, real" in text
    arguments = ["--at", "equilibrium", "--schedule", "theta1=-0.1:0.1:3", "--out", str(tmp_path / "f.npz")]
    assert main(["linearize", str(path), *arguments]) == 0
    assert np.load(tmp_path / "f.npz")["A"].shape == (3, 4, 4)


@pytest.mark.parametrize(
    ("sample", "default", "same_as"),
    [
        ("sla_suspension", "by default, the equilibrium near the document's pose (found from it;", "equilibrium"),
        ("four_bar", "the undamped but stable equilibrium nearest the document's pose (a nearer one is unstable", None),
    ],
)
def test_without_at_the_model_is_about_the_equilibrium_near_the_pose_where_there_is_one(
    tmp_path, capsys, sample, default, same_as
):
    """Issue 24, item 8: the sprung SLA settles (by 0.61 rad of its wheel-side arm), the unsprung four-bar has no
    equilibrium near its pose (its crank falls): each says which point it took, and its model is that of the
    explicit --at."""
    path = tmp_path / "m.mbs"
    save(samples.load(sample), path)
    assert main(["linearize", str(path), "--out", str(tmp_path / "auto.json")]) == 0
    assert default in capsys.readouterr().out
    if same_as is None:  # the four-bar's crank falls from its pose: the stable equilibrium is found from a turned start
        assert json.loads((tmp_path / "auto.json").read_text())["point_kind"] == "equilibrium"
        return
    assert main(["linearize", str(path), "--at", same_as, "--out", str(tmp_path / "explicit.json")]) == 0
    auto, explicit = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("auto", "explicit"))
    assert auto["point_kind"] == explicit["point_kind"] and auto["A"] == explicit["A"] and auto["q0"] == explicit["q0"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--inputs", "nope"], "inputs: is not an input of this model (got 'nope'); expected a coordinate (theta1"),
        (["--outputs", "1.nowhere.x"], "outputs: names no point 'nowhere' of body 1"),
        (["--at", "theta1=abc"], "at: theta1: 'abc' is not a number"),
        (["--at", "initial", "--hold", "theta1=0.1"], "--hold: applies to an equilibrium only"),
        (["--at", "initial", "--from", "theta1=3"], "--from: applies to an equilibrium only"),
        (["--at", "equilibrium", "--from", "theta9=3"], "from: 'theta9' is not an independent coordinate"),
        (["--schedule", "Q=0:1:3"], "schedule: is neither a coordinate nor a parameter"),
        (["--out", "model.txt"], "must end in .mat, .json or .npz"),
    ],
)
def test_bad_input_is_named_with_what_is_valid(tmp_path, capsys, arguments, message):
    path = tmp_path / "dp.mbs"
    save(samples.load("double_pendulum"), path)
    arguments = [a.replace("model.txt", str(tmp_path / "model.txt")) for a in arguments]
    assert main(["linearize", str(path), *arguments]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "model.txt").exists()


def test_an_output_file_never_replaces_the_model(tmp_path, capsys):
    path = tmp_path / "dp.json"
    path.write_text(json.dumps(json.loads(samples.path("double_pendulum").read_text())))
    before = path.read_text()
    assert main(["linearize", str(path), "--out", str(path)]) == 2
    assert "is an input of this command" in capsys.readouterr().err and path.read_text() == before


def test_values_on_the_command_line_may_carry_their_unit(tmp_path, capsys):
    """--at theta1=10deg,d_theta2=30rpm is the same operating point as the SI numbers; a length for an angle is
    refused with what is valid."""
    path = tmp_path / "dp.mbs"
    save(samples.load("double_pendulum"), path)
    given = {"units": "theta1=10deg,d_theta2=30rpm", "si": f"theta1={float(np.radians(10))!r},d_theta2={np.pi!r}"}
    for name, at in given.items():
        assert main(["linearize", str(path), "--at", at, "--out", str(tmp_path / f"{name}.json")]) == 0
    with_units, si = (json.loads((tmp_path / f"{n}.json").read_text()) for n in given)
    assert with_units["q0"] == si["q0"] and with_units["v0"] == si["v0"] and with_units["A"] == si["A"]
    assert si["q0"][0] == np.radians(10) and si["v0"][1] == np.pi
    assert main(["linearize", str(path), "--at", "theta1=3mm"]) == 2
    assert "at: theta1: is a length, where an angle is expected (got '3 mm')" in capsys.readouterr().err
