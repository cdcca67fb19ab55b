"""Export of a motion as an animation (GIF, or MP4 with the `video` extra) from the 3D view as it is shown.

VTK renders on the GUI thread only, so the frames are rendered one per timer tick (the window stays live and
a progress dialog can cancel), then encoded by imageio in a worker thread into a temporary file that replaces
the target only when complete (an interrupted export leaves the target as it was)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QProgressDialog, QWidget

from ...model import ModelError
from ...model.files import writing_through

FORMATS = ("gif", "mp4")
MAX_FRAMES = 250  # 10 s at 25 frames per second: longer motions are shown faster
MAX_WIDTH = 800  # px: frames are halved until they fit (a GIF of full-screen frames is slow and large)


def frame_indices(t: np.ndarray, fps: float, limit: int = MAX_FRAMES) -> np.ndarray:
    """Samples of the times `t` nearest to a clock ticking at `fps` in real time (fewer frames, faster
    than real time, when the motion is longer than `limit` frames)."""
    duration = float(t[-1] - t[0])
    count = int(min(limit, max(2, round(duration * fps) + 1)))
    wanted = np.linspace(t[0], t[-1], count)
    return np.unique(np.abs(t[None, :] - wanted[:, None]).argmin(axis=1))


def check_format(path: str) -> str:
    """The format from the file's extension; a ModelError naming what is valid, or what to install."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ModelError("animation file", "has an unknown extension", Path(path).name, "a .gif or .mp4 file")
    if fmt == "mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise ModelError(
                "animation file",
                "is MP4, which needs imageio's ffmpeg plug-in",
                Path(path).name,
                "a .gif file, or MP4 after `pip install mbstudio[video]`",
            ) from None
    return fmt


def _halved(image: np.ndarray) -> np.ndarray:
    while image.shape[1] > MAX_WIDTH:
        image = image[::2, ::2]
    return image[: image.shape[0] // 2 * 2, : image.shape[1] // 2 * 2]  # even sizes for the video codec


def encode(frames: list[np.ndarray], path: str, fps: float) -> None:
    """Write `frames` to `path` (GIF or MP4 by extension) through a temporary file in the same folder, named as
    every save's (model/files.py), so that one left by a killed process is removed by the next export."""
    import imageio

    fmt = check_format(path)
    options = {"duration": 1000 / fps, "loop": 0} if fmt == "gif" else {"fps": fps, "macro_block_size": 1}
    with writing_through(path) as temporary, imageio.v2.get_writer(temporary, mode="I", **options) as writer:
        for frame in frames:
            writer.append_data(frame)


class AnimationExport(QObject):
    """Renders each of `poses` (K, n) with `render(q) -> image`, then encodes the frames. `finished(ok,
    message)` at the end; cancelling while rendering writes nothing (the encoding, once begun, completes)."""

    finished = Signal(bool, str)

    def __init__(
        self,
        render: Callable[[np.ndarray], np.ndarray],
        poses: np.ndarray,
        path: str,
        fps: float,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        check_format(path)
        self.render, self.poses, self.path, self.fps = render, poses, path, fps
        self.frames: list[np.ndarray] = []
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self.progress = QProgressDialog(f"Rendering {len(poses)} frames…", "Cancel", 0, len(poses) + 1, parent)
        self.progress.setWindowModality(Qt.WindowModality.NonModal)
        self.progress.setMinimumDuration(0)
        self.progress.canceled.connect(self.cancel)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.timer.start(0)

    def cancel(self) -> None:
        if self._thread is None:
            self.timer.stop()
            self.finished.emit(False, "the animation export was cancelled; nothing was written")

    def _tick(self) -> None:
        if self._thread is not None:  # encoding: wait for the worker
            if not self._thread.is_alive():
                self.timer.stop()
                self.progress.reset()
                self.finished.emit(
                    self.error is None, self.error or f"{len(self.frames)} frames written to {self.path}"
                )
            return
        k = len(self.frames)
        if k < len(self.poses):
            self.frames.append(_halved(np.ascontiguousarray(self.render(self.poses[k]))))
            self.progress.setValue(k + 1)
            return
        self.progress.setLabelText(f"Encoding {len(self.frames)} frames…")
        self.progress.setCancelButton(None)  # the encoding, once begun, completes
        self._thread = threading.Thread(target=self._encode, daemon=True)
        self._thread.start()
        self.timer.setInterval(50)

    def _encode(self) -> None:
        try:
            encode(self.frames, self.path, self.fps)
        except (OSError, ValueError, RuntimeError) as exc:
            self.error = f"nothing was written to {self.path}: {exc}"


class ModeAnimation(QObject):
    """A mode shape shown in the 3D view: its closed poses (frames, n), one per timer tick, round and round
    until `stop` (then `stopped` asks the window for the document's pose again)."""

    stopped = Signal()
    PERIOD_S = 1.2  # one cycle of the shape, whatever the mode's own frequency

    def __init__(self, draw: Callable[[np.ndarray], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.draw = draw
        self.poses: np.ndarray | None = None
        self.frame = 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

    @property
    def running(self) -> bool:
        return self.timer.isActive()

    def start(self, poses: np.ndarray) -> None:
        self.poses, self.frame = np.asarray(poses, float), 0
        self.timer.start(max(15, round(1000 * self.PERIOD_S / len(self.poses))))
        self._tick()

    def stop(self) -> None:
        if self.poses is not None:
            self.timer.stop()
            self.poses = None
            self.stopped.emit()

    def _tick(self) -> None:
        self.draw(self.poses[self.frame % len(self.poses)])
        self.frame += 1
