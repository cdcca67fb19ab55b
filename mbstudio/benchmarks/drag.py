"""A body dragged in the 3D view (Ctrl + drag): the SLA's inverse kinematics per mouse move against the frame
budget."""

from __future__ import annotations

import time

import numpy as np

from .. import samples
from ..kinematics import Mechanism
from .registry import benchmark, row

DRAG_TARGET_S = 1 / 30  # a dragged body following the mouse at 30 updates per second
DRAG_UPDATES, DRAG_RISE = 60, 0.05  # the SLA's wheel centre dragged 50 mm up, in 60 mouse moves


@benchmark("drag")
def _drag(states: int) -> list[dict]:
    """The SLA's wheel centre dragged up in the 3D view (kinematics/point_drag.py): per mouse move, the damped
    least-squares steps of the independent coordinates with the loops closed, on the compiled loop equations and
    on the numpy path, and with the scene update and an off-screen render; the reference is the frame budget of
    30 updates per second. Medians over the moves. `states` does not apply."""
    from ..dynamics.engine import engine
    from ..gui.headless import offscreen_plotter
    from ..gui.view3d.scene import Scene
    from ..kinematics.fast_assembly import FastAssembly
    from ..kinematics.point_drag import PointDrag
    from ..model import dumps

    model = samples.load("sla_suspension")
    mech, text = Mechanism(model), dumps(model)
    engine(model, text)  # what the window's background job builds at the first slider step or drag
    q0 = np.asarray(mech.assemble(None), float)[0]
    local = np.asarray(mech.tree.geometry.point(model.body("3"), "K"), float)
    plotter = offscreen_plotter((800, 600))
    scene = Scene(plotter)
    scene.build(mech, q0)
    scene.camera("isometric")
    plotter.screenshot(return_img=True)  # the first frame sets the render window up

    def render(q: np.ndarray) -> None:
        scene.set_pose(q)
        plotter.ren_win.WaitForCompletion()

    compiled = PointDrag(mech, "3", local, FastAssembly.load(mech, text))
    runs = {
        "compiled": _drag_updates(compiled, q0),
        "numpy path": _drag_updates(PointDrag(mech, "3", local), q0, iterations=1),
        "compiled + render": _drag_updates(compiled, q0, render=render),
    }
    window = plotter.ren_win.GetClassName()
    plotter.close()
    extra = {"updates": DRAG_UPDATES, "rise_m": DRAG_RISE, "reference_method": f"30 per second ({window} 800x600)"}
    return [
        row(f"sla drag, {what} (s per update)", float(np.median(times)), DRAG_TARGET_S, min_s=min(times), **extra)
        for what, times in runs.items()
    ]


def _drag_updates(drag, q: np.ndarray, iterations: int | None = None, render=None) -> list[float]:
    """Seconds per mouse move of a drag of the point DRAG_RISE straight up."""
    from ..kinematics.point_drag import ITERATIONS

    start_point, times = drag.point(q), []
    for k in range(1, DRAG_UPDATES + 1):
        target = start_point + np.array([0.0, 0.0, DRAG_RISE * k / DRAG_UPDATES])
        start = time.perf_counter()
        q, _ = drag.follow(q, target, iterations or ITERATIONS)
        if render is not None:
            render(q)
        times.append(time.perf_counter() - start)
    return times
