"""The job tasks called directly (as the runner's process does): options reach the analyses, and a bad
option is refused naming the option, the value and what is valid."""

from __future__ import annotations

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.jobs import tasks
from mbstudio.model import ModelError, dumps


def run(task, name: str, options: dict):
    return task(dumps(samples.load(name)), options, lambda fraction, message: None, lambda: False)


def test_kinematics_follows_the_named_trajectory_and_carries_the_drive_forces():
    result = run(tasks.kinematics, "sla_suspension", {"trajectory": "exciting", "samples": 11})
    series = result.data.series
    assert result.data.trajectory == "exciting" and len(result.data.t) == 11
    assert {"theta1 [rad]", "d_theta2 [rad/s]", "actuator:theta1 [N m]", "total_energy [J]"} <= set(series)
    assert np.max(series["constraint_residual [m|1]"]) < 1e-11
    q = np.asarray(result.data.q)
    assert q[:, result.data.coordinates.index("theta1")] == pytest.approx(series["theta1 [rad]"])


def test_an_unknown_trajectory_is_named_with_the_valid_ones():
    with pytest.raises(ModelError) as error:
        run(tasks.kinematics, "sla_suspension", {"trajectory": "fast"})
    assert "trajectory" in str(error.value) and "fast" in str(error.value) and "exciting" in str(error.value)


def test_base_parameter_options_reach_the_pipeline():
    default = run(tasks.base_parameters, "four_bar", {"method": "dp"}).data.json["results"]["dp"]
    wanted = ["mx1", *default["eliminated"][1:]]  # keep m1 instead of mx1: still a valid choice of base
    chosen = run(tasks.base_parameters, "four_bar", {"method": "dp", "priority": wanted}).data.json
    assert chosen["results"]["dp"]["rank"] == default["rank"] == 8
    assert "mx1" in chosen["results"]["dp"]["eliminated"] and chosen["provenance"]["trajectory"]["source"] in (
        "model",
        "default",
    )
