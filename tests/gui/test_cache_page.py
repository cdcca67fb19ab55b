"""Edit › Preferences… › Engine cache: what the cache holds, and removing the engines unused lately or all, read
and removed on a thread while the window goes on (numerics/cache_upkeep.py)."""

from __future__ import annotations

from mbstudio.gui.preferences import PreferencesDialog
from mbstudio.io.display_units import DisplayUnits
from mbstudio.numerics.cache_upkeep import usage
from tests.test_cache_upkeep import cache, filled  # noqa: F401 - the fixtures: a cache of its own, filled


def test_the_cache_page_says_what_the_cache_holds_and_removes_on_request(qtbot, filled):  # noqa: F811
    dialog = PreferencesDialog(DisplayUnits())
    qtbot.addWidget(dialog)
    page = dialog.cache
    qtbot.waitUntil(lambda: "5 entries (8 files)" in page.status.text(), timeout=10_000)
    assert page.unused.isEnabled() and page.clear.isEnabled() and page.days.value() == 30
    page.unused.click()
    assert not page.unused.isEnabled()  # while it removes, on its thread
    qtbot.waitUntil(lambda: page.unused.isEnabled(), timeout=10_000)
    assert page.status.text().startswith("removed 2 entries (4 files, 2.1 KB)") and "3 entries" in page.status.text()
    page.clear.click()
    qtbot.waitUntil(lambda: page.clear.isEnabled(), timeout=10_000)
    assert "empty" in page.status.text() and usage().entries == 0
