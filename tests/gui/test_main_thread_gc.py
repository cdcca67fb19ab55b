"""Garbage with Qt objects is collected in the GUI thread, whichever thread allocates (gui/main_thread_gc.py):
collected in a worker thread, a Qt wrapper's destructor deadlocked the window against the GUI thread."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.qt = QObject()


def test_cycles_holding_qt_objects_are_collected_in_the_gui_thread(window, qtbot):
    assert not gc.isenabled()
    finalized_in: list[str] = []
    cycle = _Cycle()
    weakref.finalize(cycle, lambda: finalized_in.append(threading.current_thread().name))
    del cycle

    def allocate() -> None:  # far past the collector's first threshold: it would collect here if it could
        junk = [[i] for i in range(200_000)]
        del junk

    worker = threading.Thread(target=allocate, name="worker")
    worker.start()
    worker.join()
    assert finalized_in == []
    qtbot.waitUntil(lambda: bool(finalized_in), timeout=5000)
    assert finalized_in == [threading.main_thread().name]
