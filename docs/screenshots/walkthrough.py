"""The window's "done when" walk, scripted: open the SLA, move it, run the base-parameter analysis, edit a
dimension, see the results turn stale, rerun, export, run the kinematics and the symbolic equations of
motion; a screenshot of the window at each step and the time each step took.

    python3 docs/screenshots/walkthrough.py OUT_FOLDER

Runs under Xvfb when there is no display. The README's window_sla*.png are steps 1, 2 and 4.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

BASE_PARAMETERS = {"method": "all", "digits": [30, 50]}


def main(out: Path) -> None:
    from mbstudio.gui import headless

    headless.start_xvfb()
    headless.choose_qt_platform()
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    from mbstudio.gui.app import application
    from mbstudio.gui.main_window import MainWindow

    app = application()
    window = MainWindow()
    window.resize(1400, 900)
    window.show()

    def spin(seconds: float = 0.3) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)

    def run(task: str, options: dict, title: str):
        job = window.run_job(task, options, title)
        while job.running:
            spin(0.1)
        spin()
        print(f"{title}: {job.state} in {job.elapsed:.1f} s {job.error}")
        return job

    def shot(name: str) -> None:
        window.window_image().save(str(out / name))

    out.mkdir(parents=True, exist_ok=True)
    spin()
    start = time.perf_counter()
    for k in range(20):
        window.move_coordinate("theta1", 0.01 * (k + 1), drag=1)
        app.processEvents()
    print(f"20 slider steps of theta1: {time.perf_counter() - start:.2f} s")
    shot("1_moved.png")
    run("base_parameters", BASE_PARAMETERS, "Base parameters")
    print(f"table: {window.base_table.table.rowCount()} rows; {window.base_table.summary.text()}")
    shot("2_base_parameters.png")
    window.tree.select(("parameter", "D12"))
    editor = window.properties.editors["value"]
    editor.setText("0.33")
    editor.editingFinished.emit()
    spin()
    print(f"after editing D12: stale {window.ridge.stale.isVisible()} {window.base_table.stale.isVisible()}")
    shot("3_stale.png")
    run("base_parameters", BASE_PARAMETERS, "Base parameters, again")
    print(f"after the rerun: stale {window.ridge.stale.isVisible()}")
    for panel, fmt in (("base_table", "csv"), ("base_table", "json"), ("base_table", "tex"), ("ridge", "svg")):
        path = out / f"{panel}.{fmt}"
        print(f"export {path.name}: {window.export_result(panel, fmt, str(path))}, {path.stat().st_size} bytes")
    window.docks["parameter_table"].raise_()
    run("kinematics", {"samples": 200}, "Kinematics")
    shot("4_kinematics.png")
    window.document.stack.setClean()
    window.open_sample("double_pendulum")
    run("symbolic_eom", {"simplify": True}, "Symbolic equations of motion")
    shot("5_equations.png")
    window.document.stack.setClean()
    window.close()


if __name__ == "__main__":  # jobs run in spawned processes, which import this file again
    main(Path(sys.argv[1]))
