"""Garbage collection in the GUI thread only.

Python's cyclic collector runs in whichever thread happens to allocate when a threshold is crossed. When that
is a worker thread (a Dask cluster starting, a study closing) and the garbage holds Qt wrappers, the Qt
object is destroyed there: its destructor takes Qt's lock and then waits for the GIL, while the GUI thread,
holding the GIL, waits for that lock — the window freezes for good (seen in CI: a parameter study started
after other windows had been closed). So the automatic collector is switched off in the GUI process and a
timer collects in the GUI thread instead, as often as the collector's first generation would.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 500


class _Collector(QObject):
    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect)
        self.timer.start(INTERVAL_MS)

    def collect(self) -> None:
        """The youngest generation each tick, older ones when their thresholds say (as the collector would)."""
        for generation, (count, threshold) in enumerate(zip(gc.get_count(), gc.get_threshold(), strict=True)):
            if count > threshold or generation == 0:
                gc.collect(generation)


def collect_in_gui_thread() -> None:
    """Install once per application (idempotent); call from the GUI thread after the QApplication exists."""
    app = QCoreApplication.instance()
    if app is None or app.findChild(_Collector) is not None:
        return
    gc.disable()
    _Collector(app)
