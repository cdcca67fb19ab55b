"""Outputs written in pairs (a CSV table and its provenance, `files.write_all`) appear together or not at all, also
when the writer is killed; text that UTF-8 cannot hold is written escaped: the reproductions of the fourth hardening
round as tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pandas
import pytest

from mbstudio.model import ModelError, files, write_all, write_atomic

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _pair(folder: Path, generation: int) -> dict[Path, str]:
    """A table whose every row and whose provenance hold its generation (rows vary in number, so that saves
    differ in length)."""
    rows = "".join(f"{generation},{k}\n" for k in range(1000 + 37 * (generation % 11)))
    return {
        folder / "run.csv": "generation,row\n" + rows,
        folder / "run.csv.json": json.dumps({"table": "run.csv", "provenance": {"generation": generation}}),
    }


def _generations(folder: Path) -> tuple[int | None, int | None]:
    """The generation of the table (read plainly by pandas: one value in every row) and of its provenance."""
    table, about = folder / "run.csv", folder / "run.csv.json"
    of_table = of_about = None
    if table.exists():
        (of_table,) = set(pandas.read_csv(table)["generation"])
    if about.exists():
        of_about = json.loads(about.read_text(encoding="utf-8"))["provenance"]["generation"]
    return of_table, of_about


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _committed(folder: Path) -> bool:
    """Whether a save's journal is in the folder (not its temporary, `....tmp.pair`)."""
    return any(files._JOURNAL.fullmatch(name) for name in _leftovers(folder))


# ------------------------------------------------------------------------------------------ a lone surrogate
@pytest.mark.parametrize("option", ["--urdf", "--mjcf"])
def test_an_export_of_a_description_holding_a_lone_surrogate_writes_it_escaped(tmp_path, option):
    """`"description": "x\\ud800y"` loads (descriptions keep it, docs/file-format.md), and `mbstudio export f.mbs
    --urdf o.urdf` died with UnicodeEncodeError in model/files.py: the text is now written with the escape."""
    data = json.loads((ROOT / "samples" / "double_pendulum.mbs").read_text(encoding="utf-8"))
    data["description"] = "x\ud800y"
    model = tmp_path / "f.mbs"
    model.write_text(json.dumps(data), encoding="ascii")
    out = tmp_path / "o.xml"
    command = [sys.executable, "-m", "mbstudio.cli", "export", str(model), option, str(out)]
    done = subprocess.run(command, env=ENV, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    text = out.read_bytes().decode("utf-8")  # valid UTF-8
    assert "x\\ud800y" in text
    ElementTree.fromstring(text.encode("utf-8"))  # and well-formed XML
    assert _leftovers(tmp_path) == []


def test_text_with_a_lone_surrogate_is_written_as_its_escape(tmp_path):
    write_atomic(tmp_path / "a.txt", "a\udc80b é")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "a\\udc80b é"


def test_one_file_given_twice_in_a_save_is_refused(tmp_path):
    (tmp_path / "real.csv").write_text("old")
    (tmp_path / "link.csv").symlink_to(tmp_path / "real.csv")
    with pytest.raises(ModelError, match="link.csv: is the same file as .*real.csv"):
        write_all({tmp_path / "real.csv": "a", tmp_path / "link.csv": "b"})
    assert (tmp_path / "real.csv").read_text() == "old" and _leftovers(tmp_path) == []


# ------------------------------------------------------------------------------- a save killed at each step
KILLED_AT = """
import os, signal, sys
from pathlib import Path
from mbstudio.model import files
sys.path.insert(0, sys.argv[3])
from test_paired_writes import _pair
when, step = sys.argv[2].split(":")
calls, real = [], os.replace

def replace(source, target):  # the save's renames: its journal's, then the table's, then the provenance's
    calls.append(target)
    if when == "before" and len(calls) == int(step):
        os.kill(os.getpid(), signal.SIGKILL)
    real(source, target)
    if when == "after" and len(calls) == int(step):
        os.kill(os.getpid(), signal.SIGKILL)

os.replace = replace
files.write_all(_pair(Path(sys.argv[1]), 2))
"""


@pytest.mark.parametrize(
    ("step", "raw", "journal"),
    [
        ("before:1", (1, 1), False),  # temporaries written, the journal not yet renamed: the old pair stays
        ("before:2", (1, 1), True),  # the journal committed, nothing renamed
        ("before:3", (2, 1), True),  # the table renamed, not its provenance: the report's case
        ("after:3", (2, 2), True),  # both renamed, the journal not yet removed
    ],
)
def test_a_save_killed_at_each_step_is_the_old_pair_or_completed_into_the_new(tmp_path, step, raw, journal):
    """Each of write_all's steps killed with SIGKILL. The files left are the old pair, or the save is committed
    (its journal is there) and the next write or reader completes it; no other state exists."""
    write_all(_pair(tmp_path, 1))
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AT, str(tmp_path), step, str(Path(__file__).parent)], env=ENV, timeout=600
    )
    assert done.returncode == -signal.SIGKILL
    assert _generations(tmp_path) == raw
    assert _committed(tmp_path) == journal
    assert files.finish_interrupted(tmp_path / "run.csv.json") == journal
    assert _generations(tmp_path) == ((2, 2) if journal else (1, 1))
    write_all(_pair(tmp_path, 3))  # the next save removes what the killed one left
    assert _generations(tmp_path) == (3, 3) and _leftovers(tmp_path) == []


def test_a_journal_of_a_writer_still_running_is_left_alone(tmp_path):
    """Another process in the middle of its save: its journal and temporaries are not touched."""
    write_all(_pair(tmp_path, 1))
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        save = "a" * 16
        targets = [tmp_path / "run.csv", tmp_path / "run.csv.json"]
        for target, content in _pair(tmp_path, 2).items():
            target.with_name(f".{target.name}.{alive.pid}@{files._HOST}.{save}.tmp").write_text(content)
        (journal,) = files._journals(targets, alive.pid, files._HOST, save)
        journal.write_text(json.dumps({"targets": [str(t) for t in targets]}))
        assert not files.finish_interrupted(tmp_path / "run.csv")
        assert _generations(tmp_path) == (1, 1) and len(_leftovers(tmp_path)) == 3
    finally:
        alive.kill()
        alive.wait()
    assert files.finish_interrupted(tmp_path / "run.csv")  # its writer has ended: completed now
    assert _generations(tmp_path) == (2, 2) and _leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------ real kills at random
WRITER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from mbstudio.model import files
from test_paired_writes import _pair
folder, generation = Path(sys.argv[1]), int(sys.argv[2])
files.write_all(_pair(folder, generation))
print("saved", flush=True)
while True:
    generation += 1
    files.write_all(_pair(folder, generation))
"""
KILLS = 30


@pytest.mark.slow  # thirty writers started and killed (about 30 s)
def test_thirty_writers_killed_during_saves_leave_every_pair_whole(tmp_path):
    """A writer saving pair after pair is killed at a random moment, 30 times. Before any repair, the pair left
    is whole or its save is committed (a journal is there); after the next reader's repair it is whole: the table
    and its provenance from the same save, the table read plainly by pandas."""
    rng = np.random.default_rng(31)
    generation = 1
    for _ in range(KILLS):
        command = [sys.executable, "-c", WRITER, str(tmp_path), str(generation), str(Path(__file__).parent)]
        writer = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline() == "saved\n"
        time.sleep(rng.uniform(0.0, 0.3))
        writer.kill()
        writer.wait()
        writer.stdout.close()
        table, about = _generations(tmp_path)
        assert table == about or _committed(tmp_path)
        files.finish_interrupted(tmp_path / "run.csv")
        table, about = _generations(tmp_path)
        assert table == about and table >= generation
        generation = table + 1
    write_all(_pair(tmp_path, generation))
    assert _generations(tmp_path) == (generation, generation) and _leftovers(tmp_path) == []
