"""The Simulate dialog's choice of rigid contacts (gui/jobs/job_options.py) and the simulation task that runs it
(jobs/tasks.py, simulation/rigid_stepping.py)."""

from __future__ import annotations

import pytest

from mbstudio.gui.jobs.job_options import SimulationDialog
from mbstudio.jobs.tasks import simulation
from mbstudio.model import dumps

from ..test_contact import ball


@pytest.fixture
def dialog(qtbot):
    made = SimulationDialog(ball(0.3, 0.0, restitution=0.5), None)
    qtbot.addWidget(made)
    return made


def test_rigid_contacts_add_their_step_to_the_options(dialog):
    assert "contact" not in dialog.options() and not dialog.lines["step"].isEnabled()  # compliant: as before
    dialog.contact.setCurrentIndex(dialog.contact.findData("rigid"))
    assert dialog.lines["step"].isEnabled()
    assert dialog.options() | {"contact": "rigid", "step": 0.001} == dialog.options()
    dialog.lines["step"].setText("0")
    assert dialog.error.text().startswith("step: 0 is out of range") and not dialog.ok.isEnabled()


def test_the_simulation_task_runs_rigid_contacts():
    """The ball dropped from 0.2 m above the floor lands at t = sqrt(2 h / g) = 0.202 s and bounces with e = 0.5:
    its contact's mean force is 0 before, positive at the impact's interval."""
    options = {"t_end": 0.3, "samples": 31, "contact": "rigid", "step": 1e-4}
    result = simulation(dumps(ball(0.3, 0.0, restitution=0.5)), options, lambda *_: None, lambda: False)
    force = result.data.series["f.normal_force [N]"]
    assert force[:20].max() == 0.0 and force[20:22].max() > 0
