"""The tutorial's screenshots (docs/tutorial.md), made in the real window by doing each step as the tutorial
says: open a sample, draw a four-bar, simulate it, plot its coupler curve, the SLA's base parameters, its linear
model, a robot from URDF, identification from a log. Each step saves tutorial_<n>_<step>.png and prints what it found.

    python3 docs/screenshots/tutorial.py OUT_FOLDER [--until STEP] [--size 1280x800]

Runs under Xvfb when there is no display. The steps build on each other; --until stops after the one named
(tests/gui/test_tutorial.py runs the first step by default and all of them in the slow run).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

STEPS = ("open", "draw", "simulate", "coupler", "base_parameters", "linearise", "urdf", "identify")


class Session:
    """The window and the helpers the steps share."""

    def __init__(self, out: Path, size: tuple[int, int]) -> None:
        from mbstudio.gui.app import application
        from mbstudio.gui.main_window import MainWindow

        self.app = application()
        self.window = MainWindow(persistent=False)
        self.window.resize(*size)
        self.window.show()
        self.out = out
        self.spin(0.5)

    def spin(self, seconds: float = 0.3) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def run(self, task: str, options: dict, title: str):
        job = self.window.run_job(task, options, title)
        while job.running:
            self.spin(0.1)
        self.spin()
        if job.state != "done":
            raise RuntimeError(f"{title}: {job.state}: {job.error}")
        print(f"  {title}: done in {job.elapsed:.1f} s")
        return job

    def shot(self, number: int, step: str) -> Path:
        self.spin()
        path = self.out / f"tutorial_{number}_{step}.png"
        self.window.window_image().save(str(path))
        return path


def open_sample(s: Session) -> None:
    """File › Samples › sla_suspension (the window opens on it): move theta1 with its slider."""
    s.window.open_sample("sla_suspension")
    for k in range(1, 11):
        s.window.move_coordinate("theta1", 0.02 * k, drag=1)
    print(f"  theta1 at {s.window.q[s.window.mech.coordinates.index('theta1')]:.2f} rad, assembled")


def draw(s: Session) -> None:
    """File › New, View › Camera › Top, Edit › Draw Link three times: crank, rocker, coupler."""
    window = s.window
    window.document.stack.setClean()  # the slider moves of step 1 are not worth saving
    window.new_document()
    window.view.scene.camera("top")
    from mbstudio import samples

    for start, end in samples.drawn_four_bar():
        window.draw_link(start, end, axis=np.array([0.0, 0.0, 1.0]))
    print(f"  {window.status['dof'].text()} {window.status['loops'].text()} driven by {window.mech.independent}")


def simulate(s: Session) -> None:
    """Analysis › Simulate…: 2 s from the drawn pose, the crank turning at 6 rad/s."""
    crank = s.window.mech.independent[0]
    s.run("simulation", {"t_end": 2.0, "velocities": {crank: 6.0}}, "Simulate 2 s, crank at 6 rad/s")
    s.window.docks["plots"].raise_()


def coupler(s: Session) -> None:
    """A point on the coupler (body 3), 10 cm off its line, measured; simulate again; plot y against x."""
    from mbstudio.model.document import PointMeasure

    def change(model) -> None:
        model.body("3").points["C"] = [0.175, 0.1, 0.0]
        model.measures.append(PointMeasure("coupler_point", "3", "C"))

    s.window.document.edit("Add the coupler point", change)
    crank = s.window.mech.independent[0]
    s.run("simulation", {"t_end": 2.0, "velocities": {crank: 6.0}}, "Simulate with the coupler point")
    s.window.plots.select_series(["coupler_point.y"], x="coupler_point.x")
    s.window.actions["traces"].setChecked(True)


def base_parameters(s: Session) -> None:
    """The SLA again; Analysis › Base Parameters…: all three routes, VP at 30 and 50 digits."""
    s.window.document.stack.setClean()
    s.window.open_sample("sla_suspension")
    job = s.run("base_parameters", {"method": "all", "digits": [30, 50]}, "Base parameters")
    for spectrum in job.result.data["spectra"]:
        print(f"  {spectrum['label']}: rank {spectrum['rank']}")
    s.window.docks["ridge"].raise_()


def linearise(s: Session) -> None:
    """Analysis › Linearise… with its defaults: the equilibrium near the pose, the modes."""
    s.run("linearization", {"at": "auto"}, "Linear model")
    s.window.docks["modes"].raise_()
    print(f"  {s.window.modes.summary.text()[:100]}")


def urdf(s: Session) -> None:
    """File › Import URDF…: the UR5 of example-robot-data (pip install example-robot-data)."""
    from mbstudio.io.example_robots import robot_path

    s.window.document.stack.setClean()
    job = s.window.import_urdf(str(robot_path("ur5")), [])
    while job.running:
        s.spin(0.1)
    s.spin(1.0)
    s.window.view.scene.camera("isometric")
    print(f"  imported {s.window.document.model.name}: {len(s.window.document.model.bodies)} bodies")


def identify(s: Session) -> None:
    """Analysis › Identify… on the double pendulum, from a log made as the tutorial says: the model's own
    kinematics along its exciting path (positions and the torques that drive them, 200 samples a second)."""
    s.window.document.stack.setClean()
    s.window.open_sample("double_pendulum")
    run = s.run("kinematics", {"samples": 4001}, "Kinematics for the log")
    series = run.result.data["series"]
    columns = {"t [s]": run.result.data["t"]}
    for name in s.window.mech.independent:
        columns[f"{name} [rad]"] = series[f"{name} [rad]"]
        columns[f"tau_{name} [N m]"] = series[f"actuator:{name} [N m]"]
    log = s.out / "tutorial_log.csv"
    rows = np.column_stack(list(columns.values()))
    log.write_text(",".join(columns) + "\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in rows))
    job = s.run("identification", {"data": str(log)}, "Identify from the log")
    log.unlink()
    s.window.docks["identification"].raise_()
    print(f"  rank {job.result.data.get('rank', '?')}")


ACTIONS = {
    "open": open_sample,
    "draw": draw,
    "simulate": simulate,
    "coupler": coupler,
    "base_parameters": base_parameters,
    "linearise": linearise,
    "urdf": urdf,
    "identify": identify,
}


def shots(out: Path, until: str = STEPS[-1], size: tuple[int, int] = (1280, 800)) -> list[Path]:
    """Run the steps up to `until` in a new window, a screenshot after each; the files written. Needs a
    QApplication's display (main sets one up; the tests have theirs)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    out.mkdir(parents=True, exist_ok=True)
    session = Session(out, size)
    written = []
    try:
        for number, step in enumerate(STEPS[: STEPS.index(until) + 1], start=1):
            start = time.perf_counter()
            print(f"{number}. {step}")
            ACTIONS[step](session)
            written.append(session.shot(number, step))
            print(f"  {written[-1].name} ({time.perf_counter() - start:.1f} s)")
    finally:  # closed and deleted while Qt runs: VTK must not outlive the Qt objects it calls
        session.window.document.stack.setClean()
        session.window.close()
        session.window.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return written


def main(out: Path, until: str, size: tuple[int, int]) -> list[Path]:
    """Under Xvfb when there is no display, with settings of its own."""
    import os

    from mbstudio.gui import headless

    if not os.environ.get("DISPLAY"):
        headless.start_xvfb()
    headless.choose_qt_platform()
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    return shots(out, until, size)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--until", choices=STEPS, default=STEPS[-1])
    parser.add_argument("--size", default="1280x800")
    args = parser.parse_args()
    main(args.out, args.until, tuple(int(v) for v in args.size.split("x")))
