"""The Coordinates dock on a laptop screen: every slider wide enough to drag whatever the coordinates' names,
a filter for a robot with many of them, and an import that does not read as stale. Screenshots at 1280×800
and 1400×900 are written to the test's folder, and to the folder in MBSTUDIO_SCREENSHOTS when it is set
(docs/screenshots/window_coordinates_50.png is chain_1280x800.png)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from mbstudio.gui.editing.coordinates_panel import MIN_SLIDER
from mbstudio.gui.jobs.jobs_panel import JobRow
from mbstudio.io.example_robots import robot_path, robots_folder
from mbstudio.jobs import DONE

pytest.importorskip("yourdfpy")

SIZES = [(1280, 800), (1400, 900)]
LINKS = 50


def chain_urdf(path: Path, links: int = LINKS) -> list[str]:
    """A serial chain of `links` revolute joints whose names are long (60 characters and more), as a humanoid's
    generated names are, differing in their middle; the joint names, in order."""
    names = [f"whole_body_controller_left_leg_segment_{k:02d}_revolute_pitch_joint" for k in range(links)]
    body = ['<link name="base"/>']
    parent = "base"
    for k, name in enumerate(names):
        body.append(
            f'<link name="l{k}"><inertial><origin xyz="0 0 0.05"/><mass value="1"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="l{k}"/>'
            '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        )
        parent = f"l{k}"
    path.write_text(f'<robot name="chain">{"".join(body)}</robot>')
    return names


def _import(window, qtbot, path: Path):
    job = window.import_urdf(str(path), {"package_paths": [], "fixed_base": True})
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.state == DONE, job.error
    qtbot.waitUntil(lambda: window.document.model.name == Path(path).stem.split("_robot")[0], timeout=10_000)
    return job


def _at_size(window, qtbot, size: tuple[int, int], out: Path) -> QImage:
    window.resize(*size)
    qtbot.wait(300)  # the docks take their share of the new size
    image = window.window_image()
    image.save(str(out))
    if folder := os.environ.get("MBSTUDIO_SCREENSHOTS"):  # how they are looked at
        Path(folder).mkdir(parents=True, exist_ok=True)
        image.save(str(Path(folder) / out.name))
    assert (image.width(), image.height()) == size
    return image


def _visible_sliders_wide_enough(window) -> None:
    rows = [row for row in window.coordinates.sliders.values() if row.isVisibleTo(window.coordinates)]
    assert rows
    widths = {row.name: row.slider.width() for row in rows}
    assert min(widths.values()) >= MIN_SLIDER, widths


@pytest.mark.slow  # the import job starts a process and reads meshes: 10 s and more on a loaded machine
def test_a_real_robots_sliders_are_wide_and_its_import_is_not_stale(window, qtbot, tmp_path):
    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed (the test extra has it)")
    job = _import(window, qtbot, robot_path("ur5"))
    assert len(window.coordinates.sliders) == 6
    # the import made the document: its job is done, not 'done · STALE'
    assert not window.jobs.stale(job)
    rows = window.jobs_panel.findChildren(JobRow)
    assert rows and all("STALE" not in row.state.text() for row in rows)
    for size in SIZES:
        _at_size(window, qtbot, size, tmp_path / f"ur5_{size[0]}x{size[1]}.png")
        _visible_sliders_wide_enough(window)
        assert window.coordinates.sliders["shoulder_lift_joint"].title.name() == "shoulder_lift_joint"


def test_fifty_long_named_coordinates_have_wide_sliders_elided_names_and_a_filter(window, qtbot, tmp_path):
    names = chain_urdf(tmp_path / "chain.urdf")
    _import(window, qtbot, tmp_path / "chain.urdf")
    panel = window.coordinates
    assert list(panel.sliders) == names
    assert panel.filter.isVisible()
    for size in SIZES:
        _at_size(window, qtbot, size, tmp_path / f"chain_{size[0]}x{size[1]}.png")
        _visible_sliders_wide_enough(window)
        # too long for one line of the dock: the whole name, wrapped inside the dock, and in the tooltip
        for name, row in panel.sliders.items():
            assert row.title.name() == name and row.title.toolTip() == name
            assert row.title.height() > row.title.fontMetrics().height() * 1.5  # on more than one line
            assert row.title.geometry().right() <= row.width()
    # the filter keeps the matching rows only, in any case; cleared, all come back
    qtbot.keyClicks(panel.filter, "SEGMENT_4")
    shown = [name for name, row in panel.sliders.items() if row.isVisibleTo(panel)]
    assert shown == [name for name in names if "segment_4" in name] and len(shown) == 10
    _at_size(window, qtbot, SIZES[0], tmp_path / "chain_filtered.png")
    _visible_sliders_wide_enough(window)
    # a filtered slider still moves its coordinate
    row = panel.sliders[shown[3]]
    row.slider.setValue(row.slider.maximum())
    qtbot.waitUntil(lambda: abs(window.q[window.mech.coordinates.index(shown[3])] - 1.0) < 1e-9, timeout=5000)
    panel.filter.clear()
    assert all(row.isVisibleTo(panel) for row in panel.sliders.values())
    qtbot.keyClick(panel.filter, Qt.Key.Key_Escape)  # no crash on keys the field does not use
