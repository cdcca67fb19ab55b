"""`mbstudio bench`: the registry's rows and the command's table and JSON, on small batches."""

from __future__ import annotations

import json

import numpy as np
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


def test_a_row_where_we_lose_says_so():
    assert benchmarks.row("x", 2.0, 1.0)["verdict"] == "loss"
    assert benchmarks.row("x", 1.0, 2.0)["verdict"] == "win"
    assert benchmarks.row("x", 1.2, 1.0, target=1.25)["verdict"] == "meets target"
    assert benchmarks.row("x", 1.3, 1.0, target=1.25)["verdict"] == "misses target"
    table = benchmarks.format_table([benchmarks.row("slow one", 2.0, 1.0)])
    assert "loss" in table.splitlines()[1]


def test_the_kernels_are_timed_against_pinocchios_bare_calls():
    """Pinocchio's CRBA was timed as np.triu(pin.crba(...)) in a lambda, ours bare: both are bare calls now, in the
    same loop, and the results agree with Pinocchio's (the upper triangle compared outside the timing)."""
    from mbstudio.benchmarks import kernels
    from mbstudio.benchmarks.models import spatial_chain

    calls = []

    def spy(function):
        def bare(*args):
            calls.append(function.__name__)
            return function(*args)

        bare.__name__ = function.__name__
        return bare

    rows = kernels._tree_rows("chain 6", spatial_chain(6), None, 5)
    assert [r["name"] for r in rows][:3] == [
        "chain 6 rnea, one state",
        "chain 6 crba, one state",
        "chain 6 aba, one state",
    ]
    assert all(r["max_relative_difference"] < 1e-12 and r["target"] == 1.25 for r in rows[:3])
    assert all("bare calls in the same loop" in r["reference_method"] for r in rows[:3])
    # the loop calls exactly the function it is given, nothing around it
    seconds, values = kernels.loop_time(spy(np.add), (), (np.ones((3, 2)), np.ones((3, 2))))
    assert calls == ["add"] * 15 and values.shape == (3, 2) and seconds > 0  # five repeats of three states


@pytest.mark.slow  # kernels of chains up to 100 links and of Talos to compile on a fresh machine
def test_our_kernels_equal_pinocchios_on_chains_up_to_100_links_and_talos():
    """Issue 19's check: RNEA, CRBA and ABA within 1e-10 relative of Pinocchio on trees up to 100 links and the
    humanoid (Pinocchio reads Talos' URDF itself)."""
    from mbstudio.io.example_robots import robots_folder

    rows = benchmarks.run(["sizes"], states=3)
    names = {r["name"].split(",")[0] for r in rows}
    assert {f"chain {n} {a}" for n in (6, 12, 25, 50, 100) for a in ("rnea", "crba", "aba")} <= names
    if robots_folder() is not None:
        assert {"talos rnea", "talos crba", "talos aba"} <= names
    one_state = [r for r in rows if "one state" in r["name"]]
    # forward dynamics solves with M, whose condition number reaches 1e8 on the 100-link chain: two correct
    # solutions may differ by about κ ε there, while our backward error against Pinocchio's M stays near ε
    bound = {r["name"]: max(1e-10, r.get("condition_number", 0.0) * np.finfo(float).eps) for r in one_state}
    assert all(r["max_relative_difference"] < bound[r["name"]] for r in one_state), [
        (r["name"], r["max_relative_difference"], bound[r["name"]]) for r in one_state
    ]
    assert all(r["backward_error"] < 1e-12 for r in one_state if "aba" in r["name"]), one_state
