"""The code stays as ruff checks and formats it, so CI catches a lint error or an unformatted file."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess:
    command = [shutil.which("ruff")] if shutil.which("ruff") else [sys.executable, "-m", "ruff"]
    return subprocess.run([*command, *args, "mbstudio", "tests"], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("args", [("check",), ("format", "--check")], ids=["lint", "format"])
def test_ruff_is_satisfied(args):
    result = ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def _imported_modules(path: Path, package: str) -> set[str]:
    """The mbstudio modules a file imports by relative imports (anywhere: module level, TYPE_CHECKING blocks,
    lazily in a function), as dotted names."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {target} if node.module else {f"{target}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("mbstudio.")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_window_code_has_no_import_cycles():
    """Rooms (editing, view3d, results, jobs) under gui/, and no module importing one that imports it back,
    even for type hints only: a newcomer reads them in one direction."""
    files = {_module_name(p): p for p in (ROOT / "mbstudio" / "gui").rglob("*.py")}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = {m for m in _imported_modules(path, package) if m in files and m != name}
    assert set(graph) >= {
        "mbstudio.gui.editing.document",
        "mbstudio.gui.view3d.scene",
        "mbstudio.gui.results.plots_panel",
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and not seen.add(n) and reaches(n, goal, seen)) for n in graph[start])

    cycles = sorted(f"{a} <-> {b}" for a in graph for b in graph[a] if reaches(b, a, set()))
    assert cycles == []
