"""`mbstudio screenshot FILE OUT.png [--panel 3d|ridge|plots|window] [--size WxH]`: render without a screen.

The 3d panel renders with an off-screen pyvista plotter (no display needed); the window panel needs an X
server for VTK and starts Xvfb itself when there is no DISPLAY. The ridge and plots panels run their job's
task in this process (the same task functions the Analysis menu starts as jobs) and draw its result with
the window's own panel; they need no X server (Qt draws off-screen without one).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..model import ModelError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("out", help="the PNG to write")
    parser.add_argument("--panel", choices=("3d", "ridge", "plots", "window"), default="window", help="what to render")
    parser.add_argument("--size", default="1400x900", type=_size, help="image size WxH in pixels")
    parser.add_argument("--camera", choices=("front", "side", "top", "isometric"), default="isometric")


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 1280x800") from None
    if w < 16 or h < 16:
        raise argparse.ArgumentTypeError(f"{text!r} is too small; at least 16x16")
    return w, h


def run(args: argparse.Namespace) -> int:
    model = load(args.file)
    if args.panel == "3d":
        return _render_3d(model, args)
    if args.panel in PANELS:
        return _render_panel(model, args)
    return _render_window(model, args)


def _render_3d(model, args) -> int:
    from ..gui.headless import offscreen_plotter
    from ..gui.view3d.scene import Scene
    from ..kinematics import Mechanism

    mech = Mechanism(model)
    plotter = offscreen_plotter(args.size)
    scene = Scene(plotter)
    scene.build(mech, mech.assemble(None, strict=False)[0], Path(args.file).parent)  # relative mesh files
    for problem in scene.problems:
        print(f"mbstudio screenshot: note: {problem}", file=sys.stderr)
    scene.camera(args.camera)
    plotter.screenshot(args.out)
    plotter.close()
    return 0


# the ridge: DP and VP at 30 digits on a modest number of samples, so a screenshot takes seconds
RIDGE_OPTIONS = {"method": "all", "digits": [30], "samples": 60}
PANELS = {"ridge": ("base_parameters", RIDGE_OPTIONS), "plots": ("kinematics", {})}


def _render_panel(model, args) -> int:
    """Run the panel's task in-process, then draw its result in the panel and grab that at --size."""
    from ..jobs.tasks import TASKS
    from ..model import dumps

    task, options = PANELS[args.panel]
    result = TASKS[task](dumps(model), dict(options), lambda fraction, message="": None, lambda: False)
    from ..gui import headless

    headless.choose_qt_platform()
    from PySide6.QtCore import QCoreApplication, QEvent, Qt

    from ..gui.app import application

    app = application()
    if args.panel == "ridge":
        from ..gui.results.ridge_panel import RidgePanel

        panel = RidgePanel()
    else:
        from ..gui.results.plots_panel import PlotsPanel
        from ..kinematics import Mechanism

        panel = PlotsPanel()
    panel.resize(*args.size)
    panel.show()
    app.processEvents()
    panel.show_result(result)
    if args.panel == "plots":
        panel.select_series(Mechanism(model).independent)
    app.processEvents()
    image = panel.grab().toImage()
    if (image.width(), image.height()) != args.size:  # a device pixel ratio other than 1
        image = image.scaled(
            *args.size, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    ok = image.save(args.out, "PNG")
    panel.close()
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return 0 if ok else 1


def _render_window(model, args) -> int:
    from ..gui import headless

    if not os.environ.get("DISPLAY") and headless.start_xvfb() is None:
        raise ModelError(
            "--panel window",
            "needs an X display for the 3D view and Xvfb is not installed",
            expected="a DISPLAY, Xvfb installed, or --panel 3d",
        )
    headless.choose_qt_platform()
    from PySide6.QtCore import QCoreApplication, QEvent

    from ..gui.app import application
    from ..gui.main_window import MainWindow

    app = application()
    window = MainWindow(model, args.file, persistent=False)
    window.show()
    window.resize(*args.size)  # after the show: before it, the docks' initial sizes can widen the window
    app.processEvents()
    window.view.scene.camera(args.camera)
    ok = window.window_image().save(args.out, "PNG")
    window.close()
    window.deleteLater()  # VTK must let go of its window while Qt still runs
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return 0 if ok else 1
