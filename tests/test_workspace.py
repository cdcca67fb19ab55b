"""The workspace without Qt (docs/architecture.md, "The workspace"): the pose follows the document and closes the
loops, checked on the four-bar's geometry (the coupler's length between the crank and rocker pins, the branch side)
rather than on the loop equations that assembled it; slider steps merge; the compiled engine is asked for once per
structure; finished jobs go to their task's handler, results filed by the model revision they ran on. Importing and
running it loads no Qt, VTK or plotting module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.jobs import DONE, FAILED, TASKS, Job
from mbstudio.model import AssemblyError, Model, dumps
from mbstudio.model.hashing import model_hash, text_hash
from mbstudio.numerics.backends import Float64
from mbstudio.workspace import Workspace

from .kinematic_paths import four_bar_branch_side

GUI_LIBRARIES = ("PySide6", "shiboken6", "vtk", "vtkmodules", "pyvista", "pyvistaqt", "pyqtgraph")
COUPLER, ROCKER = 0.35, 0.3  # m: the four_bar sample's L2 and L3


@dataclass
class Document:
    """What the workspace reads of the window's document: its model."""

    model: Model


@dataclass
class Starter:
    """The jobs the workspace starts (the compiled engine's build), kept running as the window's manager does
    until the build ends; `texts` the model text each was started on."""

    running: list[Job] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def start(self, task: str, model_text: str, options: dict, title: str) -> Job:
        job = Job(len(self.running) + 1, task, title, options, text_hash(model_text))
        self.running.append(job)
        self.texts.append(model_text)
        return job


def set_coordinate(model: Model, name: str, value: float) -> None:
    """As the document's pose edit does: the coordinate's initial value in place."""
    next(c for j in model.joints for c in j.coordinates if c.name == name).initial = value


def set_parameter(model: Model, name: str, value: float) -> None:
    next(p for p in model.parameters if p.name == name).value = value


def workspace_of(model: Model) -> Workspace:
    workspace = Workspace(Document(model), Starter())
    assert workspace.rebuild() is None  # the sample assembles
    workspace.model_changed()
    return workspace


def pin_gap(workspace: Workspace) -> float:
    """|coupler length − distance from the crank pin to the rocker's pin| at the shown pose (m): zero where the
    loop closes, from the bodies' poses and the sample's link lengths, not from the loop equations."""
    poses = workspace.pose.mech.poses(workspace.pose.q[None])
    crank_pin, rocker = poses["2"][1][0], poses["3"]
    rocker_pin = rocker[1][0] + ROCKER * rocker[0][0][:, 0]
    return abs(np.linalg.norm(rocker_pin - crank_pin) - COUPLER)


def closure_tolerance(workspace: Workspace) -> float:
    """The assembly's own tolerance on a loop residual, times 10 for the three components of the pin's gap and the
    rounding of the poses."""
    return 10 * Float64().tolerance(workspace.pose.mech.length_scale)


@pytest.fixture
def four_bar_workspace(monkeypatch, tmp_path) -> Workspace:
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))  # no engine built yet: the numpy path assembles
    return workspace_of(samples.load("four_bar"))


def test_slider_steps_turn_the_crank_a_full_turn_on_one_branch(four_bar_workspace):
    ws = four_bar_workspace
    side = four_bar_branch_side(ws.pose.mech, ws.pose.q[None])
    for theta in np.linspace(0, 2 * np.pi, 37)[1:]:
        wanted = float(np.angle(np.exp(1j * theta)))
        q, branch = ws.pose.move_coordinate("theta1", wanted)
        assert q is ws.pose.q and branch is None
        assert ws.pose.values()["theta1"] == wanted
        assert pin_gap(ws) <= closure_tolerance(ws), theta
        assert four_bar_branch_side(ws.pose.mech, ws.pose.q[None]) == side, theta


def test_a_step_that_cannot_close_keeps_the_pose_and_says_which_loop(monkeypatch, tmp_path):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    model = samples.load("four_bar")
    model.independent_coordinates = ["theta3"]  # the rocker swings through less than a turn
    ws = workspace_of(model)
    before = ws.pose.q.copy()
    with pytest.raises(AssemblyError, match="coupler_rocker"):
        ws.pose.move_coordinate("theta3", 3.5)
    assert np.array_equal(ws.pose.q, before)


def test_the_first_step_asks_for_the_engine_once_while_it_builds(four_bar_workspace):
    ws = four_bar_workspace
    for value in (0.1, 0.2, 0.3):
        ws.pose.move_coordinate("theta1", value)
    (job,) = ws.jobs.running
    assert job.task == "engine" and ws.jobs.texts == [dumps(ws.document.model)]
    assert ws.pose.fast is None  # not built: the numpy path assembled every step


def test_a_tree_without_loops_asks_for_no_engine(monkeypatch, tmp_path):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    ws = workspace_of(samples.load("double_pendulum"))
    ws.pose.move_coordinate(ws.pose.mech.independent[0], 0.4)
    assert ws.jobs.running == [] and ws.pose.values()[ws.pose.mech.independent[0]] == 0.4


def test_slider_steps_waiting_are_merged_to_the_latest_value_of_each(four_bar_workspace):
    pose = four_bar_workspace.pose
    assert pose.queue_move("theta1", 0.1, 1)  # the first of a batch: the window schedules take_moves
    assert not pose.queue_move("theta1", 0.2, 1) and not pose.queue_move("platform:x", 0.01, 2)
    assert pose.take_moves() == {"theta1": (0.2, 1), "platform:x": (0.01, 2)}
    assert pose.take_moves() == {} and pose.queue_move("theta1", 0.3, 3)


def test_a_pose_edit_in_the_document_becomes_the_shown_pose(four_bar_workspace):
    ws = four_bar_workspace
    assert not ws.pose.from_document()  # already shown
    q, _ = ws.pose.move_coordinate("theta1", 0.5)
    assert not np.array_equal(q, ws.pose.mech.tree.initial_coordinates())
    for name, value in ws.pose.values().items():  # as the document's pose edit does
        set_coordinate(ws.document.model, name, value)
    ws.pose.q = np.zeros_like(q)  # a drag showed another pose since
    assert ws.pose.from_document() and np.array_equal(ws.pose.q, q)


def test_assemble_closes_the_drawn_pose_moving_only_the_dependent_coordinates(monkeypatch, tmp_path):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    model = samples.load("four_bar")
    set_coordinate(model, "theta2", 1.2)  # drawn open: the coupler off its closed angle 0.948 rad
    ws = workspace_of(model)
    moved = ws.pose.assemble_drawn()
    assert [name for name, _, _ in moved] == ["theta2"] and moved[0][1] == 1.2
    assert ws.pose.values()["theta1"] == 0.0 and pin_gap(ws) <= closure_tolerance(ws)


def test_a_parallel_machines_platform_moves_with_its_limbs_and_stops_out_of_reach(monkeypatch, tmp_path):
    """The IRSBot-2's platform 15 mm along x: the limbs follow (the loops close) and the platform's origin is
    there, z unchanged; 5 m up is out of reach, the limb that cannot follow named and the pose kept."""
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    ws = workspace_of(samples.load("irsbot2"))
    start = ws.pose.task_values()
    q = ws.pose.move_platform("x", start["x"] + 0.015)
    mech, platform = ws.pose.mech, ws.pose.follower.pkm.platform
    origin = mech.poses(q[None])[platform][1][0]
    assert np.abs(origin[[0, 2]] - [start["x"] + 0.015, start["z"]]).max() <= closure_tolerance(ws)
    assert np.abs(mech.residual(q[None])).max() <= closure_tolerance(ws)
    with pytest.raises(AssemblyError, match="limb"):
        ws.pose.move_platform("z", 5.0)
    assert ws.pose.q is q


def _finished(task: str, model: Model, job_id: int = 1) -> Job:
    """A job as the runner ends it, its result computed here (kinematics: a few seconds)."""
    result = TASKS["kinematics"](dumps(model), {}, lambda *_: None, lambda: False)
    return Job(job_id, task, task, {}, result.provenance.model_hash, state=DONE, result=result)


def test_finished_results_go_to_their_handler_filed_by_the_revision_they_ran_on(four_bar_workspace):
    ws, shown, written = four_bar_workspace, [], []
    ws.route("kinematics", shown.append)
    ws.route("c_code", written.append, filed=False)
    first = _finished("kinematics", ws.document.model)
    assert first.model_hash == ws.model_hash == model_hash(ws.document.model)
    ws.finished(first)
    assert shown == [first] and ws.current_results() == {"kinematics": first} and ws.is_current(first)
    set_parameter(ws.document.model, "L1", 0.12)  # an edit: a new revision, without results
    ws.model_changed()
    assert ws.current_results() == {} and not ws.is_current(first)
    set_parameter(ws.document.model, "L1", 0.1)  # undone: the first revision's result again
    ws.model_changed()
    assert ws.current_results() == {"kinematics": first}
    action = _finished("c_code", ws.document.model, 2)
    ws.finished(action)
    assert written == [action] and "c_code" not in ws.current_results()


def test_a_result_of_a_replaced_document_is_not_shown_but_actions_still_happen(four_bar_workspace):
    ws, shown, written = four_bar_workspace, [], []
    ws.route("kinematics", shown.append)
    ws.route("c_code", written.append, filed=False)
    running = [ws.jobs.start(task, "", {}, task) for task in ("kinematics", "c_code")]
    ws.replaced()
    for job, finished in zip(running, ("kinematics", "c_code"), strict=True):
        done = _finished(finished, ws.document.model, job.id)
        ws.finished(done)
    assert shown == [] and ws.results == {} and [j.id for j in written] == [running[1].id]


def test_jobs_without_a_result_an_engine_and_an_unrouted_task(four_bar_workspace):
    ws, shown = four_bar_workspace, []
    ws.route("kinematics", shown.append)
    ws.finished(Job(1, "kinematics", "failed", {}, ws.model_hash, state=FAILED))  # nothing to show
    ws.finished(_finished("engine", ws.document.model, 2))  # taken up by the sliders' next step
    assert shown == [] and ws.results == {}
    with pytest.raises(LookupError, match="'simulation'"):
        ws.finished(_finished("simulation", ws.document.model, 3))
    with pytest.raises(ValueError, match="'kinematics'"):
        ws.route("kinematics", shown.append)


def test_the_workspace_imports_and_runs_without_qt(tmp_path):
    """A fresh interpreter (the test process may have loaded Qt for other tests) builds a workspace, moves the
    crank and routes a finished job, then lists the window's libraries it loaded: none."""
    script = textwrap.dedent(
        f"""
        import sys, types
        from mbstudio import samples
        from mbstudio.jobs import DONE, TASKS, Job
        from mbstudio.model import dumps
        from mbstudio.workspace import Workspace

        class Starter:
            running = []
            def start(self, task, model_text, options, title):
                return None

        ws = Workspace(types.SimpleNamespace(model=samples.load("four_bar")), Starter())
        ws.rebuild()
        ws.model_changed()
        ws.pose.move_coordinate("theta1", 0.7)
        shown = []
        ws.route("kinematics", shown.append)
        result = TASKS["kinematics"](dumps(ws.document.model), {{}}, lambda *_: None, lambda: False)
        ws.finished(Job(1, "kinematics", "k", {{}}, result.provenance.model_hash, state=DONE, result=result))
        assert shown and ws.current_results()
        print(sorted(m for m in sys.modules if m.split(".")[0] in {GUI_LIBRARIES!r}))
        """
    )
    env = {**os.environ, "MBSTUDIO_CACHE": str(tmp_path)}  # no engine: the numpy path assembles
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
