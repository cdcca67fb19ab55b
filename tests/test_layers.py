"""The layers hold (docs/architecture.md, "Layers"): import-linter checks the contracts of pyproject.toml, that
imports point down the layers and never up, that no module or package of a package imports one that imports it
back (even for a type hint), and that nothing below the window imports Qt; and the architecture page draws the
layers the contract enforces, in the same order."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LINTER = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"


def test_the_import_contracts_hold():
    """Run from the repository root, which import-linter puts first on the path: the code checked is this tree's."""
    result = subprocess.run([sys.executable, "-c", RUN_LINTER], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [1-9][0-9]* kept, 0 broken", result.stdout), result.stdout


def _contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def _drawn_layers() -> list[list[str]]:
    """The picture under the page's "Layers" heading: one layer per line, its name first, siblings joined by '·'."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    picture = text.split("## Layers", 1)[1].split("```", 2)[1]
    rows = [re.match(r"\s*([a-z]+(?: · [a-z]+)*)\s{2,}", line) for line in picture.splitlines()]
    return [row.group(1).split(" · ") for row in rows if row]


def test_the_architecture_page_draws_the_layers_the_contract_enforces():
    assert _drawn_layers() == _contract_layers()
    assert ["gui"] in _contract_layers() and ["model"] in _contract_layers()  # the contract is read, not empty
