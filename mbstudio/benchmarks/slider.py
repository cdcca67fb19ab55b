"""The window's slider steps on the SLA against the frame budget."""

from __future__ import annotations

import time

import numpy as np

from .. import samples
from ..kinematics import Mechanism
from .registry import benchmark, row

# ---------------------------------------------------------------------------------------- 3D view
SLIDER_TARGET_S = 1 / 25  # a slider step within one frame at 25 frames per second looks smooth
SLIDER_STEPS, SLIDER_STEP_DEG = 50, 0.5


@benchmark("slider")
def _slider(states: int) -> list[dict]:
    """The SLA moved as by the window's first slider: per step, the assembly from the previous pose and the
    scene update with an off-screen render of the view (finished on the OpenGL side); the reference is the
    frame budget. Medians over the steps, which other load on the machine disturbs least. `states` does not
    apply."""
    from ..gui.headless import offscreen_plotter
    from ..gui.view3d.scene import Scene

    mech = Mechanism(samples.load("sla_suspension"))
    q = mech.assemble(None)
    plotter = offscreen_plotter((800, 600))
    scene = Scene(plotter)
    scene.build(mech, q[0])
    scene.camera("isometric")
    plotter.screenshot(return_img=True)  # the first frame sets the render window up
    step = np.zeros(len(mech.independent))
    step[0] = np.radians(SLIDER_STEP_DEG)
    wanted = q[:, list(mech.partition.independent)]
    assembly, render = [], []
    for _ in range(SLIDER_STEPS):
        wanted = wanted + step
        start = time.perf_counter()
        q = mech.assemble(wanted, guess=q)
        middle = time.perf_counter()
        scene.set_pose(q[0])
        plotter.ren_win.WaitForCompletion()
        assembly.append(middle - start)
        render.append(time.perf_counter() - middle)
    window = plotter.ren_win.GetClassName()
    plotter.close()
    extra = {
        "steps": SLIDER_STEPS,
        "step_deg": SLIDER_STEP_DEG,
        "coordinate": mech.independent[0],
        "target_s": SLIDER_TARGET_S,
        "reference_method": f"frame budget, 25 per second ({window} 800x600)",
    }
    return [
        row(
            f"sla slider {what} (s per step)",
            float(np.median(times)),
            SLIDER_TARGET_S,
            min_s=min(times),
            mean_s=float(np.mean(times)),
            **extra,
        )
        for what, times in (
            ("assembly", assembly),
            ("assembly, compiled", _compiled_slider_steps(mech)),
            ("update + render", render),
        )
    ]


def _compiled_slider_steps(mech: Mechanism) -> list[float]:
    """The same steps on the compiled loop equations the window switches to (kinematics/fast_assembly.py)."""
    from ..dynamics.engine import engine
    from ..kinematics.fast_assembly import FastAssembly
    from ..model import dumps

    text = dumps(mech.model)
    engine(mech.model, text)  # builds, or finds on disk, what the window's background job builds
    fast = FastAssembly.load(mech, text)
    q = mech.assemble(None)[0]
    wanted, times = q[fast.ind].copy(), []
    for _ in range(SLIDER_STEPS):
        wanted[0] += np.radians(SLIDER_STEP_DEG)
        start = time.perf_counter()
        q = fast.assemble(wanted, q)
        mech.poses(q[None])  # what the scene update needs from the model
        times.append(time.perf_counter() - start)
    return times
