"""The Qt binding keeps Python's reference counts: PySide6 6.12.0 on Python 3.11 returned None from every void
method without taking a reference (an immortal None is only Python 3.12's), so each setChecked or setEnabled
took one from None's count, and a long window session ended with 'Fatal Python error: deallocating None'
(or True/False). pyproject.toml excludes that release; this test says so at once if such a build comes back."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QCheckBox


def test_void_and_bool_calls_leave_the_counts_of_none_true_and_false(qtbot):
    box = QCheckBox()
    qtbot.addWidget(box)
    before = [sys.getrefcount(x) for x in (None, True, False)]
    for k in range(1000):
        box.setChecked(k % 2 == 0)  # void, takes a bool
        box.setEnabled(box.isChecked())  # void, and a bool back
    drift = [sys.getrefcount(x) - b for x, b in zip((None, True, False), before, strict=True)]
    assert min(drift) > -100, f"reference counts of None, True, False fell by {drift} over 2000 calls"
