"""FMU export (io/fmu_export.py, `mbstudio export FILE --fmu OUT.fmu`): FMI 2.0 Model Exchange and Co-Simulation in
one archive, checked by fmpy, an FMI importer built independently of us: its validation of the model description
passes, and its simulations of the FMU (its own CVode solver on our derivatives; our Runge-Kutta inside doStep)
equal `mbstudio simulate` to 1e-6 over 1 s, for the four-bar (with an actuator driven through the FMU's input),
and in the slow step the SLA and the Delta 3RR[2RR]R (the 3R[2US] Delta's 33 coordinates are more than the compiled
engine takes: refused by name)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.io.fmu_export import fmu_archive
from mbstudio.model import ModelError, save
from mbstudio.model.document import Actuator
from mbstudio.simulation.run import simulate

fmpy = pytest.importorskip("fmpy")
pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _check_against_simulate(model, path, inputs=None, t_end: float = 1.0) -> dict[str, float]:
    """The largest difference, over t_end sampled every 10 ms, between fmpy's runs of the FMU and ours, per kind."""
    from fmpy.validation import validate_fmu

    assert validate_fmu(str(path)) == []
    samples = round(t_end / 0.01) + 1
    run = simulate(model, t_end, rtol=1e-12, atol=1e-14, samples=samples)
    names = [*run.coordinates, *(f"d_{c}" for c in run.coordinates)]
    expected = np.hstack([run.q, run.qd])
    worst = {}
    for kind in ("ModelExchange", "CoSimulation"):
        result = fmpy.simulate_fmu(str(path), fmi_type=kind, stop_time=t_end, output_interval=0.01,
                                   relative_tolerance=1e-12, output=names, input=inputs)  # fmt: skip
        assert np.allclose(result["time"], run.t, atol=1e-12)
        got = np.column_stack([result[n] for n in names])
        worst[kind] = float(np.abs(got - expected).max())
    assert np.ptp(run.q, axis=0).max() > 0.01  # it moves
    return worst


def _driven_four_bar():
    model = samples.load("four_bar")
    model.forces.append(Actuator("drive", "theta1", formula=0.4))
    return model


def test_the_four_bar_fmu_moves_as_mbstudio_simulates_it_with_its_actuator_as_input(tmp_path):
    model = _driven_four_bar()
    data, notes = fmu_archive(model)
    path = tmp_path / "four_bar.fmu"
    path.write_bytes(data)
    description = fmpy.read_model_description(str(path))
    variables = {v.name: v for v in description.modelVariables}
    assert variables["drive"].causality == "input" and variables["drive"].unit == "N m"
    assert variables["theta2"].causality == "output" and variables["d_theta2"].unit == "rad/s"
    assert variables["start.theta1"].causality == "parameter" and variables["L1"].variability == "constant"
    assert any("gives way to the FMU's input" in note for note in notes)
    signal = np.array([(0.0, 0.4), (1.0, 0.4)], dtype=[("time", float), ("drive", float)])
    worst = _check_against_simulate(model, path, inputs=signal)
    assert worst["ModelExchange"] <= 1e-6 and worst["CoSimulation"] <= 1e-6, worst


def test_start_parameters_move_the_start_pose_and_the_loop_stays_closed(tmp_path):
    model = samples.load("four_bar")
    path = tmp_path / "four_bar.fmu"
    path.write_bytes(fmu_archive(model)[0])
    result = fmpy.simulate_fmu(str(path), fmi_type="CoSimulation", stop_time=0.2, output_interval=0.1,
                               start_values={"start.theta1": 0.3, "start.d_theta1": 1.0})  # fmt: skip
    moved = model.copy()
    moved.joint("crank_pivot").coordinates[0].initial = 0.3
    run = simulate(moved, 0.2, rtol=1e-12, atol=1e-14, samples=3, velocities=[1.0])
    assert result["theta1"][0] == pytest.approx(0.3) and result["d_theta1"][0] == pytest.approx(1.0)
    assert np.abs(result["theta3"] - run.q[:, 2]).max() <= 1e-6


def test_names_that_are_not_inputs_or_outputs_are_refused_before_compiling():
    with pytest.raises(ModelError, match="is not an input"):
        fmu_archive(samples.load("four_bar"), inputs=["nothing"])
    with pytest.raises(ModelError, match="is not an output"):
        fmu_archive(samples.load("four_bar"), outputs=["nothing.x"])
    from mbstudio.benchmarks.models import spatial_chain  # beyond the compiled engine's 400 coordinates

    with pytest.raises(ModelError, match="401 coordinates"):
        fmu_archive(spatial_chain(401))


def test_the_command_writes_the_fmu_with_a_measure_output(tmp_path, capsys):
    path = tmp_path / "fb.mbs"
    save(samples.load("four_bar"), path)
    out = tmp_path / "fb.fmu"
    measure = samples.load("four_bar").measures[0].name
    assert main(["export", str(path), "--fmu", str(out), "--outputs", f"{measure}.x"]) == 0
    description = fmpy.read_model_description(str(out))
    assert f"{measure}.x" in [v.name for v in description.modelVariables if v.causality == "output"]
    assert main(["export", str(path), "--fmu", str(tmp_path / "x.fmu"), "--inputs", "nothing"]) == 2
    assert not (tmp_path / "x.fmu").exists()


@pytest.mark.slow  # compiles the SLA's and the Delta's state equations (about a minute each)
@pytest.mark.parametrize("name", ["sla_suspension", "delta_3rr2rrr"])
def test_the_sla_and_delta_fmus_move_as_mbstudio_simulates_them(tmp_path, name):
    model = samples.load(name)
    path = tmp_path / f"{name}.fmu"
    path.write_bytes(fmu_archive(model)[0])
    # the Delta falling from rest reaches a pose at 0.27 s where `mbstudio simulate` chooses its independent
    # coordinates anew; an FMU keeps the ones it was built with (docs/fmu.md), so it is compared before that
    worst = _check_against_simulate(model, path, t_end=1.0 if name == "sla_suspension" else 0.25)
    assert worst["ModelExchange"] <= 1e-6 and worst["CoSimulation"] <= 1e-6, worst
