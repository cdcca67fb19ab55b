"""`mbstudio screenshot`: PNGs of the expected size that show something."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from mbstudio import samples
from mbstudio.cli import main


def distinct_colours(image: QImage, step: int = 7) -> int:
    return len({image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)})


def test_3d_panel_renders_off_screen(tmp_path):
    out = tmp_path / "view.png"
    assert (
        main(["screenshot", str(samples.path("sla_suspension")), str(out), "--panel", "3d", "--size", "320x240"]) == 0
    )
    image = QImage(str(out))
    assert (image.width(), image.height()) == (320, 240)
    assert distinct_colours(image) > 20  # bodies, not just the background


def test_window_panel_renders_the_whole_window(qapp, display, tmp_path):
    out = tmp_path / "window.png"
    assert main(["screenshot", str(samples.path("four_bar")), str(out), "--size", "900x600", "--camera", "front"]) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (900, 600)
    assert distinct_colours(image) > 20


def test_a_bad_size_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["screenshot", str(samples.path("four_bar")), str(tmp_path / "x.png"), "--size", "big"])
    assert "1280x800" in capsys.readouterr().err


@pytest.mark.parametrize("panel", ["ridge", "plots"])
def test_result_panels_render_after_running_their_analysis(qapp, display, tmp_path, panel):
    """The ridge panel after the base-parameter analysis, the time histories after the kinematics along
    the model's trajectory: a PNG of the asked size with curves on it."""
    out = tmp_path / f"{panel}.png"
    assert main(["screenshot", str(samples.path("four_bar")), str(out), "--panel", panel, "--size", "800x500"]) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (800, 500)
    assert distinct_colours(image) > 20
