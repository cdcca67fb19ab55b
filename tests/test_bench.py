"""`mbstudio bench`: the registry's rows and the command's table and JSON, on small batches."""

from __future__ import annotations

import json

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
