"""The result tables: the symbolic equations of motion entry by entry (checked against the float64 dynamics),
the standard inertial parameters with their role per route, and the three tables' shared copy and export
(CSV, LaTeX, JSON read back), sorting and filtering. The jobs run in this process, as plain functions."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import sympy
from PySide6.QtCore import Qt

from mbstudio import samples
from mbstudio.dynamics import coriolis_forces, gravity_forces, mass_matrix
from mbstudio.jobs import tasks
from mbstudio.kinematics import Mechanism
from mbstudio.model import ModelError, dumps
from mbstudio.symbolic.eom import document_values, equations_of_motion


def run(task, sample: str, options: dict | None = None):
    return task(dumps(samples.load(sample)), options or {}, lambda fraction, message: None, lambda: False)


@pytest.fixture(scope="module")
def pendulum():
    return run(tasks.symbolic_eom, "double_pendulum")


@pytest.fixture(scope="module")
def four_bar():
    """The four-bar's base parameters by DP alone and by the symbolic route alone."""
    return {method: run(tasks.base_parameters, "four_bar", {"method": method}) for method in ("dp", "symbolic")}


def evaluate(text: str, values: dict[str, float]) -> float:
    expr = sympy.sympify(text)
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


def assembled(entries: list[dict], group: str, n: int, values: dict[str, float]) -> np.ndarray:
    """The group's matrix (n, n) or vector (n,) from its listed entries; M's lower triangle mirrored."""
    out = np.zeros((n, n) if group == "mass_matrix" else n)
    for e in entries:
        if e["group"] == group:
            x = evaluate(e["text"], values)
            if group == "mass_matrix":
                out[e["row"], e["col"]] = out[e["col"], e["row"]] = x
            else:
                out[e["row"]] = x
    return out


# ---------------------------------------------------------------------------------------- the EOM job
def test_eom_entries_give_the_float64_dynamics(pendulum):
    model = samples.load("double_pendulum")
    mech = Mechanism(model)
    entries, names = pendulum.data.entries, pendulum.data.coordinates
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-np.pi, np.pi, (3, mech.n)), rng.uniform(-2, 2, (3, mech.n))
    expected = {
        "mass_matrix": mass_matrix(mech, q),
        "bias": coriolis_forces(mech, q, qd),
        "gravity": gravity_forces(mech, q),
    }
    for k in range(len(q)):
        values = document_values(model) | dict(zip(names, q[k], strict=True))
        values |= {f"d_{name}": v for name, v in zip(names, qd[k], strict=True)}
        for group, batch in expected.items():
            np.testing.assert_allclose(assembled(entries, group, mech.n, values), batch[k], rtol=1e-12, atol=1e-12)


def test_eom_entries_carry_names_latex_pretty_form_and_size(pendulum):
    by_name = {e["entry"]: e for e in pendulum.data.entries}
    assert "M[theta2,theta1]" not in by_name  # the upper triangle only
    m12 = by_name["M[theta1,theta2]"]
    assert m12["entry_latex"] == r"{M}_{\theta_{1},\theta_{2}}"
    assert m12["ops"] == sympy.count_ops(sympy.sympify(m12["text"])) > 0
    assert r"\cos{\left(\theta_{2} \right)}" in m12["latex"] and "m_{x,2}" in m12["latex"]
    assert m12["pretty"] == "Izz₂ + L⋅mx₂⋅cos(θ₂) - L⋅my₂⋅sin(θ₂)"
    assert r"\dot{\theta}_{1}" in by_name["c[theta2]"]["latex"]
    assert set(pendulum.data.groups) == {"mass_matrix", "bias", "gravity"}  # kept for older readers


def test_closed_loop_entries_name_their_constraint():
    result = run(tasks.symbolic_eom, "four_bar")
    eom = equations_of_motion(samples.load("four_bar"))
    assert result.data.groups == {
        name: [[str(x) for x in matrix.row(i)] for i in range(matrix.rows)] for name, matrix in eom.groups().items()
    }  # every entry, zeros included
    rows = [e for e in result.data.entries if e["group"] == "constraint_jacobian"]
    labels = result.data.constraint_labels
    assert rows and all(e["constraint"] == labels[e["row"]] for e in rows)
    assert {e["row"] for e in rows} <= set(result.data.independent_rows)  # the redundant rows are all zero
    assert rows[0]["entry"] == f"Φq[{rows[0]['row'] + 1},theta{rows[0]['col'] + 1}]"


# ---------------------------------------------------------------------------------------- the EOM table
def nonzero_entries(groups: dict) -> int:
    upper = sum(1 for i, row in enumerate(groups["mass_matrix"]) for j, x in enumerate(row) if j >= i and x != "0")
    return upper + sum(1 for g in ("bias", "gravity") for row in groups[g] for x in row if x != "0")


@pytest.fixture
def equations(qtbot, display, pendulum):
    from mbstudio.gui.results.eom_table import EquationsTable

    table = EquationsTable()
    qtbot.addWidget(table)
    table.show_result(pendulum)
    return table


def test_equations_table_lists_every_nonzero_entry_once(equations, pendulum):
    assert equations.table.rowCount() == nonzero_entries(pendulum.data.groups) == 7
    shown = {row[1]: row for row in equations.rows("text")}
    assert shown["M[theta1,theta2]"][0] == "mass matrix" and shown["g[theta1]"][0] == "gravity"
    assert "only its entries M[i,j] with i ≤ j" in equations.summary.text()


def test_equations_sort_by_operation_count_and_back(equations):
    first = [int(row[3]) for row in equations.rows("full")]
    assert first != sorted(first)  # else sorting would prove nothing
    equations.table.sortItems(4)
    assert [int(row[3]) for row in equations.rows("full")] == sorted(first)
    equations.table.sortItems(4, Qt.SortOrder.DescendingOrder)
    assert [int(row[3]) for row in equations.rows("full")] == sorted(first, reverse=True)
    equations.table.sortItems(0)
    assert [int(row[3]) for row in equations.rows("full")] == first


def test_the_filter_survives_sorting_and_limits_copy_and_export(equations, tmp_path):
    equations.set_filter("grav", "group")
    assert [row[1] for row in equations.rows()] == ["g[theta1]", "g[theta2]"]
    equations.table.sortItems(4)
    assert sorted(row[1] for row in equations.rows()) == ["g[theta1]", "g[theta2]"]
    equations.set_filter("theta2")  # any column: the entry names and the expressions
    assert len(equations.rows()) == 7
    equations.set_filter("M[", "entry")
    assert len(equations.rows()) == 3
    assert equations.export("json", str(tmp_path / "m.json"))
    saved = json.loads((tmp_path / "m.json").read_text())
    assert len(saved["rows"]) == 3 and saved["provenance"]["filter"] == {"text": "M[", "column": "entry"}


def test_equations_export_reads_back(equations, pendulum, tmp_path):
    expected = equations.rows("full")
    for fmt in ("csv", "tex", "json"):
        assert equations.export(fmt, str(tmp_path / f"eom.{fmt}"))
    text = (tmp_path / "eom.csv").read_text()
    assert list(csv.reader(io.StringIO(text))) == [equations.columns, *expected]  # the header, then the rows
    sidecar = json.loads((tmp_path / "eom.csv.json").read_text())
    assert sidecar["provenance"]["model_hash"] == pendulum.provenance.model_hash
    saved = json.loads((tmp_path / "eom.json").read_text())
    assert saved["columns"] == equations.columns and saved["provenance"]["method"] == "symbolic"
    assert [[*row[:3], str(row[3])] for row in saved["rows"]] == expected
    assert all(isinstance(row[3], int) for row in saved["rows"])
    tex = (tmp_path / "eom.tex").read_text()
    assert tex.count(r" \\") == 1 + len(expected) and r"${M}_{\theta_{1},\theta_{2}}$" in tex
    assert equations.copy("text").splitlines()[0] == "group\tentry\texpression\toperations"
    assert r"\begin{tabular}{llll}" in equations.copy("latex")


def test_export_refuses_an_unknown_format_and_reports_an_unwritable_path(equations, answers, tmp_path):
    with pytest.raises(ModelError, match="'xls'.*csv, tex, json"):
        equations.export("xls", str(tmp_path / "eom.xls"))
    assert equations.export("CSV", str(tmp_path / "eom.csv"))  # as the ridge panel spells its formats
    assert (tmp_path / "eom.csv").read_text().splitlines()[0] == ",".join(equations.columns)
    assert (tmp_path / "eom.csv.json").exists()
    assert not equations.export("csv", str(tmp_path / "no such folder" / "eom.csv"))
    assert answers["calls"][0][:2] == ("critical", "Export failed") and "no such folder" in answers["calls"][0][2]


# ---------------------------------------------------------------------------------------- parameter roles
@pytest.mark.parametrize("method", ["dp", "symbolic"])
def test_parameter_roles_match_the_route(four_bar, method):
    data = four_bar[method].data
    route = data.json["results"][method]
    rows = data.parameters
    assert [row["name"] for row in rows] == data.parameter_names and len(rows) == 30
    assert all(set(row["routes"]) == {method} for row in rows)
    roles = {row["name"]: row["routes"][method] for row in rows}
    kept = {n for n, r in roles.items() if r["role"] == "base"}
    assert len(kept) == route["rank"] == 8
    assert set(route["eliminated"]) == set(roles) - kept
    for name, r in roles.items():
        assert set(r["into"]) <= kept and (r["role"] == "eliminated") == bool(r["into"]), name
    model = samples.load("four_bar")
    assert [roles_value(rows, f"m{b.label}") for b in model.bodies] == [float(b.inertia["m"]) for b in model.bodies]


def roles_value(rows: list[dict], name: str) -> float:
    return next(row["value"] for row in rows if row["name"] == name)


def test_symbolic_grouping_has_the_coefficients_of_the_base_parameters(four_bar):
    data = four_bar["symbolic"].data
    route = data.json["results"]["symbolic"]
    by_kept = {}
    for base in route["base_parameters"]:
        kept = next(n for n, c in base["terms"].items() if c == "1" and n not in route["eliminated"])
        by_kept[kept] = base["terms"]
    grouped = 0
    for row in data.parameters:
        for kept, coefficient in row["routes"]["symbolic"]["into"].items():
            assert sympy.sympify(coefficient) == sympy.sympify(by_kept[kept][row["name"]]) != 0
            grouped += 1
    m2 = next(row for row in data.parameters if row["name"] == "m2")["routes"]["symbolic"]
    assert m2["role"] == "eliminated" and sympy.sympify(m2["into"]["mx2"]) == -sympy.Symbol("L2")
    assert grouped > 0


@pytest.fixture
def parameters(qtbot, display, four_bar):
    from mbstudio.gui.results.parameter_table import ParameterTable

    table = ParameterTable()
    qtbot.addWidget(table)
    table.show_result(four_bar["symbolic"])
    return table


def test_parameter_table_shows_each_parameter_and_its_role(parameters, four_bar):
    rows = parameters.rows("text")
    assert parameters.table.rowCount() == len(rows) == 30
    assert [row[0] for row in rows] == four_bar["symbolic"].data.parameter_names
    symbolic = [row[5] for row in rows]
    assert symbolic.count("base (kept)") == 8 and all(row[3] == row[4] == "" for row in rows)  # DP, VP not run
    m2 = rows[10]
    assert m2[0] == "m2" and m2[1] == "1.68" and m2[5].startswith("eliminated → grouped into mx2")
    # SI whatever the display units (the symbolic expressions are), each row naming its unit
    assert [row[2] for row in rows[10:20]] == ["kg", *["kg m"] * 3, *["kg m^2"] * 6]
    assert "Values in SI (kg, kg m, kg m^2)" in parameters.summary.text()
    assert symbolic.count("no effect") == 30 - 8 - sum(s.startswith("eliminated") for s in symbolic)
    parameters.table.sortItems(2)
    values = [float(row[1]) for row in parameters.rows("full")]
    assert values == sorted(values) and values[-1] == 1.68
    parameters.table.sortItems(1)  # by name, as text
    names = [row[0] for row in parameters.rows()]
    assert names == sorted(names) and names[0] == "Ixx1"
    assert "symbolic: 8 base" in parameters.summary.text()


def test_parameter_table_exports_with_the_job_data(parameters, tmp_path):
    assert parameters.export("json", str(tmp_path / "p.json"))
    saved = json.loads((tmp_path / "p.json").read_text())
    assert len(saved["rows"]) == 30 and saved["parameters"][10]["name"] == "m2"
    assert saved["rows"][10][:3] == ["m2", 1.68, "kg"] and saved["columns"][2] == "unit (SI)"
    assert parameters.export("tex", str(tmp_path / "p.tex"))
    assert r"\texttt{Izz2} & 0.068726 & kg\,m$^2$ & -- & -- & base (kept) \\" in (tmp_path / "p.tex").read_text()


def test_base_parameter_table_exports_json_with_the_run(qtbot, display, four_bar, tmp_path):
    from mbstudio.gui.results.results_table import BaseParameterTable

    table = BaseParameterTable()
    qtbot.addWidget(table)
    table.show_result(four_bar["dp"])
    assert table.table.rowCount() == 8
    # which samples, as the command line says them (the same question gets one answer)
    assert "Ranks: DP 8" in table.summary.text()
    assert "50 samples of trajectory 'default' (default) over 20 s" in table.summary.text()
    assert table.export("json", str(tmp_path / "b.json"))
    saved = json.loads((tmp_path / "b.json").read_text())
    assert saved["run"]["results"]["dp"]["rank"] == 8 and saved["columns"][:2] == ["kept", "unit (SI)"]
    assert [row[0] for row in saved["rows"]] == [row[0] for row in table.rows("text")]
    assert all(row[4] == "" for row in saved["rows"])  # no symbolic route in this run
    for kept, unit, *_ in saved["rows"]:  # the four-bar's labels are 1 to 3: the name's prefix says the unit
        assert unit == ("kg m^2" if kept[0] == "I" else "kg m" if kept[:2] in ("mx", "my", "mz") else "kg"), kept
