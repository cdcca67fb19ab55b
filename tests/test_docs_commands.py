"""The commands in README.md and docs/*.md run as written: every fenced block tagged `sh` (or bash, shell) or
`python` is run, page by page in document order, in a fresh folder holding what a clone has (samples/, docs/), as a
reader following the page would. A block is left out only by a marker on the line before it in the page,
`<!-- docs-test: skip: REASON -->`, whose reason is said. Blocks that are output or syntax are tagged `text` or
`json`; an untagged block that starts like a command is an error (tagged, it would be run)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL, PYTHON = {"sh", "bash", "shell"}, {"python"}
SKIP = re.compile(r"^<!--\s*docs-test:\s*skip:\s*(?P<reason>.*?)\s*-->$")
COMMAND = re.compile(r"^(\$ )?(mbstudio|python3?|pip|bash|cd|mkdir)\b")
# the README's test command is this suite itself: run from a test it would start the suite again
SUITE = "python3 -m pytest"
BLOCK_TIMEOUT = 1800  # s: an engine compiled for the first time on a loaded machine


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, from 1
    language: str
    text: str
    skip: str | None  # the marker's reason, when the page leaves the block out

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, each with the skip marker on the line before its fence (blank lines apart)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, k = [], 0
    while k < len(lines):
        if not lines[k].startswith("```"):
            k += 1
            continue
        end = next(j for j in range(k + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j].strip() for j in range(k - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.match(before)
        text = "\n".join(lines[k + 1 : end]) + "\n"
        found.append(Block(page, k + 1, lines[k][3:].strip(), text, marker["reason"] if marker else None))
        k = end + 1
    return found


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.language in SHELL | PYTHON]


def test_the_parser_finds_blocks_markers_and_reasons(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n<!-- docs-test: skip: needs the reader's robot -->\n\n```sh\nmbstudio check robot.mbs\n```\n"
        "```python\nprint(1)\n```\n```text\nmbstudio FILE\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.line, b.language, b.skip) for b in found] == [
        (4, "sh", "needs the reader's robot"),
        (7, "python", None),
        (10, "text", None),
    ]
    assert found[1].text == "print(1)\n"


def test_every_command_block_is_tagged_and_every_skip_says_why():
    untagged = [
        b.where
        for page in PAGES
        for b in blocks(page)
        if not b.language and COMMAND.match(b.text.lstrip()) and b.text.strip() != SUITE
    ]
    assert not untagged, f"tag these blocks sh or python (they are then run), or text: {untagged}"
    unexplained = [b.where for page in PAGES for b in blocks(page) if b.skip is not None and len(b.skip) < 10]
    assert not unexplained, f"a skipped block says why: {unexplained}"
    markers = sum(1 for page in PAGES for line in page.read_text(encoding="utf-8").splitlines() if "docs-test:" in line)
    assert markers == sum(1 for page in PAGES for b in blocks(page) if b.skip is not None)  # none stray


def clone_folder(tmp_path: Path) -> Path:
    """A fresh folder with what a clone has and the pages use: the samples and the docs."""
    folder = tmp_path / "clone"
    shutil.copytree(ROOT / "samples", folder / "samples", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "docs", folder / "docs", ignore=shutil.ignore_patterns("screenshots"))
    return folder


def environment(tmp_path: Path) -> dict[str, str]:
    """`mbstudio` and `python3` as a reader's shell has them after the install, running this checkout."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name, command in {"mbstudio": f'"{sys.executable}" -m mbstudio.cli', "python3": f'"{sys.executable}"'}.items():
        shim = bin_folder / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    path = os.pathsep.join([str(bin_folder), os.environ.get("PATH", "")])
    python_path = os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH", "")] if p)
    return {**os.environ, "PATH": path, "PYTHONPATH": python_path}


def run_block(block: Block, folder: Path, env: dict[str, str], k: int) -> subprocess.CompletedProcess:
    if block.language in PYTHON:  # a file, as a reader saves it: a script that starts jobs imports itself again
        script = folder / f"block_{k}.py"
        script.write_text(block.text, encoding="utf-8")
        command = [sys.executable, script.name]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)


# `mbstudio COMMAND ...` quoted in the text (not in a block): its command must exist and take the options it shows
INLINE = re.compile(r"`mbstudio ([a-z]+)\b([^`]*)`")
OPTION = re.compile(r"(?<![\w-])--?[a-z][\w-]*")


def options(command: str) -> set[str]:
    """The option strings `mbstudio COMMAND` takes, from its parser (nothing is run)."""
    from mbstudio.cli import build_parser

    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {o for action in sub._actions for o in action.option_strings}


def test_every_command_the_text_quotes_exists_with_the_options_it_shows():
    from mbstudio.commands import COMMANDS

    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for found in INLINE.finditer(text):
            command, rest = found.groups()
            where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, found.start()) + 1}"
            if command not in COMMANDS:
                wrong.append(f"{where}: no command {command!r}")
            elif unknown := [o for o in OPTION.findall(rest) if o not in options(command)]:
                wrong.append(f"{where}: mbstudio {command} takes no {unknown}")
    assert not wrong, wrong


def test_the_readmes_command_list_names_every_command_with_options_it_takes():
    from mbstudio.commands import COMMANDS

    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Command line", 1)[1]
    listing = next(b.text for b in blocks(ROOT / "README.md") if b.text in section and "mbstudio check" in b.text)
    listed, wrong, command = set(), [], None
    for line in listing.splitlines():  # a synopsis starts a line, its continuations are indented 14 columns
        if synopsis := re.match(r"mbstudio ([a-z]+)", line):
            command = synopsis[1]
            listed.add(command)
        elif not re.match(r" {14}\S", line):
            continue  # a description, indented further
        usage = re.split(r" {3,}", line.strip())[0]
        wrong += [f"{command} {o}" for o in OPTION.findall(usage) if command and o not in options(command)]
    assert not wrong, f"listed but not taken: {wrong}"
    assert listed == set(COMMANDS), f"commands missing from the list: {set(COMMANDS) - listed}"


def test_the_index_lists_every_page():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [p.name for p in PAGES[1:] if p.name != "index.md" and f"]({p.name})" not in index]
    assert not missing, f"docs/index.md lists no {missing}"


PAGES_WITH_COMMANDS = [p for p in PAGES if any(b.skip is None for b in runnable(p))]


@pytest.mark.slow  # each page compiles engines and runs analyses: tens of seconds to minutes
@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=lambda p: p.name)
def test_the_pages_commands_run_as_written(page, tmp_path):
    folder, env = clone_folder(tmp_path), environment(tmp_path)
    ran = 0
    for k, block in enumerate(runnable(page)):
        if block.skip is not None:
            continue
        done = run_block(block, folder, env, k)
        assert done.returncode == 0, f"{block.where} failed ({done.returncode}):\n{block.text}\n{done.stderr[-3000:]}"
        ran += 1
    assert ran >= 1
