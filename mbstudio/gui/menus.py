"""Menus, toolbar and shortcuts of the main window (passed in as a QMainWindow: this module does not import
main_window back, which builds its menus here)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox

from .. import __version__, samples
from ..jobs.options import BaseParametersOptions
from .results.panel_parts import FORMAT_NAMES
from .settings import recent_files

Key = QKeySequence.StandardKey
CAMERAS = (("front", "Front", "1"), ("side", "Side", "2"), ("top", "Top", "3"), ("isometric", "Isometric", "0"))
# Analyses with an options dialog: name, menu text, job, shortcut
ASKED = (
    ("kinematics_options", "&Kinematics along Trajectory…", "kinematics", None),
    ("basepar_options", "&Base Parameters…", "base_parameters", "Ctrl+B"),
    ("simulate_options", "&Simulate…", "simulation", "Ctrl+R"),
    ("eom_options", "Symbolic &Equations of Motion…", "symbolic_eom", None),
    ("equilibrium_options", "E&quilibrium…", "equilibrium", None),
    ("linearize_options", "&Linearise…", "linearization", None),
    ("workspace_options", "&Workspace Map…", "workspace", None),
    ("suspension_options", "Suspension &Report…", "suspension_report", None),
    ("kc_options", "&K&&C…", "kc_rig", None),
    ("identify_options", "&Identify…", "identification", None),
    ("manoeuvre_options", "&Manoeuvre…", "manoeuvre", None),
)
# Quick runs with fixed options (the others the task's defaults, jobs/options.py): name, menu text, job, options
DIGITS = " and ".join(map(str, BaseParametersOptions().digits))
ANALYSES = (
    ("kinematics", "Kinematics along the First Trajectory", "kinematics", {}),
    ("basepar_all", f"Base Parameters: DP, VP at {DIGITS} Digits, Symbolic", "base_parameters", {"method": "all"}),
    ("basepar_dp", "Base Parameters: Double Precision", "base_parameters", {"method": "dp"}),
    ("basepar_vp", f"Base Parameters: Variable Precision, {DIGITS} Digits", "base_parameters", {"method": "vp"}),
    ("basepar_symbolic", "Base Parameters: Symbolic", "base_parameters", {"method": "symbolic"}),
    ("simulate", "Simulate 1 s from Rest", "simulation", {"t_end": 1.0}),
    ("eom", "Symbolic Equations of Motion, Unsimplified", "symbolic_eom", {"simplify": False}),
    ("task_space_eom", "Task-Space Equations of a Parallel Machine", "task_space_eom", {}),
)
# File › Export: window attribute of the panel, menu text, formats (each panel's export(fmt, path) writes them)
EXPORTS = (
    ("base_table", "&Base Parameters", ("csv", "json", "tex")),
    ("parameter_table", "&Inertial Parameters", ("csv", "json", "tex")),
    ("eom_table", "&Equations of Motion", ("csv", "json", "tex")),
    ("ridge", "SVD &Ridge", ("csv", "json", "png", "svg")),
    ("plots", "&Time Histories", ("csv", "json")),
    ("modes", "&Modes and Linear Model", ("csv", "json", "mat", "npz", "png")),
    ("bode", "&Frequency Response", ("csv", "json", "png", "svg")),
    ("lpv", "&Linear Family (LPV)", ("csv", "json", "mat", "npz", "png", "svg")),
    ("workspace", "&Workspace Map", ("csv", "json", "png", "svg")),
    ("suspension", "&Suspension Report", ("pdf", "png", "svg", "csv")),
    ("kc", "&K&&C Report", ("pdf", "png", "svg", "csv")),
    ("identification", "I&dentification", ("csv", "json")),
    ("handling", "&Handling Diagram", ("png", "svg", "csv")),
)
ABOUT = """<h3>MB Studio {version}</h3>
<p>Mechanism analysis: closed-loop kinematics, equations of motion, simulation and base inertial parameters,
in double precision, variable precision and symbolic arithmetic, with the singular-value spectrum (the SVD ridge)
that decides the numerical rank.</p>
<p>Every analysis also runs headless: <code>mbstudio --help</code> lists the commands; the Python API is the
<code>mbstudio</code> package (File › Save as Script shows it for the open model).</p>"""


def _action(window: QMainWindow, text: str, slot, shortcut=None, tip: str = "") -> QAction:
    action = QAction(text, window)
    action.triggered.connect(lambda _=False: slot())
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.setStatusTip(tip)
    return action


def _toggle(window: QMainWindow, text: str, slot, tip: str, shortcut: str | None = None) -> QAction:
    """A checkable action: `slot(checked)` whenever it turns on or off."""
    action = QAction(text, window)
    action.setCheckable(True)
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.setStatusTip(tip)
    action.toggled.connect(slot)
    return action


def build(window: QMainWindow) -> dict[str, QAction]:
    """Create the menus and toolbar; returns the actions by name (for tests and later panels)."""
    a = {
        "new": _action(window, "&New", window.new_document, Key.New, "An empty model"),
        "open": _action(window, "&Open…", window.open_file, Key.Open, "Open a .mbs model"),
        "save": _action(window, "&Save", window.save, Key.Save),
        "save_as": _action(window, "Save &As…", window.save_as, Key.SaveAs),
        "save_script": _action(
            window,
            "Save as &Script…",
            window.save_script,
            None,
            "A Python script that rebuilds this model through the mbstudio API",
        ),
        "quit": _action(window, "&Quit", window.close, Key.Quit),
        "undo": window.document.stack.createUndoAction(window, "&Undo"),
        "redo": window.document.stack.createRedoAction(window, "&Redo"),
        "fit": _action(window, "&Fit to View", window.view.scene.fit, "F"),
        "draw_link": _toggle(
            window,
            "&Draw Link",
            window.draw_mode,
            "click a link's start and end in the 3D view: a body joined at its start, closing a loop at its end",
            "Ctrl+L",
        ),
        "assemble": _action(
            window,
            "&Assemble",
            window.assemble_pose,
            "Ctrl+Shift+A",
            "close the loops from the drawn pose, moving the driving coordinates not at all and the others least",
        ),
        "driving": _action(
            window,
            "&Driving Coordinates…",
            window.choose_driving,
            None,
            "the coordinates the sliders move and a simulation's state uses",
        ),
        "screenshot": _action(window, "Save View as &PNG…", window.save_screenshot, "Ctrl+P"),
        "import_urdf": _action(
            window,
            "&Import URDF or MJCF…",
            window.import_urdf,
            tip="a robot from URDF or a MuJoCo model (MJCF, loops from its equalities) as a new model",
        ),
        "export_urdf": _action(window, "Model as &URDF…", window.export_urdf, tip="the tree model as URDF"),
        "export_mjcf": _action(
            window, "Model as &MJCF…", window.export_mjcf, tip="the model for MuJoCo, its loops as equalities"
        ),
        "export_fmu": _action(
            window,
            "Model as &FMU…",
            window.export_fmu,
            tip="an FMI 2.0 FMU (Model Exchange and Co-Simulation) for Simulink, Modelica tools and Simscape",
        ),
        "export_animation": _action(
            window,
            "&Animation (GIF, MP4)…",
            window.export_animation,
            tip="the shown run of the time histories, from the 3D view as it is",
        ),
        "export_numpy": _action(
            window,
            "Equations as &numpy module…",
            lambda: window.export_c(language="numpy"),
            tip="the same functions as the C export, as plain numpy that evaluates batches of states",
        ),
        "export_c": _action(
            window,
            "Equations as &C…",
            window.export_c,
            tip="forward dynamics, state equation, loop closure, RNEA, CRBA, ABA and regressor as C files",
        ),
    }
    a["undo"].setShortcut(Key.Undo)
    a["redo"].setShortcut(Key.Redo)
    for name, text, shortcut in CAMERAS:
        a[f"camera_{name}"] = _action(window, f"&{text}", lambda n=name: window.view.scene.camera(n), shortcut)

    file_menu = window.menuBar().addMenu("&File")
    file_menu.addActions([a["new"], a["open"]])
    recent = file_menu.addMenu("Open &Recent")
    recent.aboutToShow.connect(lambda: _fill_recent(window, recent))
    sample_menu = file_menu.addMenu("Sa&mples")
    for name in samples.names():
        sample_menu.addAction(_action(window, name, lambda n=name: window.open_sample(n)))
    file_menu.addAction(a["import_urdf"])
    file_menu.addSeparator()
    file_menu.addActions([a["save"], a["save_as"], a["save_script"]])
    export_menu = file_menu.addMenu("&Export")
    _fill_export(window, export_menu, a)
    file_menu.addSeparator()
    file_menu.addAction(a["quit"])

    edit_menu = window.menuBar().addMenu("&Edit")
    edit_menu.addActions([a["undo"], a["redo"]])
    edit_menu.addSeparator()
    edit_menu.addActions([a["draw_link"], a["assemble"]])
    a["make_compliant"] = _action(
        window,
        "Make &Compliant",
        lambda: window._request("make_compliant", window.tree.current_key()),
        None,
        "the selected joint becomes a free joint held by a stiff bushing at its nominal position",
    )
    edit_menu.addAction(a["make_compliant"])
    edit_menu.addSeparator()
    a["preferences"] = _action(window, "&Preferences…", window.edit_preferences, "Ctrl+,", "the units shown")
    a["preferences"].setMenuRole(QAction.MenuRole.PreferencesRole)
    edit_menu.addAction(a["preferences"])

    analysis_menu = window.menuBar().addMenu("&Analysis")
    for name, text, task, shortcut in ASKED:
        a[name] = _action(
            window,
            text,
            lambda t=task, ti=text: window.run_analysis(t, ti.replace("&", "").rstrip("…")),
            shortcut,
            "Choose the options, then it runs as a job: see the Jobs panel",
        )
        analysis_menu.addAction(a[name])
    a["study"] = _action(
        window,
        "Parameter &Study…",
        window.show_study,
        None,
        "Vary model parameters over a grid and run an analysis at every point, on Dask",
    )
    analysis_menu.addAction(a["study"])
    analysis_menu.insertActions(analysis_menu.actions()[0], [a["driving"]])
    analysis_menu.insertSeparator(analysis_menu.actions()[1])
    quick = analysis_menu.addMenu("&Quick Runs")
    for name, text, task, options in ANALYSES:
        a[name] = _action(
            window,
            text,
            lambda t=task, o=options, ti=text: window.run_job(t, o, ti),
            None,
            "Runs as a job with these options: see the Jobs panel",
        )
        quick.addAction(a[name])

    view_menu = window.menuBar().addMenu("&View")
    camera_menu = view_menu.addMenu("&Camera")
    camera_menu.addActions([a[f"camera_{n}"] for n, _, _ in CAMERAS])
    view_menu.addActions([a["fit"], a["screenshot"]])
    view_menu.addSeparator()
    for name, text, slot, tip in (
        ("labels", "&Labels", window.show_labels, "names of bodies and joints in the 3D view"),
        ("forces", "&Force Arrows", window.show_forces, "springs' tensions and point forces at the shown instant"),
        ("contacts", "&Contact Shapes", window.show_contact_shapes, "contacts' and pairs' shapes, see-through"),
        ("traces", "&Traces of Point Measures", window.show_traces, "their paths along the shown run"),
        ("ghosts", "&Ghosted Poses", window.show_ghosts, "six instants of the shown run, translucent"),
    ):
        a[name] = _toggle(window, text, slot, tip)
        view_menu.addAction(a[name])
    a["contacts"].setChecked(True)  # drawn unless turned off
    units = view_menu.addMenu("&Units")  # the quick choice; Edit › Preferences… has the suspension measures' too
    for name, text in (("degrees", "Angles in &Degrees"), ("millimetres", "Lengths in &Millimetres")):
        a[name] = _toggle(window, text, lambda _: window.set_units(), "in the sliders, tree, properties and plots")
        units.addAction(a[name])
    units.addAction(_action(window, "&More…", window.edit_preferences, None, "Edit › Preferences… › Units"))
    view_menu.addSeparator()
    for dock in window.docks.values():
        view_menu.addAction(dock.toggleViewAction())

    help_menu = window.menuBar().addMenu("&Help")
    a["about"] = _action(window, "&About MB Studio", lambda: _about(window))
    help_menu.addAction(a["about"])

    toolbar = window.addToolBar("Main")
    toolbar.setObjectName("toolbar_main")
    toolbar.addActions([a["new"], a["open"], a["save"]])
    toolbar.addSeparator()
    toolbar.addActions(_stack_buttons(window))
    toolbar.addSeparator()
    toolbar.addActions([a["draw_link"], a["assemble"]])
    toolbar.addSeparator()
    toolbar.addActions([a["fit"], *(a[f"camera_{n}"] for n, _, _ in CAMERAS), a["screenshot"]])
    return a


def _stack_buttons(window: QMainWindow) -> list[QAction]:
    """Toolbar twins of Undo/Redo with fixed labels, so the toolbar does not change width with every edit;
    their tooltips name the edit, as the menu items do."""
    stack = window.document.stack
    undo, redo = QAction("Undo", window), QAction("Redo", window)
    undo.triggered.connect(stack.undo)
    redo.triggered.connect(stack.redo)
    undo.setEnabled(False)
    redo.setEnabled(False)
    stack.canUndoChanged.connect(undo.setEnabled)
    stack.canRedoChanged.connect(redo.setEnabled)
    stack.undoTextChanged.connect(lambda text: undo.setToolTip(f"Undo {text}"))
    stack.redoTextChanged.connect(lambda text: redo.setToolTip(f"Redo {text}"))
    return [undo, redo]


def _fill_export(window: QMainWindow, menu: QMenu, actions: dict[str, QAction]) -> None:
    """One submenu per result panel; its entries are enabled only while the panel holds a result."""
    for attr, text, formats in EXPORTS:
        sub = menu.addMenu(text)
        for fmt in formats:
            action = _action(window, f"as {FORMAT_NAMES[fmt]}…", lambda p=attr, f=fmt: window.export_result(p, f))
            actions[f"export_{attr}_{fmt}"] = action
            sub.addAction(action)
        sub.aboutToShow.connect(
            lambda s=sub, p=attr: [x.setEnabled(getattr(window, p).result is not None) for x in s.actions()]
        )
    menu.addSeparator()
    menu.addAction(actions["export_animation"])
    menu.addAction(actions["export_urdf"])
    menu.addAction(actions["export_mjcf"])
    menu.addAction(actions["export_fmu"])
    menu.addAction(actions["export_c"])
    menu.addAction(actions["export_numpy"])
    menu.addAction(actions["screenshot"])


def _about(window: QMainWindow) -> None:
    QMessageBox.about(window, "About MB Studio", ABOUT.format(version=__version__))


def _fill_recent(window: QMainWindow, menu: QMenu) -> None:
    menu.clear()
    for path in recent_files():
        menu.addAction(_action(window, path, lambda p=path: window.open_file(p)))
    if menu.isEmpty():
        menu.addAction("(none)").setEnabled(False)
