"""A virtual X display (Xvfb) for rendering without a screen, and the choice of Qt platform that goes
with it. No Qt here, so tests and commands can call it before the QApplication exists."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def free_display(start: int = 90) -> int:
    """The first display number with neither a lock file nor a socket."""
    n = start
    while Path(f"/tmp/.X{n}-lock").exists() or Path(f"/tmp/.X11-unix/X{n}").exists():
        n += 1
    return n


def start_xvfb(size: str = "1920x1200x24", timeout: float = 10.0) -> subprocess.Popen | None:
    """Start Xvfb on a free display and set DISPLAY; None when Xvfb is not installed.

    The server lives as long as this process: VTK keeps its X connection until the interpreter exits, and
    a server stopped earlier makes Xlib end the process with an I/O error."""
    if shutil.which("Xvfb") is None:
        return None
    for _ in range(8):  # another process (a second test worker) may take the same free display first
        n = free_display()
        process = subprocess.Popen(
            ["Xvfb", f":{n}", "-screen", "0", size, "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        if _serving(process, n, timeout):
            os.environ["DISPLAY"] = f":{n}"
            return process
        process.terminate()
    raise RuntimeError("Xvfb did not start: every display tried was taken")


def _serving(process: subprocess.Popen, n: int, timeout: float) -> bool:
    """True once this Xvfb serves display n: its socket exists and the display's lock file holds its pid."""
    lock, socket = Path(f"/tmp/.X{n}-lock"), Path(f"/tmp/.X11-unix/X{n}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if socket.exists() and lock.exists() and lock.read_text().strip() == str(process.pid):
            return True
        time.sleep(0.05)
    return False


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when the parent process ends."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def choose_qt_platform() -> None:
    """Before the QApplication exists: keep Qt's own choice when it can use the X display (xcb), else draw
    off-screen. With Qt's offscreen platform pyvistaqt has no OpenGL widget and falls back to a hidden
    context, which works for single windows but is fragile when windows are created and deleted."""
    if os.environ.get("QT_QPA_PLATFORM") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if not (os.environ.get("DISPLAY") and xcb_works()):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def xcb_works() -> bool:
    """Whether Qt's X11 plugin loads here (it aborts the process when a system library is missing, so
    ask a child process)."""
    code = "from PySide6.QtGui import QGuiApplication; QGuiApplication(['probe'])"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    try:
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def offscreen_plotter(size: tuple[int, int]):
    """A pyvista off-screen plotter. Without an X display VTK first tries X, logs a warning that means
    nothing to a user, and falls back to EGL; the warning is kept off stderr."""
    import pyvista as pv
    from vtkmodules.vtkCommonCore import vtkLogger

    verbosity = vtkLogger.GetCurrentVerbosityCutoff()
    vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)
    try:
        plotter = pv.Plotter(off_screen=True, window_size=size)
        plotter.ren_win.Render()  # the render window connects (and falls back) here
    finally:
        vtkLogger.SetStderrVerbosity(verbosity)
    return plotter
