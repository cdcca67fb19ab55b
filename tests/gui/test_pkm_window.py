"""A parallel machine in the window (Müller 2021): the Limbs node of the model tree highlights a limb's bodies in
3D, the platform's task-space sliders move the platform with every limb following, and the workspace map
runs as a job into its heat-map panel, which exports. Screenshots go to MBSTUDIO_SCREENSHOTS when set."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pyvista as pv
from PySide6.QtCore import Qt

from mbstudio.dynamics.pkm import ParallelMachine, structure
from mbstudio.gui.view3d.scene import HIGHLIGHT
from mbstudio.io.display_units import DisplayUnits
from mbstudio.jobs import DONE

from .test_workbench import shot


@pytest.fixture
def irsbot(window):
    window.document.stack.setClean()
    window.open_sample("irsbot2")
    window.view.scene.camera("side")  # the platform moves in the x-z plane
    return window


def highlighted(window) -> set[str]:
    """The bodies whose actors show the highlight colour."""
    scene = window.view.scene
    return {
        label
        for label, actors in scene.actors.items()
        if any(id(a) in scene.colors and a.prop.color == pv.Color(HIGHLIGHT) for a in actors)
    }


def test_limbs_node_highlights_a_limbs_bodies_and_platform_sliders_move_it(irsbot):
    """One window for both (each window costs a second to open): the Limbs node, then the sliders."""
    _limbs_node(irsbot)
    _platform_sliders(irsbot)


def _limbs_node(irsbot):
    tree = irsbot.tree
    limbs = [key for key in tree.items if key[0] == "limb"]
    assert tree.items[("limbs",)].text(1) == "2, platform P" and len(limbs) == 2
    assert tree.items[limbs[1]].text(1) == "2 cycle(s), hybrid"
    tree.select(limbs[1])
    assert highlighted(irsbot) == {"1b", "3b", "2b", "4b", "5b"}
    cycle = next(key for key in tree.items if key[0] == "cycle" and key[2] == "U8a")
    tree.select(cycle)
    assert highlighted(irsbot) == {"P", "4a", "2a", "5a"}
    shot(irsbot, "irsbot2_limb_selected.png")


def _platform_sliders(irsbot):
    panel = irsbot.coordinates
    assert set(panel.platform) == {"x", "z"} and set(panel.sliders) == {"th1a", "th1b"}
    x0 = panel.platform["x"].value()
    for k in range(1, 9):  # a drag in small steps, then a typed value
        assert irsbot.move_platform("x", x0 + 0.015 * k, drag=1)
    assert irsbot.move_platform("z", panel.platform["z"].value() + 0.05, drag=2)
    pkm = ParallelMachine(irsbot.document.model)  # the document now holds the moved pose
    assert pkm.position0[0] == pytest.approx(x0 + 0.12, abs=1e-12)
    assert np.abs(irsbot.mech.residual(irsbot.q[None])).max() < 1e-10
    assert panel.sliders["th1a"].value() != pytest.approx(panel.sliders["th1b"].value())  # no longer symmetric
    shot(irsbot, "irsbot2_platform_moved.png")
    assert not irsbot.move_platform("z", 5.0)  # a metre and more out of reach: stopped, and said why
    assert "cannot be reached" in irsbot.status["assembly"].toolTip()
    irsbot.document.stack.undo()
    assert ParallelMachine(irsbot.document.model).position0[2] == pytest.approx(pkm.position0[2] - 0.05, abs=1e-12)


@pytest.mark.slow  # a second window
def test_a_turning_platform_has_limbs_but_no_platform_sliders(window):
    """The SLA has a body two limbs carry (its detected platform), but that body turns: no task space."""
    assert window.coordinates.platform == {} and window.follower is None
    found = structure(window.document.model)
    assert window.tree.items[("limbs",)].text(1) == f"{len(found.limbs)}, platform {found.platform}"
    window.open_sample("puma560")  # a serial arm: no limbs at all
    assert ("limbs",) not in window.tree.items


@pytest.mark.slow  # 8 s: a 21 x 21 map (the README's screenshot)
def test_workspace_map_job_fills_the_heat_map_and_exports(irsbot, qtbot, tmp_path):
    irsbot.set_units(DisplayUnits("rad", "mm", "deg", "mm"))  # the map follows the length preference
    job = irsbot.run_job("workspace", {"points": 21}, "Workspace map")
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    panel = irsbot.workspace
    assert panel.result is job.result and panel.quantity.count() == 3
    values = job.result.data.values["mass_condition"]
    assert values.shape == (21, 21) and 0.3 < np.isfinite(values).mean() < 1
    assert panel.image.image.shape == (21, 21)
    # the grid holds the reachable set (its edge is out of reach all round, hatched), both axes
    # in mm, and the legend tells the hatching from the blank beyond the grid
    reached = np.isfinite(values)
    assert not (reached[0].any() or reached[-1].any() or reached[:, 0].any() or reached[:, -1].any())
    hatched = panel.unreached.image[..., 3] > 0  # the hatching's opaque pixels, 8 x 8 per cell out of reach
    assert np.array_equal(hatched[::8, ::8], ~reached)
    assert panel.unit == "mm" and "[mm]" in panel.plot.getAxis("bottom").labelText
    assert "[mm]" in panel.plot.getAxis("left").labelText
    assert "out of reach of a limb" in panel.plot.plotItem.titleLabel.text
    assert "outside the computed grid" in panel.plot.plotItem.titleLabel.text
    first, second = job.result.data.first, job.result.data.second
    j, i = np.argwhere(reached)[0]
    assert panel.value_at(1e3 * first[i], 1e3 * second[j]).startswith(f"x = {1e3 * first[i]:.4g} mm, z = ")
    assert panel.value_at(1e3 * first[0], 1e3 * second[0]).endswith("out of reach of a limb")
    assert panel.value_at(1e3 * first[0] - 50, 1e3 * second[0]) == ""  # beyond the grid: nothing to read
    irsbot.docks["workspace"].raise_()
    irsbot.resizeDocks([irsbot.docks["workspace"]], [420], Qt.Orientation.Vertical)
    shot(irsbot, "irsbot2_workspace_map.png")
    out = tmp_path / "map.csv"
    assert irsbot.export_result("workspace", "csv", str(out))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("x [mm],z [mm],mass_condition") and len(lines) == 1 + 21 * 21
    assert "model_hash" in json.loads((tmp_path / "map.csv.json").read_text())["provenance"]
    assert irsbot.export_result("workspace", "png", str(tmp_path / "map.png"))
    assert (tmp_path / "map.png").stat().st_size > 1000
