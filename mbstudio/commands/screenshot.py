"""`mbstudio screenshot FILE OUT.png [--panel 3d|window] [--size WxH]`: render without a screen.

The 3d panel renders with an off-screen pyvista plotter (no display needed); the window panel needs an X
server for VTK and starts Xvfb itself when there is no DISPLAY.
"""

from __future__ import annotations

import argparse
import os

from ..model import ModelError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a model file (.mbs)")
    parser.add_argument("out", help="the PNG to write")
    parser.add_argument("--panel", choices=("3d", "window"), default="window", help="what to render")
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
    return _render_window(model, args)


def _render_3d(model, args) -> int:
    import pyvista as pv

    from ..gui.scene import Scene
    from ..kinematics import Mechanism

    mech = Mechanism(model)
    plotter = pv.Plotter(off_screen=True, window_size=args.size)
    scene = Scene(plotter)
    scene.build(mech, mech.assemble(None, strict=False)[0])
    scene.camera(args.camera)
    plotter.screenshot(args.out)
    plotter.close()
    return 0


def _render_window(model, args) -> int:
    from ..gui import headless

    if not os.environ.get("DISPLAY") and headless.start_xvfb() is None:
        raise ModelError("--panel window", "needs an X display for the 3D view and Xvfb is not installed",
                         expected="a DISPLAY, Xvfb installed, or --panel 3d")
    headless.choose_qt_platform()
    from PySide6.QtCore import QCoreApplication, QEvent

    from ..gui.app import application
    from ..gui.main_window import MainWindow

    app = application()
    window = MainWindow(model, args.file, persistent=False)
    window.resize(*args.size)
    window.show()
    app.processEvents()
    window.view.scene.camera(args.camera)
    ok = window.window_image().save(args.out, "PNG")
    window.close()
    window.deleteLater()  # VTK must let go of its window while Qt still runs
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return 0 if ok else 1
