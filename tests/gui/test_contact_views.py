"""The 3D view keeps sliding contacts in the picture: a block sliding down an incline, its run shown at its end, stays
in view as the time cursor moves (the camera follows it) and after every camera preset, and the isometric preset
looks at shown force arrows from a corner that sees them side-on (scene.isometric_corner); screenshots of each
preset when MBSTUDIO_SCREENSHOTS names a folder."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from mbstudio.gui.view3d.scene import CORNERS, SIDE_ON, isometric_corner
from mbstudio.jobs import DONE
from mbstudio.model import Body, Coordinate, Frame, Joint, Model, dumps, loads
from mbstudio.model.document import Contact, ForceMeasure

G = 9.81
SLOPE, MU = math.radians(25), 0.3  # tan 25° = 0.47 > μ: it slides, at g (sin θ − μ cos θ) = 1.48 m/s²
HALF, CORNER, K = (0.1, 0.05, 0.025), 0.005, 1e6  # a 0.2 m block on a sphere of 5 mm at each bottom corner
PRESETS = ("contacts", "isometric", "side", "front", "top")


def sliding_block() -> Model:
    """A 1 kg box on the plane through the origin tilted by SLOPE about y (down the slope along +x), its corners
    at their static penetration, each corner's contact measured as k<i>_f."""
    a, b, c = HALF
    corners = {f"k{i}": [sx * a, sy * b, -c] for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1)))}
    model = Model(name="incline", gravity=[0.0, 0.0, -G])
    values = dict.fromkeys(("mx", "my", "mz", "Ixy", "Ixz", "Iyz"), 0.0) | {"m": 1.0}
    values |= {"Ixx": (b * b + c * c) / 3, "Iyy": (a * a + c * c) / 3, "Izz": (a * a + b * b) / 3}
    model.bodies = [Body("1", "block", values, corners, shape={"type": "box", "size": [2 * a, 2 * b, 2 * c]})]
    normal = [math.sin(SLOPE), 0.0, math.cos(SLOPE)]
    lift = c + CORNER - (G * math.cos(SLOPE) / 4 / K) ** (1 / 1.5)
    start = [lift * normal[0], 0.0, lift * normal[2], 0.0, SLOPE, 0.0]
    coordinates = [Coordinate(n, initial=v) for n, v in zip(("x", "y", "z", "rx", "ry", "rz"), start, strict=True)]
    model.joints = [Joint("float", "free", "0", "1", Frame(), Frame(), coordinates)]
    model.forces = [Contact(p, "1", p, CORNER, K, 1.5, 20.0, MU, 1e-3, plane_normal=normal) for p in corners]
    model.measures = [ForceMeasure(f"{p}_f", p) for p in corners]
    return loads(dumps(model))


def contact_points(window) -> np.ndarray:
    """The four corners' contact points (4, 3) at the shown instant of the run."""
    series, frame = window.plots.result.data.series, window.plots.index
    return np.array([[series[f"k{i}_f.{axis} [m]"][frame] for axis in "xyz"] for i in range(4)])


def in_view(window, points: np.ndarray) -> bool:
    return bool(np.abs(window.view.scene.viewport(points)).max() < 1.0)


@pytest.mark.slow  # 6 s (the README's run is held under 5 minutes)
def test_a_block_sliding_down_an_incline_stays_in_view(window, qtbot):
    """It slides 0.74 m (over three times its length) in 1 s: at the run's end its contacts are in view, followed by
    the camera set at the start, and after each preset, with their force arrows."""
    window.document.replace(sliding_block(), None)
    job = window.run_job("simulation", {"t_end": 1.0, "samples": 101, "rtol": 1e-6, "atol": 1e-8}, "sliding block")
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.state == DONE, job.error
    assert job.result.data.q[-1][0] > 3 * 2 * HALF[0]  # slid more than three lengths down the slope
    window.plots.seek_time(0.0)
    assert window.show_forces(True) >= 2  # the lower corners' arrows at least
    assert in_view(window, contact_points(window))
    window.plots.seek_time(1.0)
    assert in_view(window, contact_points(window))  # the camera followed
    floor = np.asarray(window.view.scene.floor.GetMapper().GetInput().GetPoints().GetData())
    normal = np.array([math.sin(SLOPE), 0.0, math.cos(SLOPE)])
    assert np.abs(floor @ normal).max() < 1e-6 * np.abs(floor).max()  # the floor drawn is the incline
    folder = os.environ.get("MBSTUDIO_SCREENSHOTS")
    for preset in PRESETS:
        window.view.scene.camera(preset)
        assert in_view(window, contact_points(window)), preset
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            window.view.image().save(str(Path(folder) / f"incline_{preset}.png"))


def test_the_isometric_corner_sees_every_arrow_side_on():
    """Vertical forces (a robot standing): the usual corner (+x, -y, +z). A right foot's force forward, outward and
    up (+x, -y, +z, a trot's stance foot) lies along that corner's line of sight: another corner, from which every
    arrow, the left feet's (+x, +y, +z) too, makes at least SIDE_ON with it; none shown: the usual corner."""
    usual = np.array(CORNERS[0]) / math.sqrt(3)
    assert np.array_equal(isometric_corner(np.zeros((0, 3))), usual)
    assert np.array_equal(isometric_corner(np.array([[0.0, 0.0, 6.1]] * 4)), usual)
    forces = np.array([[2.0, -2.0, 2.0], [2.0, 2.0, 2.0], [1.0, -1.5, 9.0]])
    corner = isometric_corner(forces)
    assert not np.array_equal(corner, usual)
    angles = np.arccos(np.abs(forces @ corner) / np.linalg.norm(forces, axis=1))
    assert angles.min() >= SIDE_ON
    mirrored = np.array([[2.0, -2.0, 2.0], [2.0, 2.0, 2.0]])  # two rear corners see these alike: the same pick
    for tilt in (0.0, 1e-13, -1e-13):  # however rounding leans
        assert np.array_equal(isometric_corner(mirrored + [0.0, tilt, 0.0]), np.array(CORNERS[1]) / math.sqrt(3))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_frames_the_block_at_rest(window, preset):
    """Before any run, each preset has the block's contact points in view."""
    window.document.replace(sliding_block(), None)
    window.view.scene.camera(preset)
    corners = np.array([p[0] for p in window.mech.points(window.q).values()], float)
    assert in_view(window, corners)
