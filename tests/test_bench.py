"""`mbstudio bench`: the registry's rows and the command's table and JSON, on small batches."""

from __future__ import annotations

import json

import pytest

from mbstudio import benchmarks
from mbstudio.cli import main


def test_rows_compare_ours_with_pinocchio():
    rows = benchmarks.run(["inverse_dynamics", "forward_dynamics"], states=50)
    assert [r["name"] for r in rows] == ["puma560 inverse dynamics", "puma560 forward dynamics"]
    for r in rows:
        assert r["ratio"] == r["ours_s_per_state"] / r["reference_s_per_state"] and r["states"] == 50
        assert r["max_abs_difference"] < 1e-9


def test_command_prints_a_table_and_json(capsys):
    assert main(["bench", "--only", "mass_matrix", "--states", "20"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["benchmark", "ours"] and table[1].startswith("puma560 mass matrix")
    assert main(["bench", "--only", "mass_matrix", "--states", "20", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert set(row) >= {"name", "ours_s_per_state", "reference_s_per_state", "ratio"}


@pytest.mark.slow  # fifteen kernels to compile on a fresh machine
def test_urdf_rows_compare_imported_robots_with_pinocchios_own_reading():
    from mbstudio.io.example_robots import robots_folder

    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed (the test extra has it)")
    rows = benchmarks.run(["urdf"], states=5)
    assert len(rows) == 15 and rows[0]["name"] == "ur5 rnea (URDF), one state"
    assert all(r["max_abs_difference"] < 1e-10 for r in rows), [(r["name"], r["max_abs_difference"]) for r in rows]
