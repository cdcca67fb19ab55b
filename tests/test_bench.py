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
        # the ratio is the median of the pairwise ratios, within their quartiles
        assert r["ratio_iqr"][0] <= r["ratio"] <= r["ratio_iqr"][1] and r["states"] == 50
        assert r["samples"] >= 5 and r["clock"] == "thread CPU" and r["ours_iqr_s"] >= 0
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
    """Pinocchio's CRBA was timed as np.triu(pin.crba(...)) in a lambda, ours bare: both are bare calls now, over
    argument tuples made beforehand, and the results agree with Pinocchio's (the upper triangle compared outside
    the timing)."""
    from mbstudio.benchmarks import kernels
    from mbstudio.benchmarks.models import spatial_chain

    rows = kernels._tree_rows("chain 6", spatial_chain(6), None, 5)
    assert [r["name"] for r in rows][:3] == [
        "chain 6 rnea, one state",
        "chain 6 crba, one state",
        "chain 6 aba, one state",
    ]
    assert all(r["max_relative_difference"] < 1e-12 and r["target"] == 1.25 for r in rows[:3])
    assert all("bare calls, interleaved" in r["reference_method"] for r in rows[:3])


def test_the_harness_calls_each_side_bare_and_interleaves_them():
    """Each sample is one pass of the same loop over the side's argument tuples, calling exactly the function it
    is given; the sides alternate A B A B; the setup runs before each sample, outside the timing."""
    from mbstudio.benchmarks.registry import Side, compare, interleave, sample_count

    calls = []

    def side(name):
        def bare(*args):
            calls.append((name, args))

        return bare

    comparison = compare(Side(side("a"), [(1,), (2,)]), Side(side("b"), [(3,)]), min_seconds=0, min_samples=4)
    assert {args for name, args in calls if name == "a"} == {(1,), (2,)} and {a for n, a in calls if n == "b"} == {(3,)}
    assert comparison.ours.samples == comparison.reference.samples == 4 and comparison.clock == "thread CPU"
    order = []
    interleave([lambda: order.append("a") or 1.0, lambda: order.append("b") or 2.0], 3)
    assert order == ["a", "b"] * 3
    setups = []
    compare(Side(side("c"), setup=lambda: setups.append(1)), Side(side("d")), min_seconds=0, min_samples=3)
    assert len(setups) == 1 + 3  # a warm-up, which calibrates it, and the three samples
    # enough samples for each side's `min_seconds`, within the bounds
    assert sample_count([0.01, 0.05], 0.2, 3, 100) == 20 and sample_count([1.0], 0.2, 3, 100) == 3
    assert sample_count([1e-6], 0.2, 3, 100) == 100


def test_the_reference_right_hand_side_is_a_bare_aba_where_the_model_has_no_forces():
    """The whole-run rows' reference went through a closure calling reference.forces() at every evaluation, where
    a forceless chain has no forces on our side: now the bare ABA, and the row says so; the sprung SLA has a
    spring, which both sides compute."""
    from mbstudio.benchmarks import simulation
    from mbstudio.benchmarks.models import spatial_chain, sprung_sla
    from mbstudio.kinematics import Mechanism

    mech = Mechanism(spatial_chain(6))
    reference, rhs, method = simulation._reference(mech)
    reference.forces = lambda *args: pytest.fail("the chain's reference computed forces")
    y = reference.state(mech.assemble(None)[0])
    assert rhs(0.0, y).shape == (12,) and "no forces either side" in method
    assert "forces on both sides" in simulation._reference(Mechanism(sprung_sla()))[2]


def test_whole_runs_are_compared_at_matched_accuracy():
    """Each side's tolerance is the loosest (within the bisection's factor) whose error against DOP853 at 1e-13 is
    within the target, on a chain and on the driven Delta, whose reference gets plain functions for its
    actuators' torques, equal to the document's formulas."""
    from mbstudio.benchmarks import simulation
    from mbstudio.benchmarks.models import spatial_chain

    found = simulation._matched("chain 6 test", spatial_chain(6), 0.3)["found"]
    for rtol, error, _ in found.values():
        assert simulation.LADDER[-1] <= rtol <= simulation.LADDER[0] and error <= simulation.ERROR_TARGET
    # the search on a made-up error: 1e-6 met from rtol 10^-6.5 on, so 10^-6.375 missed and 10^-6.5 is found
    rtol, error, _ = simulation._loosest(lambda rtol: (1e-6 if rtol <= 10**-6.5 else 2e-6, None))
    assert np.isclose(np.log10(rtol), -6.5) and error == 1e-6


def test_the_driven_deltas_reference_torques_are_the_documents():
    from mbstudio.benchmarks import simulation
    from mbstudio.benchmarks.models import delta_drive, driven_delta
    from mbstudio.kinematics import Mechanism

    mech = Mechanism(driven_delta())
    formulas = simulation._reference(mech)[0]
    plain = simulation._reference(mech, drive=delta_drive())[0]
    for t in (0.0, 0.13, 0.77):
        expected = sorted((i, f(t)) for i, f in formulas.actuators)
        assert np.allclose(sorted((i, f(t)) for i, f in plain.actuators), expected, rtol=1e-14, atol=0)


# the independent measurement: its own loop, its own states, its own clock calls; nothing from mbstudio.benchmarks
_INDEPENDENT_TIMING = """
import json, time
import numpy as np
import pinocchio as pin
from mbstudio import samples
from mbstudio.dynamics.kernels import kernel
from mbstudio.io.pinocchio_reference import ClosedLoopReference
from mbstudio.kinematics import Mechanism

mech = Mechanism(samples.load("puma560"))
reference = ClosedLoopReference.of(mech)  # the row's Pinocchio model: plain revolute joints
model, data = reference.model, reference.data
aba = kernel(mech.model, "forward_dynamics")
rng = np.random.default_rng(1)
states = [tuple(rng.uniform(-3, 3, mech.n) for _ in range(3)) for _ in range(400)]
ours, theirs = [], []
for _ in range(200):  # about 0.5 s of calls: as many as the bench takes per side, or more
    start = time.thread_time_ns()
    for q, v, tau in states:
        aba(q, v, tau)
    middle = time.thread_time_ns()
    for q, v, tau in states:
        pin.aba(model, data, q, v, tau)
    end = time.thread_time_ns()
    ours.append((middle - start) / len(states) * 1e-9)
    theirs.append((end - middle) / len(states) * 1e-9)
print(json.dumps({"ours": ours, "reference": theirs}))
"""


# two processes timing the same bare call may differ by several percent with both spreads near 1 % on an idle
# machine (where code and data fall in the caches): agreement within this log-ratio at least keeps the verdict the
# same from run to run, and still sees the 30 % of another model
PROCESS_VARIATION = 0.15


def test_an_independent_timing_script_agrees_with_the_bench_row():
    """A measurement of the same calls by another route (the script above, in a process of its own) agrees with
    the bench's PUMA ABA row within the spread: each side's median and the ratio differ by at most the two
    measurements' relative spreads (interquartile range over median) together, the load on the machine being
    what moves either. Not a timing target: a check that the bench measures what a direct measurement does (the
    wall-clock bench read 15-68 µs for Pinocchio's ABA where this gives 3-5). The script once timed Pinocchio's
    model with composite joints against the row's plain ones, 30 % slower, which a factor of 3 hid."""
    import subprocess
    import sys

    (row,) = [r for r in benchmarks.run(["kernels"], states=400) if r["name"] == "puma560 forward dynamics, one state"]
    out = subprocess.run([sys.executable, "-c", _INDEPENDENT_TIMING], capture_output=True, text=True, check=True)
    script = {side: np.asarray(times) for side, times in json.loads(out.stdout).items()}

    def median_and_spread(times):
        q1, median, q3 = np.percentile(times, [25, 50, 75])
        return median, (q3 - q1) / median

    bench_sides = {
        "ours": (row["ours_s_per_state"], row["ours_iqr_s"] / row["ours_s_per_state"]),
        "reference": (row["reference_s_per_state"], row["reference_iqr_s"] / row["reference_s_per_state"]),
        "ratio": (row["ratio"], (row["ratio_iqr"][1] - row["ratio_iqr"][0]) / row["ratio"]),
    }
    script_sides = {**{k: median_and_spread(v) for k, v in script.items()}}
    script_sides["ratio"] = median_and_spread(script["ours"] / script["reference"])
    for key, (bench_median, bench_spread) in bench_sides.items():
        median, spread = script_sides[key]
        allowed = max(bench_spread + spread, PROCESS_VARIATION)
        assert abs(np.log(median / bench_median)) <= allowed, (key, median, bench_median, allowed)


@pytest.mark.slow  # kernels of chains up to 100 links and of Talos to compile on a fresh machine
def test_our_kernels_equal_pinocchios_on_chains_up_to_100_links_and_talos():
    """RNEA, CRBA and ABA within 1e-10 relative of Pinocchio on trees up to 100 links and the humanoid, welded and
    floating (Pinocchio reads Talos' URDF itself, with a free flyer for the floating base)."""
    from mbstudio.io.example_robots import robots_folder

    rows = benchmarks.run(["sizes"], states=3)
    names = {r["name"].split(",")[0] for r in rows}
    assert {f"chain {n} {a}" for n in (6, 12, 25, 50, 100) for a in ("rnea", "crba", "aba")} <= names
    if robots_folder() is not None:
        assert {f"talos{base} {a}" for base in ("", " floating") for a in ("rnea", "crba", "aba")} <= names
    one_state = [r for r in rows if "one state" in r["name"]]
    # forward dynamics solves with M, whose condition number reaches 1e8 on the 100-link chain: two correct
    # solutions may differ by about κ ε there, while our backward error against Pinocchio's M stays near ε
    bound = {r["name"]: max(1e-10, r.get("condition_number", 0.0) * np.finfo(float).eps) for r in one_state}
    assert all(r["max_relative_difference"] < bound[r["name"]] for r in one_state), [
        (r["name"], r["max_relative_difference"], bound[r["name"]]) for r in one_state
    ]
    assert all(r["backward_error"] < 1e-12 for r in one_state if "aba" in r["name"]), one_state
