"""What README.md and docs/*.md say of the window is what the window has: every menu path they name
('File › Import URDF or MJCF…', 'Analysis › Simulate… (Ctrl+R)') is a menu item, with the keyboard shortcut the
text gives it, and the four-bar is drawn with as many clicks as the docs say."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from mbstudio import samples

ROOT = Path(__file__).resolve().parents[2]
# docs/architecture.md tells a developer where new menu items go ('File › Import or Export'): menus, not items
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "architecture.md")]
MENUS = ("File", "Edit", "Analysis", "View", "Help")
MENTION = re.compile(rf"\b({'|'.join(MENUS)}) › ")
SHORTCUT = re.compile(r"\s*\(((?:Ctrl|Shift|Alt)\+[^)\s]+)\)")
NUMBERS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def menu_items(window) -> dict[str, str]:
    """Every menu path of the window ('File › Export › Model as URDF…') with its shortcut ('' for none)."""
    items = {}

    def walk(menu, prefix: str) -> None:
        for action in menu.actions():
            text = re.sub("&(&?)", r"\1", action.text())  # '&' marks the mnemonic, '&&' is an ampersand
            if not text:
                continue  # a separator
            path = f"{prefix} › {text}" if prefix else text
            items[path] = action.shortcut().toString()
            if action.menu():
                walk(action.menu(), path)

    walk(window.menuBar(), "")
    return items


def mentions(page: Path) -> list[tuple[str, str]]:
    """(where, the text from a menu's name on) for every menu path the page names, lines joined."""
    text = " ".join(page.read_text(encoding="utf-8").split())
    return [(f"{page.name}: …{text[m.start() : m.start() + 60]}…", text[m.start() :]) for m in MENTION.finditer(text)]


def longest_item(text: str, items: dict[str, str]) -> str | None:
    """The longest menu path the text starts with, its closing '…' optional (prose drops it: 'Save as Script')."""
    fits = [p for p in items if " › " in p and (text.startswith(p) or (p.endswith("…") and text.startswith(p[:-1])))]
    return max(fits, key=len, default=None)


def test_every_menu_path_and_shortcut_the_docs_name_is_the_windows(window):
    items = menu_items(window)
    assert items["File › Import URDF or MJCF…"] == "" and items["Edit › Draw Link"] == "Ctrl+L"
    assert longest_item("File › Import URDF… opens", items) is None  # the docs' old name is caught
    assert longest_item("File › Save as Script writes", items) == "File › Save as Script…"
    wrong, checked = [], 0
    for page in PAGES:
        for where, text in mentions(page):
            path = longest_item(text, items)
            if path is None:
                wrong.append(f"{where}: no such menu item")
                continue
            rest = text[len(path) if text.startswith(path) else len(path) - 1 :]
            shortcut = SHORTCUT.match(rest)
            if shortcut and shortcut[1] != items[path]:
                wrong.append(f"{where}: {path} has the shortcut {items[path] or 'none'}, not {shortcut[1]}")
            checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked >= 40  # the README and the tutorial name most of the menus


def test_the_docs_count_the_clicks_that_draw_the_four_bar():
    links = samples.drawn_four_bar()
    clicks = 2 * len(links)  # each link: its start and its end (tests/gui/test_workbench.py clicks them)
    assert clicks == 6 and all(np.shape(end) == (3,) for _, end in links)
    counts = [
        (page.name, NUMBERS[m[1].lower()])
        for page in PAGES
        for m in re.finditer(r"\b(\w+) clicks\b", page.read_text(encoding="utf-8"))
        if m[1].lower() in NUMBERS
    ]
    assert counts and all(n == clicks for _, n in counts), counts
