"""The main window: model tree, properties and coordinates as docks around the 3D view; jobs, the SVD
ridge and the base-parameter table as further docks; menus, toolbar and status bar; files, undo and
autosave."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QImage, QPainter, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QWidget,
)

from .. import samples
from ..dynamics.closed_loop import actuated_indices
from ..dynamics.pkm.follow import PlatformFollower
from ..io.c_code import c_stem
from ..io.display_units import DisplayUnits
from ..io.imports import file_format
from ..io.urdf_export import urdf_text
from ..jobs import DONE, Job
from ..jobs.options import options_of
from ..jobs.results import LinearFamilyResult
from ..kinematics import Mechanism
from ..model import AssemblyError, Model, ModelError, check_outputs, dumps, loads, write_all, write_atomic
from ..model.document import Contact
from ..simulation.contact_results import recorded_arrows, recorded_contacts, support
from ..simulation.measures import applied_forces
from ..workspace import Workspace
from . import menus
from .editing.coordinates_panel import CoordinatesPanel, DrivingDialog, coordinate_range
from .editing.document import Document
from .editing.document_tree import DocumentTree
from .editing.drawing import check_distinct, link_edit, snap
from .editing.edit_actions import EditActions
from .editing.properties import PropertyEditor
from .jobs.job_options import ask_options
from .jobs.jobs_panel import JobManager, JobsPanel
from .main_thread_gc import collect_in_gui_thread
from .preferences import PreferencesDialog
from .recovery import Autosave
from .results.bode_panel import BodePanel
from .results.eom_table import EquationsTable
from .results.family_panel import FamilyPanel
from .results.handling_panel import HandlingPanel
from .results.identification_panel import IdentificationPanel
from .results.kc_panel import KCPanel
from .results.modes_panel import ModesPanel
from .results.parameter_table import ParameterTable
from .results.plots_panel import PlotsPanel
from .results.results_table import BaseParameterTable
from .results.ridge_panel import RidgePanel
from .results.study_panel import StudyPanel
from .results.suspension_panel import SuspensionPanel
from .results.workspace_panel import WorkspacePanel
from .script import model_script
from .settings import add_recent, display_units, keep_display_units, keep_options, last_options, settings
from .status_bar import ElidingStatusBar
from .view3d.animation import AnimationExport, ModeAnimation, frame_indices
from .view3d.dragging import BodyDrag
from .view3d.scene import mechanism_size
from .view3d.view import View3D

MODEL_FILTER = "MB Studio models (*.mbs)"
# the panels that show each task's result (the last one is brought to the front, the family's for a family)
RESULT_PANELS = {
    "base_parameters": ("parameter_table", "ridge", "base_table"),
    "kinematics": ("plots",),
    "simulation": ("plots",),
    "symbolic_eom": ("eom_table",),
    "linearization": ("lpv", "bode", "modes"),
    "workspace": ("workspace",),
    "task_space_eom": ("eom_table",),
    "suspension_report": ("suspension",),
    "kc_rig": ("kc",),
    "identification": ("identification",),
    "manoeuvre": ("plots", "handling"),
}
MOTION_TASKS = ("kinematics", "simulation")
FIRST_SERIES = 6  # a motion's series plotted when it arrives: its first independent coordinates
DOCK_TITLE = 30  # px of a dock's title bar and frame


class MainWindow(QMainWindow):
    """`persistent=False` (screenshots) leaves the user's settings and recovery file alone."""

    def __init__(self, model: Model | None = None, path: str | None = None, persistent: bool = True) -> None:
        super().__init__()
        collect_in_gui_thread()  # before any worker thread can collect Qt objects (gui/main_thread_gc.py)
        self.persistent = persistent
        self.document = Document(model or samples.load(), path, self)
        self.view = View3D(self)
        self.setCentralWidget(self.view)
        self.tree = DocumentTree()
        self.properties = PropertyEditor(self.document)
        self.coordinates = CoordinatesPanel()
        self.jobs = JobManager(self)
        # the document's pose, assembly, results by model hash and finished jobs' routes, without Qt (workspace/)
        self.session = Workspace(self.document, self.jobs)
        self.jobs_panel = JobsPanel(self.jobs)
        self.ridge = RidgePanel()
        self.base_table = BaseParameterTable()
        self.parameter_table = ParameterTable()
        self.eom_table = EquationsTable()
        self.plots = PlotsPanel()
        self.modes = ModesPanel()
        self.bode = BodePanel()
        self.lpv = FamilyPanel()
        self.mode_animation = ModeAnimation(self.view.set_pose, self)
        self.workspace = WorkspacePanel()
        self.suspension = SuspensionPanel()
        self.kc = KCPanel()
        self.identification = IdentificationPanel()
        self.handling = HandlingPanel()
        area = Qt.DockWidgetArea
        self.docks = {
            name: self._dock(name, title, widget, where)
            for name, title, widget, where in (
                ("tree", "Model", self.tree, area.LeftDockWidgetArea),
                ("properties", "Properties", self.properties, area.LeftDockWidgetArea),
                ("coordinates", "Coordinates", self.coordinates, area.RightDockWidgetArea),
                ("jobs", "Jobs", self.jobs_panel, area.RightDockWidgetArea),
                ("ridge", "SVD ridge", self.ridge, area.BottomDockWidgetArea),
                ("base_table", "Base parameters", self.base_table, area.BottomDockWidgetArea),
                ("parameter_table", "Inertial parameters", self.parameter_table, area.BottomDockWidgetArea),
                ("eom_table", "Equations of motion", self.eom_table, area.BottomDockWidgetArea),
                ("plots", "Time histories", self.plots, area.BottomDockWidgetArea),
                ("modes", "Modes", self.modes, area.BottomDockWidgetArea),
                ("bode", "Frequency response", self.bode, area.BottomDockWidgetArea),
                ("lpv", "Linear family", self.lpv, area.BottomDockWidgetArea),
                ("workspace", "Workspace map", self.workspace, area.BottomDockWidgetArea),
                ("suspension", "Suspension report", self.suspension, area.BottomDockWidgetArea),
                ("kc", "K&&C", self.kc, area.BottomDockWidgetArea),  # "&&": a tab takes "&" for a mnemonic
                ("identification", "Identification", self.identification, area.BottomDockWidgetArea),
                ("handling", "Handling", self.handling, area.BottomDockWidgetArea),
            )
        }
        # the model tree and the property editor keep the window's full height: editing needs the rows
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        # the results are tabs of one dock group spanning the width beside the editing docks (under the
        # coordinates and jobs): a table shows its routes side by side, a plot gets the room; drag a tab out
        # to see two at once
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.study = StudyPanel(lambda: self.document.model)
        self.docks["study"] = self._dock("study", "Parameter study", self.study, area.BottomDockWidgetArea)
        results = ("plots", "base_table", "parameter_table", "eom_table", "modes", "bode", "lpv", "workspace")
        results += ("suspension", "kc", "identification", "handling", "study")
        for name in results:
            self.tabifyDockWidget(self.docks["ridge"], self.docks[name])
        self.docks["study"].hide()  # Analysis › Parameter Study… shows it
        # shown by their first result (a family, a workspace map): at 1200 px the other tabs keep their names
        for name in ("lpv", "workspace", "suspension", "kc", "identification", "handling"):
            self.docks[name].hide()
        self.docks["base_table"].raise_()
        self.setStatusBar(ElidingStatusBar())  # a long message ends in "…" before the indicators
        self.status = {k: QLabel() for k in ("dof", "loops", "assembly")}
        for label in self.status.values():
            self.statusBar().addPermanentWidget(label)
        self.edit_actions = EditActions(self.document, self)
        self.actions = menus.build(self)
        self.units = display_units()  # the units chosen last time
        self._apply_units()
        self._connect()
        self.autosave = Autosave(self.document, self) if persistent else None
        self.resize(1400, 900)
        self.resizeDocks([self.docks["tree"], self.docks["coordinates"]], [360, 300], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["tree"], self.docks["properties"]], [480, 360], Qt.Orientation.Vertical)
        self._link_start: np.ndarray | None = None  # Draw Link's first click
        self._forces_on = False
        self._sized_results = False  # the result docks get their share of the height when first shown
        # the window's child: it dies with the window, where a single shot would call a deleted one
        self._fit_timer = QTimer(self, singleShot=True, interval=0, timeout=self._fit_coordinates)
        self._saved_geometry = None
        if persistent:
            self._restore_layout()
        self._rebuild()
        self.view.scene.camera("isometric")
        self._update_title()

    @property
    def mech(self) -> Mechanism:
        """The mechanism of the document's structure (the workspace's)."""
        return self.session.pose.mech

    @property
    def q(self) -> np.ndarray:
        """The pose shown: the document's, or one being dragged to (the workspace's)."""
        return self.session.pose.q

    @property
    def follower(self) -> PlatformFollower | None:
        """A parallel machine's task-space sliders (the workspace's); None for any other mechanism."""
        return self.session.pose.follower

    @property
    def results(self) -> dict[str, dict[str, Job]]:
        """model hash -> task -> its latest finished job (the workspace's)."""
        return self.session.results

    def show_study(self) -> None:
        """Analysis › Parameter Study…: the study panel, with the open model's parameters to choose from."""
        self.study.refresh_parameters()
        self.docks["study"].show()
        self.docks["study"].raise_()

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")  # saveState/restoreState identify docks by object name
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        dock.visibilityChanged.connect(self._whole_tab_names)  # Qt makes a dock group's tab bar when needed
        return dock

    def _whole_tab_names(self) -> None:
        """Tabs keep their whole names, with scroll arrows where they do not all fit: Qt shortens them
        ("SVD ri…", "M…") once ten results share the bottom dock group."""
        for bar in self.findChildren(QTabBar):
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    def _connect(self) -> None:
        doc = self.document
        doc.structureChanged.connect(self._rebuild)
        doc.poseChanged.connect(self._pose_from_document)
        doc.pathChanged.connect(self._update_title)
        doc.replaced.connect(self._clear_results)
        doc.stack.cleanChanged.connect(self._update_title)
        self.tree.selected.connect(self._select)
        self.tree.requested.connect(self._request)
        self.view.picked.connect(self.tree.select)
        self.properties.renamed.connect(self.tree.select)
        self.coordinates.moved.connect(self._queue_move)
        self.coordinates.platform_moved.connect(
            lambda name, value, drag: self._queue_move(f"platform:{name}", value, drag)
        )
        self.coordinates.choose.connect(self.choose_driving)
        self.view.positioned.connect(self._positioned)
        self.body_drag = BodyDrag(
            lambda: (self.mech, self.q),
            self.session.pose.fast_assembly,
            self._show_pose,
            lambda text, drag: self.document.set_pose(self._values(), text, drag),
            lambda text: self.statusBar().showMessage(text, 10000),
            self,
        )
        self.view.drag_started.connect(self.body_drag.start)
        self.view.dragged.connect(self.body_drag.move)
        self.view.drag_ended.connect(self.body_drag.end)
        doc.structureChanged.connect(self._model_changed)
        doc.poseChanged.connect(self._model_changed)
        self.jobs.finished.connect(self._job_finished)
        self._route_jobs()
        self.plots.frame.connect(self._show_frame)
        self.modes.mode_selected.connect(self._animate_mode)
        for panel in self.linear_panels:
            panel.member_picked.connect(self.pick_member)
        self.mode_animation.stopped.connect(lambda: self.view.set_pose(self.q))
        for signal in (doc.structureChanged, doc.poseChanged, doc.replaced):
            signal.connect(self.modes.select_none)
        self._model_changed()

    # ------------------------------------------------------------------ model to views
    def _rebuild(self) -> None:
        """After a structural change: a new Mechanism, assembled from the document's initial values."""
        model = self.document.model
        self.statusBar().clearMessage()  # messages were about the previous structure
        self._assembly_status(self.session.rebuild())
        folder = Path(self.document.path).parent if self.document.path else None  # relative mesh files
        problems = self.view.build(self.mech, self.q, folder)
        if problems:
            self.statusBar().showMessage("; ".join(problems))
        # a parallel machine's platform gets task-space sliders
        self.coordinates.build(self.mech, self._values(), self.follower.ranges() if self.follower else None)
        self._fit_timer.start()  # once Qt has laid out the new sliders and docks
        self.tree.rebuild(model, self.mech.dof)
        self.properties.refresh()
        self.status["dof"].setText(f"DOF {self.mech.dof}  ·")
        self.status["loops"].setText(f"loops {self.mech.topology.loops}  ·")

    def _fit_coordinates(self) -> None:
        """The Coordinates dock as tall as its sliders, up to 60 % of the column it shares with Jobs (the sliders
        scroll beyond). Sized once shown: before, the docks have no height to share."""
        if not self.isVisible():
            return
        docks = [self.docks["coordinates"], self.docks["jobs"]]
        column = sum(d.height() for d in docks)
        share = min(self.coordinates.rows.sizeHint().height() + DOCK_TITLE, round(0.6 * column))
        self.resizeDocks(docks, [share, column - share], Qt.Orientation.Vertical)

    def _values(self) -> dict[str, float]:
        return self.session.pose.values()

    def _show_values(self) -> None:
        """The sliders at the shown pose: the coordinates, and a parallel machine's platform."""
        self.coordinates.set_values(self._values(), self.session.pose.task_values())

    def _assembly_status(self, problem: str | None, stopped: bool = False, branch: str | None = None) -> None:
        """`stopped`: the shown pose still closes, but the wanted one does not. `branch`: it closes, on another
        assembly branch than the previous pose's (said in the status bar, never silently)."""
        label = self.status["assembly"]
        texts = {None: "assembled", False: "NOT assembled", True: "assembled · stopped at the last pose that closes"}
        label.setText("assembled · BRANCH CHANGED" if branch else texts[None if problem is None else stopped])
        label.setStyleSheet("" if problem is None and branch is None else "color: #b02020;")
        label.setToolTip(problem or branch or "all loops close at the shown pose")
        if problem or branch:
            self.statusBar().showMessage(problem or branch, 10000)

    def _pose_from_document(self) -> None:
        """A slider move, or its undo/redo: show the document's pose, in the 3D view, the sliders, the model
        tree's coordinate values and the property editor."""
        if self.session.pose.from_document():
            self.view.set_pose(self.q)
            self._show_values()
            self._assembly_status(None)
        self.tree.show_pose(self.document.model)
        self._draw_forces()
        if self.properties.key and self.properties.key[0] in ("coordinate", "joint"):
            self.properties.refresh()

    def _queue_move(self, name: str, value: float, drag: int) -> None:
        """Slider steps arriving while a frame is drawn are merged: only the latest wanted value of each
        coordinate is assembled and drawn, so a slow renderer drops frames instead of lagging behind."""
        if self.session.pose.queue_move(name, value, drag):
            QTimer.singleShot(0, self._apply_moves)

    def _apply_moves(self) -> None:
        for name, (value, drag) in self.session.pose.take_moves().items():
            if name.startswith("platform:"):
                self.move_platform(name.split(":", 1)[1], value, drag)
            else:
                self.move_coordinate(name, value, drag)

    def move_platform(self, name: str, value: float, drag: int = 0) -> bool:
        """A parallel machine's platform to `value` along task coordinate `name` (x, y or z, m), every limb
        following by its inverse kinematics from the shown pose; where a limb cannot follow, the slider stays
        at the last pose reached and the status bar says which limb."""
        try:
            q = self.session.pose.move_platform(name, value)
        except (AssemblyError, np.linalg.LinAlgError) as exc:
            return self._stopped(f"platform {name} = {value:.4g} m cannot be reached: {exc}")
        return self._moved(q, f"Move platform {name} to {value:.4g} m", drag)

    def move_coordinate(self, name: str, value: float, drag: int = 0) -> bool:
        """Assemble with coordinate `name` at `value`, starting from the shown pose; on failure the
        slider stays at the last pose that closed and the status bar says why."""
        try:
            q, branch = self.session.pose.move_coordinate(name, value)
        except AssemblyError as exc:
            return self._stopped(f"{name} = {value:.4g} cannot be reached: {exc}")
        unit = coordinate_range(self.mech, name)[2]
        return self._moved(q, f"Move {name} to {value:.4g} {unit}", drag, branch)

    def _stopped(self, why: str) -> bool:
        """A slider step that does not close: the sliders back at the shown pose, the reason in the status bar."""
        self._show_values()
        self._assembly_status(why, stopped=True)
        return False

    def _moved(self, q: np.ndarray, text: str, drag: int, branch: str | None = None) -> bool:
        """A slider step that closed: show pose q and put it in the document as an undoable step `text`."""
        self._show_pose(q)
        self._assembly_status(None, branch=branch)
        self.document.set_pose(self._values(), text, drag)
        return True

    def _show_pose(self, q: np.ndarray) -> None:
        """A closed pose in the 3D view and the sliders (the document gets it from the caller, or not yet)."""
        self.session.pose.q = q
        self.view.set_pose(q)
        self._show_values()

    def set_units(self, units: DisplayUnits | None = None) -> None:
        """The units the window shows and takes (Edit › Preferences…; None: View › Units' two toggles, the
        suspension measures' pair kept), applied everywhere and kept for the next session."""
        if units is None:
            angle = "deg" if self.actions["degrees"].isChecked() else "rad"
            length = "mm" if self.actions["millimetres"].isChecked() else "m"
            units = replace(self.units, angle=angle, length=length)
        self.units = units
        keep_display_units(units)
        self._apply_units()

    def edit_preferences(self) -> bool:
        """Edit › Preferences…: the units; whether they were changed."""
        dialog = PreferencesDialog(self.units, self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        self.set_units(dialog.units())
        return True

    def _apply_units(self) -> None:
        """Show `self.units` in the sliders, tree, properties, plots, tables and readouts; View › Units' toggles
        follow."""
        for name, on in (("degrees", self.units.angle == "deg"), ("millimetres", self.units.length == "mm")):
            self.actions[name].blockSignals(True)
            self.actions[name].setChecked(on)
            self.actions[name].blockSignals(False)
        self.coordinates.set_units(self.units)
        self.tree.set_units(self.units, self.document.model)
        self.properties.set_units(self.units)
        # the parameter tables stay SI (their symbolic expressions are), each row naming its unit
        panels = (self.plots, self.suspension, self.kc, self.study, self.modes, self.bode, self.lpv, self.workspace)
        for panel in (*panels, self.identification, self.handling):
            panel.set_units(self.units)

    # ------------------------------------------------------------------ 3D post-processing
    def show_labels(self, on: bool) -> None:
        """View › Labels: names of bodies and joints in the 3D view, following the pose."""
        self.view.overlays.show_labels(on, self.q)
        self.view.scene.request_render()

    def show_contact_shapes(self, on: bool) -> int:
        """View › Contact Shapes: the contacts' and contact pairs' shapes, see-through on their bodies; how many."""
        return self.view.scene.show_contacts(on)

    def show_forces(self, on: bool) -> int:
        """View › Force Arrows: the springs', point forces' and contacts' arrows at the shown instant of the run
        (at the document's pose, at rest, without one), with the contacts' support polygon and centre of
        pressure; the number of arrows. With ground contacts the camera turns to see their forces side-on."""
        self._forces_on = on
        if on and any(isinstance(f, Contact) and f.against is None for f in self.mech.model.forces):
            self.view.scene.camera("contacts")
        return self._draw_forces()

    def _draw_forces(self, frame: int | None = None) -> int:
        """Force arrows at sample `frame` of the shown run, or at the document's pose at rest (None)."""
        if not self._forces_on:
            self.view.overlays.show_support(None, None)
            return self.view.overlays.show_forces(None)
        t, q, qd, recorded = 0.0, self.q, np.zeros(len(self.q)), {}
        if frame is not None:
            data = self.plots.result.data
            t, q = float(data.t[frame]), np.asarray(data.q[frame], float)
            rates = {name.split(" [")[0]: values for name, values in data.series.items()}
            qd = np.array([rates[f"d_{c}"][frame] for c in data.coordinates], float)
            recorded = recorded_contacts(self.mech.model, data.series, frame)  # a rigid run's contact forces
        stance = support(self.mech, t, q, qd, recorded)  # a legged robot's support polygon and centre of pressure
        self.view.overlays.show_support(stance.polygon, stance.pressure_centre)
        return self.view.overlays.show_forces(recorded_arrows(applied_forces(self.mech, t, q, qd), recorded))

    def show_traces(self, on: bool) -> list[str]:
        """View › Traces: the paths of the point measures along the shown run; the measures traced."""
        shown = on and self.plots.result is not None
        return self.view.overlays.show_traces(self.plots.result.data.series if shown else None)

    def show_ghosts(self, on: bool, count: int = 6) -> int:
        """View › Ghosted Poses: translucent copies of the bodies at `count` instants of the shown run."""
        result = self.plots.result
        if not on or result is None or result.data.coordinates != list(self.mech.coordinates):
            return self.view.overlays.show_ghosts(None)
        q = np.asarray(result.data.q, float)
        return self.view.overlays.show_ghosts(q[np.linspace(0, len(q) - 1, count).round().astype(int)])

    # ------------------------------------------------------------------ drawing
    def draw_mode(self, on: bool) -> None:
        """Edit › Draw Link: the next two clicks in the 3D view are a link's start and end (snapped to the
        bodies' points or a millimetre grid on the floor)."""
        self.view.picking_points = on
        self._link_start = None
        if on:
            self.statusBar().showMessage("Draw link: click its start (a body's point, or the floor)")

    def _positioned(self, world: np.ndarray) -> None:
        if self._link_start is None:
            self._link_start = world
            self.statusBar().showMessage("Draw link: click its end (on another body's point it closes a loop)")
            return
        start, self._link_start = self._link_start, None
        self.draw_link(start, world)
        self.actions["draw_link"].setChecked(False)

    def draw_link(self, start, end, axis=None) -> str | None:
        """A link from world point `start` to `end`, turning about `axis` (default the view's direction), joined
        at start to the body whose point it snaps to (else the ground), closing the loop where end snaps to
        another body's point; one undoable edit, the new body selected. None (and a message) if refused."""
        size = mechanism_size(self.mech, self.q)
        first, second = (snap(self.mech, self.q, p, size) for p in (start, end))
        try:
            check_distinct(first, second)
            change = link_edit(self.mech, self.q, first, second, self.view.view_axis() if axis is None else axis)
            label = self.document.edit(f"Draw link from body '{first.body}'", change)
        except ModelError as exc:
            QMessageBox.warning(self, "Not drawn", f"The model was left as it was:\n\n{exc}")
            return None
        self.tree.select(("body", label))
        return label

    def assemble_pose(self) -> bool:
        """Assemble (toolbar): close the loops from the drawn pose, the document's coordinate values whether
        they close or not, moving every coordinate as little as possible and the driving ones not at all; one
        undoable step. Where nothing closes, the message names the loop and the document stays as it was."""
        try:
            moved = self.session.pose.assemble_drawn()
        except AssemblyError as exc:
            self._assembly_status(f"the drawn pose does not assemble: {exc}")
            return False
        self.view.set_pose(self.q)
        self._show_values()
        self._assembly_status(None)
        if moved:
            self.document.set_pose(self._values(), "Assemble", drag=-1)
        said = ", ".join(f"{n} {a:.4g} → {b:.4g}" for n, a, b in moved[:6]) or "it was closed already"
        self.statusBar().showMessage(f"Assembled: {said}", 10000)
        return True

    def choose_driving(self, chosen: list[str] | str | None = None, actuated: list[str] | None = None) -> bool:
        """The coordinates the sliders move and a simulation's state uses (the document's independent
        coordinates; "auto" for the best-conditioned choice) and those the actuators drive in inverse dynamics
        (`actuated`; [] for the driving ones, None to leave them), from the Coordinates panel's dialog unless
        given. A choice that cannot drive the mechanism is refused with the reason, the document unchanged."""
        if chosen is None:
            dialog = DrivingDialog(self.mech, self)
            code = dialog.exec()
            if code == QDialog.DialogCode.Rejected:
                return False
            chosen, actuated = "auto" if code == 2 else dialog.chosen(), dialog.chosen_actuated()
        text = "automatic" if chosen == "auto" else ", ".join(chosen)

        def change(model: Model) -> None:
            model.independent_coordinates = chosen if chosen == "auto" else list(chosen)
            if actuated is not None:
                model.actuated = list(actuated)
                actuated_indices(Mechanism(model))  # at least one actuator per degree of freedom

        try:
            self.document.edit(f"Drive with {text}", change)
        except ModelError as exc:
            QMessageBox.warning(self, "Not applied", f"The model was left as it was:\n\n{exc}")
            return False
        return True

    def _select(self, key: tuple) -> None:
        self.properties.show_item(key)
        self.view.scene.highlight(key)

    def _request(self, request: str, key: tuple) -> None:
        new_key = self.edit_actions.run(request, key)
        if new_key is not None:
            self.tree.select(new_key)

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.document.title}[*] — MB Studio")
        self.setWindowModified(self.document.modified)

    # ------------------------------------------------------------------ jobs and results
    def run_job(self, task: str, options: dict | None = None, title: str | None = None) -> Job:
        """Start an analysis on a snapshot of the document; its result arrives through `_job_finished`."""
        return self.jobs.start(task, dumps(self.document.model), dict(options or {}), title or task)

    def run_analysis(self, task: str, title: str) -> Job | None:
        """Ask for the options (starting from the last ones used), then run; None if the user cancels."""
        options = ask_options(task, self.document.model, last_options(task), self, self.units)
        if options is None:
            return None
        keep_options(task, options)
        return self.run_job(task, options, title)

    def _route_jobs(self) -> None:
        """What a finished job does, by its task: a result fills its panels (RESULT_PANELS) and is filed under its
        model hash; the others act once (docs/architecture.md, "The workspace")."""
        for task in RESULT_PANELS:
            self.session.route(task, self._result_finished)
        self.session.route("c_code", self._write_c, filed=False)
        self.session.route("urdf_import", self._install_import, filed=False)
        self.session.route("equilibrium", self._equilibrium_found, filed=False)

    def _job_finished(self, job: Job) -> None:
        """Every job's end, in any state: to the handler of its task (Workspace.finished)."""
        self.session.finished(job)

    def _result_finished(self, job: Job) -> None:
        """A result, filed by the workspace: its panels show it, the last one in front, and the status bar says
        how it ended."""
        self._show(job)
        front = self.docks["lpv" if isinstance(job.result.data, LinearFamilyResult) else RESULT_PANELS[job.task][-1]]
        front.show()
        front.raise_()
        ended = f"finished in {job.elapsed:.1f} s" if job.state == DONE else f"{job.message} after {job.elapsed:.1f} s"
        notes = job.result.notes  # a simulation's: limits passed that nothing enforces, ...
        self.statusBar().showMessage("; ".join([f"{job.title} {ended}", *notes]), 15000 if notes else 5000)

    def _show(self, job: Job) -> None:
        for name in RESULT_PANELS[job.task]:
            getattr(self, name).show_result(job.result)
        if job.task in MOTION_TASKS and len(self.plots.kept) == 1:
            # what the sliders move, to start with: the first six (a floating robot's base), as more legend rows
            # than that leave the curves no room
            self.plots.select_series(self.mech.independent[:FIRST_SERIES])
        if job.task in MOTION_TASKS and job.result.data.coordinates == list(self.mech.coordinates):
            self.view.cover(job.result.data.q, self.q)  # a robot walking off its floor stays on it and in view
        self._mark_stale()

    def _show_frame(self, q: np.ndarray) -> None:
        """A frame of an animation or the time cursor, drawn if the motion belongs to this structure; the
        document's pose is not changed (moving a slider shows it again)."""
        data = self.plots.result.data
        if data.coordinates == list(self.mech.coordinates):
            self.view.show_frame(q)  # a body sliding or walking off the view is followed
            self._draw_forces(self.plots.index)

    @property
    def linear_panels(self) -> tuple:
        return self.lpv, self.bode, self.modes

    def pick_member(self, k: int) -> None:
        """Member k of a linear family, picked in any of its panels: all of them show it."""
        for panel in self.linear_panels:
            panel.show_member(k)

    def _animate_mode(self, k: int) -> None:
        """A mode selected in the Modes panel: its shape in the 3D view, if it belongs to this structure."""
        data = self.modes.data if self.modes.result is not None else None
        if k < 0 or data is None or data.coordinates != list(self.mech.coordinates):
            self.mode_animation.stop()
            return
        self.mode_animation.start(np.asarray(data.poses, float)[k])

    def _equilibrium_found(self, job: Job) -> None:
        """Analysis › Equilibrium…: the pose moves there as one undoable edit (or is only shown), and what was
        found is said: held forces, neutral directions, the modes' stability."""
        values, summary = job.result.data.values, job.result.data.summary
        current = self.session.is_current(job)
        if options_of("equilibrium", job.options).move and current:
            self.document.set_pose({n: values[n] for n in self.mech.coordinates}, "Move to the equilibrium", drag=-1)
        elif current:
            self.view.set_pose(np.array([values[n] for n in self.mech.coordinates]))  # until the next edit or step
        stale = "" if current else "The model was edited while it ran: the pose was left as it is.\n\n"
        self.statusBar().showMessage(f"Equilibrium found in {job.elapsed:.1f} s", 8000)
        box = QMessageBox(QMessageBox.Icon.Information, "Equilibrium", stale + summary, parent=self)
        box.setObjectName("equilibrium_report")
        box.open()

    def _model_changed(self) -> None:
        """Results belong to the model revision they were computed on: after an edit they are stale, and
        undo or redo back to a revision shows that revision's tables again (the time histories stay, since
        showing them would move the 3D view away from the document's pose)."""
        self.jobs.set_model_hash(self.session.model_changed())
        for task, job in self.session.current_results().items():
            front = getattr(self, RESULT_PANELS[task][-1])  # it holds every result of its task (not so the family's)
            if task not in MOTION_TASKS and front.result is not job.result:
                self._show(job)
        self._mark_stale()

    def export_c(self, folder: str | None = None, language: str = "c") -> Job | None:
        """File › Export › Equations as C (or as a numpy module): a job builds the sources, `_write_c` writes
        them into `folder`."""
        if folder is None:
            what = {"numpy": "numpy module", "fmu": "FMU"}.get(language, "C files")
            folder = QFileDialog.getExistingDirectory(self, f"Folder for the {what}")
            if not folder:
                return None
        stem = c_stem(Path(self.document.path).stem if self.document.path else self.document.model.name)
        suffixes = {"numpy": (".py",), "fmu": (".fmu",)}.get(language, (".h", ".c"))
        paths = [str(Path(folder) / f"{stem}{suffix}") for suffix in suffixes]
        try:
            check_outputs(paths, [self.document.path] if self.document.path else [])
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot export", str(exc))
            return None
        title = {"numpy": "Equations as a numpy module", "fmu": "Model as FMU"}.get(language, "Equations as C")
        return self.run_job("c_code", {"stem": stem, "folder": folder, "language": language}, title)

    def _write_c(self, job: Job) -> None:
        folder = Path(job.options["folder"])
        try:
            write_all({folder / name: text for name, text in job.result.data.files.items()})
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot export", str(exc))
            return
        what = {"numpy": "numpy module", "fmu": "FMU"}.get(job.options.get("language"), "C code")
        self.statusBar().showMessage(f"{what} written to {folder} in {job.elapsed:.1f} s", 8000)

    def export_urdf(self, path: str | None = None) -> bool:
        """File › Export › Model as URDF: the tree, its notes (what URDF cannot hold) in the status bar."""
        return self._export_text("URDF", urdf_text, "URDF robots (*.urdf)", ".urdf", path)

    def export_mjcf(self, path: str | None = None) -> bool:
        """File › Export › Model as MJCF: the model for MuJoCo, loops as equalities; notes in the status bar."""
        from ..io.mjcf_export import mjcf_text

        return self._export_text("MJCF", mjcf_text, "MuJoCo models (*.xml)", ".xml", path)

    def _export_text(self, kind: str, writer, filter_: str, suffix: str, path: str | None) -> bool:
        if path is None:
            name = f"{self.document.model.name}{suffix}"
            path, _ = QFileDialog.getSaveFileName(self, f"Export model as {kind}", name, filter_)
            if not path:
                return False
        folder = Path(self.document.path).parent if self.document.path else None
        try:
            check_outputs([path], [self.document.path] if self.document.path else [])
            text, notes = writer(self.document.model, folder)
            write_atomic(path, text)
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot export", str(exc))
            return False
        self.statusBar().showMessage(f"{kind} written to {path}" + "".join(f"; {n}" for n in notes), 10000)
        return True

    def export_fmu(self, folder: str | None = None) -> Job | None:
        """File › Export › Model as FMU: a job compiles the FMU (FMI 2.0, Model Exchange and Co-Simulation),
        `_write_c` writes it into `folder`."""
        return self.export_c(folder, language="fmu")

    def import_urdf(self, path: str | None = None, options: dict | None = None) -> Job | None:
        """File › Import: a job reads the URDF robot or MJCF model; `_install_import` opens it as a new, unsaved
        document. For URDF, `options` (asked for when not given: UrdfImportDialog) hold the folders of package://
        meshes ("package_paths"), "fixed_base" and "repair_inertias"."""
        if path is None:
            filters = "URDF or MJCF (*.urdf *.xml *.mjcf);;URDF robots (*.urdf);;MuJoCo models (*.xml *.mjcf)"
            path, _ = QFileDialog.getOpenFileName(self, "Import URDF or MJCF", "", filters)
            if not path:
                return None
        try:
            kind = file_format(path)
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot import", str(exc))
            return None
        if options is None and kind == "URDF":
            options = ask_options("urdf_import", self.document.model, last_options("urdf_import"), self)
            if options is None:
                return None
            keep_options("urdf_import", options)
        return self.run_job("urdf_import", {**(options or {}), "path": path}, f"Import {Path(path).name}")

    def _install_import(self, job: Job) -> None:
        if not self.maybe_save():
            return
        self.document.replace(loads(job.result.data.model), None)
        self.view.scene.camera("isometric")
        notes = job.result.data.notes
        self.statusBar().showMessage(f"Imported {job.options['path']}: {len(notes)} note(s)", 10000)
        if notes:  # not modal: what the import changed or left out, for the user to read and keep
            kind = "MJCF" if "MJCF" in job.result.provenance.method else "URDF"
            box = QMessageBox(QMessageBox.Icon.Information, f"{kind} import", "\n\n".join(notes), parent=self)
            box.setObjectName("urdf_notes")
            box.open()

    def export_animation(self, path: str | None = None, fps: float = 25.0) -> AnimationExport | None:
        """File › Export › Animation: the current run of the time histories, from the 3D view as shown, as GIF
        or MP4; frames render one per timer tick with a progress dialog, then encode in a worker thread."""
        result = self.plots.result
        if result is None or result.data.coordinates != list(self.mech.coordinates):
            QMessageBox.information(self, "Nothing to animate", "Run a kinematics or simulation job first.")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export animation", "motion.gif", "GIF (*.gif);;MP4 (*.mp4)")
            if not path:
                return None
        poses = np.asarray(result.data.q, float)[frame_indices(np.asarray(result.data.t, float), fps)]
        try:
            export = AnimationExport(self.view.render_pose, poses, path, fps, self)
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot export", str(exc))
            return None
        export.finished.connect(self._animation_written)
        export.start()
        return export

    def _animation_written(self, ok: bool, message: str) -> None:
        self.view.set_pose(self.q)  # back to the document's pose
        self.statusBar().showMessage(message, 10000)
        if not ok and "cancelled" not in message:
            QMessageBox.critical(self, "Animation export failed", message)

    def export_result(self, panel_name: str, fmt: str, path: str | None = None) -> bool:
        """File › Export: the panel's result as `fmt` (the panel reports a failed write itself)."""
        panel = getattr(self, panel_name)
        if panel.result is None:
            QMessageBox.information(self, "Nothing to export", "Run the analysis first (Analysis menu).")
            return False
        return panel.export(fmt, path)

    def _clear_results(self) -> None:
        """Results belong to their document: another one in the window clears them (running jobs go on and
        are kept in the jobs panel, but their results are not shown over the new model)."""
        self.session.replaced()
        for panel in {getattr(self, name) for names in RESULT_PANELS.values() for name in names}:
            panel.clear()

    def _mark_stale(self) -> None:
        for panel in {getattr(self, name) for names in RESULT_PANELS.values() for name in names}:
            if panel.result is not None:
                panel.set_stale(panel.result.provenance.model_hash != self.session.model_hash)

    def confirm_running_jobs(self) -> bool:
        """Ask before closing would cancel running jobs; True means go on (and they are cancelled)."""
        running = [job for job in self.jobs.running if job.task != "engine"]  # a background build just stops
        if not running:
            self.jobs.cancel_all()
            return True
        buttons = QMessageBox.StandardButton
        names = ", ".join(job.title for job in running)
        answer = QMessageBox.question(
            self,
            "Jobs are running",
            f"{len(running)} job(s) still running ({names}). Cancel them and close?",
            buttons.Yes | buttons.No,
            buttons.No,
        )
        if answer != buttons.Yes:
            return False
        self.jobs.cancel_all()
        return True

    # ------------------------------------------------------------------ files
    def maybe_save(self) -> bool:
        """Ask before unsaved changes could be lost; False means the user cancelled."""
        if not self.document.modified:
            return True
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"Save the changes to {self.document.title}?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        if answer == buttons.Save:
            return self.save()
        return answer == buttons.Discard

    def new_document(self) -> None:
        if self.maybe_save():
            self.document.replace(Model(), None)

    def open_sample(self, name: str) -> None:
        """A sample opens as an unsaved copy, so Save never overwrites the bundled file."""
        if self.maybe_save():
            self.document.replace(samples.load(name), None)
            self.view.scene.camera("isometric")

    def open_file(self, path: str | None = None) -> bool:
        if not self.maybe_save():
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open model", "", MODEL_FILTER)
            if not path:
                return False
        try:
            self.document.open(path)
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot open", f"{path} was not opened:\n\n{exc}")
            return False
        add_recent(path)
        self.view.scene.camera("isometric")
        return True

    def save(self) -> bool:
        return self.save_as(self.document.path) if self.document.path else self.save_as()

    def save_as(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Save model as", f"{self.document.model.name}.mbs", MODEL_FILTER
            )
            if not path:
                return False
        try:
            self.document.save(path)
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot save", str(exc))
            return False
        add_recent(path)
        return True

    def save_script(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Save as Python script", f"{self.document.model.name}.py", "Python scripts (*.py)"
            )
            if not path:
                return False
        target = Path(self.document.path or path).with_suffix(".mbs").name
        try:
            write_atomic(path, model_script(self.document.model, target))  # as the model's own save
        except ModelError as exc:
            QMessageBox.critical(self, "Cannot save", str(exc))
            return False
        return True

    # ------------------------------------------------------------------ images
    def window_image(self) -> QImage:
        """The whole window as an image, the 3D view rendered into it (widget grabs miss OpenGL surfaces
        on some platforms, e.g. Qt's offscreen one)."""
        image = self.grab().toImage()
        painter = QPainter(image)
        origin = self.view.mapTo(self, QPoint(0, 0)) * self.devicePixelRatioF()
        view = self.view.image()
        painter.drawImage(
            origin,
            view.scaled(
                round(self.view.width() * self.devicePixelRatioF()),
                round(self.view.height() * self.devicePixelRatioF()),
            ),
        )
        painter.end()
        return image

    def save_screenshot(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save view as PNG", "view.png", "PNG images (*.png)")
            if not path:
                return False
        return self.view.image().save(path, "PNG")

    # ------------------------------------------------------------------ layout and closing
    def _restore_layout(self) -> None:
        s = settings()
        self._saved_geometry = s.value("window/geometry")
        if self._saved_geometry is not None:
            self.restoreGeometry(self._saved_geometry)
        if s.value("window/state") is not None:
            self.restoreState(s.value("window/state"))
            self._sized_results = True

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        """Before the first show the window's final height is unknown, so the docks would keep their
        minimum height and the 3D view take the rest."""
        super().showEvent(event)
        self._whole_tab_names()
        if self._saved_geometry is not None:  # again: before the show, the docks' sizes can widen the window
            self.restoreGeometry(self._saved_geometry)
            self._saved_geometry = None
        if not self._sized_results:
            self._sized_results = True
            share = round(0.38 * self.height())
            self.resizeDocks([self.docks["ridge"]], [share], Qt.Orientation.Vertical)
            self._fit_timer.start()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        if not self.confirm_running_jobs() or not self.maybe_save():
            event.ignore()
            return
        if self.persistent:
            s = settings()
            s.setValue("window/geometry", self.saveGeometry())
            s.setValue("window/state", self.saveState())
            self.autosave.discard()
        self.view.close_view()
        event.accept()
