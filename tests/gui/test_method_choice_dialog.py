"""The Simulate dialog's integrator (gui/jobs/job_options.py): "automatic" is the default and shows what it
chooses for the model open and why (simulation/method_choice.py); a method picked by name is passed as it is."""

from __future__ import annotations

from mbstudio import samples
from mbstudio.gui.jobs.job_options import SimulationDialog

from ..test_contact import ball


def dialog_of(qtbot, model, previous=None) -> SimulationDialog:
    made = SimulationDialog(model, previous)
    qtbot.addWidget(made)
    return made


def test_automatic_is_the_default_and_names_bdf_for_contacts(qtbot):
    dialog = dialog_of(qtbot, ball(0.3, 0.0))
    assert dialog.options()["method"] == "auto"
    assert dialog.method.currentText() == (
        "automatic (CVODES-BDF: chosen for the stiff friction of 1 compliant contact)"
    )
    assert "Radau and BDF suit stiff models" not in dialog.hint.text()  # the choice is a stiff integrator already
    dialog.method.setCurrentIndex(dialog.method.findData("CVODES"))
    assert dialog.options()["method"] == "CVODES" and "Radau and BDF suit stiff models" in dialog.hint.text()


def test_automatic_names_adams_for_a_sample_without_contacts(qtbot):
    dialog = dialog_of(qtbot, samples.load("four_bar"))
    assert dialog.method.currentText() == "automatic (CVODES)" and dialog.options()["method"] == "auto"
    assert dialog_of(qtbot, samples.load("four_bar"), {"method": "Radau"}).options()["method"] == "Radau"
