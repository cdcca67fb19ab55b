"""Hardening round 4, the readers: each reproduction of the fourth fuzz round, as found, now refused by name or
handled. A body of 100 000 points (loading was quadratic in them), sweeps that ran every point to the same error
and recomputed what an earlier run had done, MJCF that had MuJoCo's compiler open files outside the model's folder,
URDF that read a NaN mimic or a one-term inertia, names written right to left, numbers written with underscores, a
massless subtree that made forward dynamics NaN, and `check`, which compiled an engine."""

from __future__ import annotations

import copy
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mbstudio import samples
from mbstudio.benchmarks.models import chain_document
from mbstudio.cli import main
from mbstudio.jobs import study as study_module
from mbstudio.jobs.study import Study, evaluate_point, grids
from mbstudio.model import ModelError, dumps, loads
from mbstudio.model.expressions import parse
from mbstudio.model.fileformat import to_dict
from mbstudio.model.validation import check_dynamics

HERE = Path(__file__).parent


def _pendulum() -> dict:
    return to_dict(samples.load("double_pendulum"))


# ------------------------------------------------------------------------------------------ loading


@pytest.mark.parametrize("count", [16_000, pytest.param(100_000, marks=pytest.mark.slow)])  # 100 000: 12 s loaded
def test_a_body_of_many_points_loads_with_every_point(count):
    """2k / 4k / 8k / 16k points took 0.07 / 0.18 / 0.67 / 1.78 s and 100 000 did not load in 5 minutes: each
    point's name was looked for in a tuple of all the names. (Its time is a row of `mbstudio bench --only check`.)"""
    document = chain_document(2)
    points = {f"p{i}": [i * 1e-3, -i * 1e-3, 0.5] for i in range(count)}
    document["bodies"][0]["points"] = {**points, "tip": [1.0, 0.0, 0.0]}
    model = loads(json.dumps(document))
    assert list(model.bodies[0].points) == [*points, "tip"]
    assert model.bodies[0].points[f"p{count - 1}"] == points[f"p{count - 1}"]
    assert loads(dumps(model)).bodies[0].points == model.bodies[0].points


def test_a_key_repeated_among_many_is_named():
    """Finding the repeated key counted each key in the whole list (quadratic on 100 000 keys)."""
    names = ", ".join(f'"p{i}": [0, 0, 0]' for i in range(50_000))
    document = json.dumps(chain_document(1)).replace('"points": {', '"points": {' + names + ', "p49999": [1, 1, 1], ')
    with pytest.raises(ModelError, match="repeats the key 'p49999'"):
        loads(document)


def test_loading_consumes_the_parsed_json_but_from_dict_keeps_its_input():
    """load() frees each body's JSON as it is read (a 100 000-body chain held 300 MB of both at once); the public
    from_dict leaves what it is given as it was."""
    document = chain_document(3)
    before = copy.deepcopy(document)
    from mbstudio.model.fileformat import from_dict

    assert len(from_dict(document).bodies) == 3 and document == before


@pytest.mark.parametrize("text", ["1_0/30", "0.5_0", "1e1_0", "2*1_000"])
def test_numbers_written_with_underscores_are_refused(text):
    """Python reads '1_0/30' as 1/3 and '0.5_0' as 0.5; no other reader of the file does."""
    with pytest.raises(ModelError, match="with an underscore"):
        parse(text)
    document = _pendulum()
    document["parameters"][0]["value"] = 1.0
    document["bodies"][0]["inertia"]["m"] = text
    with pytest.raises(ModelError, match=r"inertia\.m.*underscore|underscore"):
        loads(json.dumps(document))


def test_names_with_underscores_are_still_names():
    assert parse("L_1 * 2") is not None  # a parameter L_1: not a number


# ------------------------------------------------------------------------------------------ names


BIDI = ["\u202e", "\u202d", "\u2066", "\u2069", "\u200f", "\u061c"]


@pytest.mark.parametrize("mark", BIDI)
@pytest.mark.parametrize("field", ["name", "body name", "point name", "frame name", "source name"])
def test_names_with_bidirectional_controls_are_refused_by_field(field, mark):
    """'ab\u202ecd' displays as 'abdc': a name that reads other than it is."""
    document = _pendulum()
    body = document["bodies"][0]
    text = f"link{mark}exe.png"
    if field == "name":
        document["name"] = text
    elif field == "body name":
        body["name"] = text
    elif field == "point name":
        body["points"][text] = [0.0, 0.0, 0.0]
    elif field == "frame name":
        body.setdefault("frames", {})[text] = {"origin": [0.0, 0.0, 0.0]}
    else:
        body["source_name"] = text
    with pytest.raises(ModelError, match="one line of printable text") as refused:
        loads(json.dumps(document))
    assert "bidirectional" in str(refused.value)


def test_text_in_other_scripts_is_still_a_name():
    document = _pendulum()
    document["name"] = "מטוטלת כפולה — двойной маятник"
    document["bodies"][0]["name"] = "ذراع"
    assert loads(json.dumps(document)).bodies[0].name == "ذراع"


# ------------------------------------------------------------------------------------------ URDF


def _urdf(tmp_path: Path, second: str = "", inertia: str | None = None, name: str = "b") -> Path:
    full = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'
    path = tmp_path / "robot.urdf"
    path.write_text(
        f"""<robot name="r">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/>{full}</inertial></link>
  <link name="{name}"><inertial><mass value="1"/>{inertia or full}</inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="a"/><child link="{name}"/><origin xyz="1 0 0"/>
    <axis xyz="0 0 1"/>{second}</joint>
</robot>""",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("attribute", ["multiplier", "offset"])
def test_a_mimic_that_is_not_a_number_is_refused_naming_its_element_and_attribute(tmp_path, attribute):
    """It was refused as "coordinate 'j2'.initial", which the file has no such thing as."""
    from mbstudio.io.urdf_import import import_urdf

    path = _urdf(tmp_path, f'<mimic joint="j1" {attribute}="nan"/>')
    with pytest.raises(ModelError, match=rf"line 7: <mimic {attribute}>: is not a finite number"):
        import_urdf(path)


def test_an_inertia_with_only_ixx_is_refused_naming_the_link(tmp_path):
    """URDF requires all six terms; a missing one was read as 0 (a rod where the file says nothing)."""
    from mbstudio.io.urdf_import import import_urdf

    path = _urdf(tmp_path, inertia='<inertia ixx="0.1"/>')
    with pytest.raises(ModelError, match="link 'b' <inertia>: lacks ixy, ixz, iyy, iyz, izz"):
        import_urdf(path)


def test_a_link_named_with_a_right_to_left_override_is_refused_by_line(tmp_path):
    from mbstudio.io.urdf_import import import_urdf

    path = _urdf(tmp_path, name="b\u202egnp.exe")
    with pytest.raises(ModelError, match=r"line 4: link 'b\\u202egnp.exe': has a name that is not one line"):
        import_urdf(path)


def test_a_floating_joint_between_links_imports_as_the_docs_say(tmp_path):
    """docs/urdf.md said floating joints between links are refused while the import made them free joints (as
    Pinocchio reads them: test_urdf.py compares the dynamics); the docs now say what the import does."""
    from mbstudio.io.urdf_import import import_urdf

    path = _urdf(tmp_path)
    path.write_text(path.read_text().replace('type="continuous"><parent link="a"', 'type="floating"><parent link="a"'))
    result = import_urdf(path, floating_base=False)
    assert [j.type for j in result.model.joints] == ["revolute", "free"]
    docs = (HERE.parent / "docs" / "urdf.md").read_text(encoding="utf-8")
    assert "floating joints between links and planar joints are refused" not in docs
    assert "a `floating` joint between two links becomes a `free` joint" in docs


# ------------------------------------------------------------------------------------------ massless subtrees


def _massless_tail(links: int, massless: int) -> dict:
    document = chain_document(links)
    for body in document["bodies"][links - massless :]:
        body["inertia"] = dict.fromkeys(body["inertia"], 0.0)
    return document


def test_a_massless_subtree_is_refused_before_a_run_naming_its_bodies():
    """romeo's finger links made forward dynamics NaN for every acceleration, with only a RuntimeWarning."""
    from mbstudio.simulation.run import simulate

    model = loads(json.dumps(_massless_tail(4, 2)))  # loads: kinematics needs no masses
    with pytest.raises(ModelError, match=r"joint 'j3': moves only bodies without mass or inertia \('3', '4'\)"):
        check_dynamics(model)
    with pytest.raises(ModelError, match="'3', '4'"):
        simulate(model, 0.01, samples=3)


def test_a_massless_body_carried_by_a_loop_or_a_coupling_or_a_fixed_joint_passes():
    check_dynamics(samples.load("four_bar"))  # every sample passes, loops and couplings included
    document = _massless_tail(3, 1)
    document["joints"][2]["type"], document["joints"][2]["coordinates"] = "fixed", []
    check_dynamics(loads(json.dumps(document)))  # a massless tip welded on: no coordinate of its own
    document = _massless_tail(3, 1)
    document["couplings"] = [{"name": "c", "follower": "q3", "leader": "q2", "ratio": 1.0}]
    check_dynamics(loads(json.dumps(document)))  # driven by its leader


def test_a_massless_middle_body_with_a_heavy_child_passes():
    document = chain_document(3)
    document["bodies"][1]["inertia"] = dict.fromkeys(document["bodies"][1]["inertia"], 0.0)
    check_dynamics(loads(json.dumps(document)))


def test_romeos_fingers_are_named():
    from mbstudio.io.example_robots import robots_folder
    from mbstudio.io.urdf_import import import_urdf

    folder = robots_folder()
    if folder is None:
        pytest.skip("example-robot-data is not installed")
    result = import_urdf(folder / "romeo_description" / "urdf" / "romeo.urdf", [folder])
    with pytest.raises(ModelError, match=r"joint 'LHand': moves only bodies without mass or inertia \('LFinger11Link'"):
        check_dynamics(result.model)


# ------------------------------------------------------------------------------------------ MJCF

pytest.importorskip("lxml")


def _mjcf(folder: Path, head: str) -> Path:
    path = folder / "model.xml"
    path.write_text(
        f'<mujoco>{head}<worldbody><body name="b"><joint type="hinge"/><geom size="0.1"/></body></worldbody></mujoco>'
    )
    return path


@pytest.fixture
def mujoco_never_called(monkeypatch):
    """MuJoCo's compiler, replaced by a failure: a refusal must come before it opens anything."""
    mujoco = pytest.importorskip("mujoco")

    def opened(*_):
        raise AssertionError("MuJoCo's compiler was called")

    monkeypatch.setattr(mujoco.MjModel, "from_xml_path", opened)


@pytest.mark.parametrize(
    ("head", "element"),
    [
        ('<include file="/etc/passwd"/>', "<include file>"),
        ('<include file="../outside/x.xml"/>', "<include file>"),
        ('<asset><mesh name="m" file="../outside/secret.stl"/></asset>', "<mesh file>"),
        ('<asset><texture name="t" type="cube" fileright="../outside/secret.stl"/></asset>', "<texture fileright>"),
        ('<compiler meshdir="../outside"/><asset><mesh name="m" file="secret.stl"/></asset>', "<compiler meshdir>"),
        ('<compiler assetdir="/etc"/>', "<compiler assetdir>"),
    ],
)
def test_mjcf_files_outside_the_folder_are_refused_before_mujoco_opens_them(
    tmp_path, mujoco_never_called, head, element
):
    from mbstudio.io.mjcf_import import import_mjcf

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.xml").write_text("<mujoco/>")
    (outside / "secret.stl").write_text("solid secret\nendsolid secret\n")
    folder = tmp_path / "model"
    folder.mkdir()
    path = _mjcf(folder, head)
    with pytest.raises(ModelError, match=f"model.xml, line 1: {element}: names a file outside the model's folder"):
        import_mjcf(path)


def test_an_include_that_includes_outside_is_refused_in_the_included_file(tmp_path, mujoco_never_called):
    from mbstudio.io.mjcf_import import import_mjcf

    (tmp_path / "outside.xml").write_text("<mujoco/>")
    folder = tmp_path / "model"
    (folder / "parts").mkdir(parents=True)
    (folder / "parts" / "a.xml").write_text('<mujoco>\n<include file="../../outside.xml"/></mujoco>')
    with pytest.raises(ModelError, match=r"a.xml, line 2: <include file>: names a file outside"):
        import_mjcf(_mjcf(folder, '<include file="parts/a.xml"/>'))


def test_a_link_inside_the_folder_to_a_file_outside_is_refused(tmp_path, mujoco_never_called):
    from mbstudio.io.mjcf_import import import_mjcf

    (tmp_path / "secret.xml").write_text("<mujoco/>")
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(tmp_path / "secret.xml", folder / "inside.xml")
    with pytest.raises(ModelError, match=r"<include file>: names a file outside.*inside\.xml"):
        import_mjcf(_mjcf(folder, '<include file="inside.xml"/>'))


def test_includes_and_meshes_inside_the_folder_or_a_given_one_are_compiled(tmp_path):
    pytest.importorskip("mujoco")
    from mbstudio.io.mjcf_import import import_mjcf

    folder = tmp_path / "model"
    (folder / "parts").mkdir(parents=True)
    (folder / "parts" / "options.xml").write_text('<mujoco><option timestep="0.004"/></mujoco>')
    result = import_mjcf(_mjcf(folder, '<include file="parts/options.xml"/>'))
    assert len(result.model.bodies) == 1
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "options.xml").write_text('<mujoco><option timestep="0.004"/></mujoco>')
    path = _mjcf(folder, '<include file="../shared/options.xml"/>')
    with pytest.raises(ModelError, match="outside"):
        import_mjcf(path)
    assert len(import_mjcf(path, folders=[shared]).model.bodies) == 1


# ------------------------------------------------------------------------------------------ sweeps


def test_a_sweep_with_a_time_that_is_not_finite_is_refused_before_running(tmp_path, capsys):
    """`--t-end nan` ran the whole study (84 s), every row 'cannot convert float NaN to integer', exit 0."""
    out = tmp_path / "study.csv"
    for value in ("nan", "inf", "-1", "0", "1_0"):
        with pytest.raises(SystemExit) as stopped:
            main(["sweep", str(samples.path("double_pendulum")), "--vary", "L=0.5:1.5:3", "--analysis", "simulate",
                  "--t-end", value, "--out", str(out)])  # fmt: skip
        assert stopped.value.code == 2 and not out.exists()
        assert f"argument --t-end: {value!r} is not a finite positive time" in capsys.readouterr().err
    model = samples.load("double_pendulum")
    with pytest.raises(ModelError, match="t_end: is not a finite positive time"):
        Study(model, grids(["L=0.5:1.5:3"]), "simulate", {"t_end": math.nan})


def test_a_grid_written_with_underscores_or_other_digits_is_refused():
    for spec in ("L=0_5:1.5:3", "L=0.5:1.5:1_0", "L=٠.5:1.5:3"):
        with pytest.raises(ModelError, match="is not NAME=start:stop:count"):
            grids([spec])


class _Finished:
    """What a Dask future of a computed point answers."""

    status = "finished"

    def __init__(self, row: dict) -> None:
        self.row = row

    def done(self) -> bool:
        return True

    def result(self) -> dict:
        return self.row


class _Client:
    """A client that computes each point it is sent here and now, and remembers which."""

    cluster = None

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def submit(self, function, model_text, point, analysis, options, pure):
        self.sent.append(point)
        return _Finished(function(model_text, point, analysis, options))

    def scheduler_info(self, n_workers):
        return {"workers": {"here": {}}}

    def cancel(self, futures) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def clients(monkeypatch):
    """Each Study's client, computing in this process: the study's own start, poll, wait and rows run."""
    made: list[_Client] = []

    def connect(self):
        made.append(_Client())
        return made[-1]

    monkeypatch.setattr(study_module.Study, "_connect", connect)
    monkeypatch.setattr(study_module.Study, "_check_workers", lambda self: None)
    return made


def _sweep(out: Path, *extra: str) -> int:
    args = ["sweep", str(samples.path("double_pendulum")), "--vary", "L=0.5:1.5:3", "--analysis", "basepar"]
    return main([*args, "--method", "dp", *extra, "--out", str(out)])


def test_a_study_whose_every_point_failed_is_not_complete_and_exits_1(tmp_path, clients, monkeypatch, capsys):
    """It said "complete": true and exited 0."""
    monkeypatch.setitem(study_module.ANALYSES, "base_parameters", lambda model, options: 1 / 0)
    out = tmp_path / "study.parquet"
    assert _sweep(out) == 1
    provenance = json.loads(pq.read_table(out).schema.metadata[b"provenance"])
    assert provenance["complete"] is False and provenance["points_done"] == 3 == provenance["points_failed"]
    assert "3 failed" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_a_rerun_of_the_same_study_computes_only_the_points_not_done(tmp_path, clients, suffix, capsys):
    """A rerun recomputed every point of a stopped sweep. The same model (hash), analysis, options, grid and
    units: the points the table holds without error are kept as written; a failed or missing one is computed."""
    out = tmp_path / f"study.{suffix}"
    assert _sweep(out, "--units", "deg,mm") == 0 and len(clients[-1].sent) == 3
    first = out.read_bytes()
    assert _sweep(out, "--units", "deg,mm") == 0 and clients[-1:] == clients[:1]  # no cluster: nothing to send
    assert out.read_bytes() == first and "3 of 3 points taken" in capsys.readouterr().out
    _forget_point(out, suffix, 1)  # as if the study had stopped before its second point
    assert _sweep(out, "--units", "deg,mm") == 0 and clients[-1].sent == [{"L": 1.0}]
    assert "2 of 3 points taken" in capsys.readouterr().out
    assert _rows(out, suffix) == _rows_of(first, out, suffix)
    for other in (["--units", "si"], ["--samples", "7"]):  # another study in the same file: every point again
        assert _sweep(out, *other) == 0 and len(clients[-1].sent) == 3
        assert "holds another study" in capsys.readouterr().out


def _forget_point(out: Path, suffix: str, k: int) -> None:
    """The table as a stopped run leaves it: point k not run."""
    if suffix == "parquet":
        import pyarrow as pa

        table = pq.read_table(out)
        rows = table.to_pylist()
        rows[k] = {key: (study_module.NOT_RUN if key == "error" else None) for key in rows[k]}
        rows[k]["L [mm]"] = 1000.0
        pq.write_table(pa.Table.from_pylist(rows).replace_schema_metadata(table.schema.metadata), out)
    else:
        lines = out.read_text().splitlines()
        header = lines[0].split(",")
        cells = ["" for _ in header]
        cells[header.index("error")], cells[header.index("L [mm]")] = study_module.NOT_RUN, "1000.0"
        lines[1 + k] = ",".join(cells)
        out.write_text("\n".join(lines) + "\n")


def _rows(out: Path, suffix: str) -> list[dict]:
    return _rows_of(out.read_bytes(), out, suffix)


def _rows_of(content: bytes, out: Path, suffix: str) -> list[dict]:
    """The results of a table's rows (what a point's run varies, its time and worker, left out)."""
    copy_path = out.with_name(f"copy.{suffix}")
    copy_path.write_bytes(content)
    if suffix == "parquet":
        rows = pq.read_table(copy_path).to_pylist()
    else:
        import csv

        rows = list(csv.DictReader(copy_path.read_text().splitlines()))
    return [{k: v for k, v in r.items() if k not in ("seconds [s]", "worker")} for r in rows]


def test_a_point_of_a_resumed_study_is_the_point_computed_alone():
    model = samples.load("double_pendulum")
    study = Study(model, grids(["L=0.5:1.5:3"]), "basepar", {"method": "dp"})
    alone = evaluate_point(dumps(model), {"L": 1.5}, "basepar", {"method": "dp"})
    assert study.resume({**study.provenance(), "grid": {"L": [0.5, 1.0, 1.5]}}, [alone, alone, alone]) == 3
    assert study.resume({**study.provenance(), "options": {"method": "vp"}}, [alone] * 3) == 0  # another study's
    assert study.provenance()["points_done"] == 3  # what was taken stays
    other = Study(model, grids(["L=0.5:1.5:3"]), "basepar", {"method": "dp"})
    assert other.resume({**other.provenance(), "model_hash": "0" * 64}, [alone] * 3) == 0
    assert other.resume(other.provenance(), [alone] * 2) == 0  # another grid's rows


# ------------------------------------------------------------------------------------------ check


def test_check_never_builds_an_engine(tmp_path, monkeypatch, capsys):
    """`check` on a 24-link chain compiled its engine for 36 s; it now says what the first run will build."""
    from mbstudio.dynamics import engine

    def built(*_args, **_kwargs):
        raise AssertionError("check built an engine")

    monkeypatch.setattr(engine, "_build", built)
    monkeypatch.setattr(engine, "engine", built)
    path = tmp_path / "chain.mbs"
    path.write_text(json.dumps(chain_document(24)))
    assert main(["check", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "built (or loaded from the cache) by the first run" in report["engine"]
    assert main(["check", str(path)]) == 0
    assert "engine: native C, built" in capsys.readouterr().out or not report["engine_native"]


def test_a_big_check_says_its_steps_with_their_times(tmp_path, capsys):
    path = tmp_path / "chain.mbs"
    path.write_text(json.dumps(chain_document(3000)))  # over a megabyte: progress on stderr
    assert main(["check", str(path)]) == 0
    steps = [line for line in capsys.readouterr().err.splitlines() if line.startswith("check:")]
    assert [re.sub(r"^check:\s+[0-9.]+ s  ", "", s) for s in steps] == [
        "reading the model",
        "3000 bodies: structure, counts and assembly",
        "looking for a parallel machine's platform",
        "done",
    ]
    seconds = [float(s.split()[1]) for s in steps]  # the seconds since the check began
    assert seconds == sorted(seconds) and np.all(np.isfinite(seconds))


@pytest.mark.parametrize("formula", ["1/t", "t**-1", "1/sin(t)"])
def test_a_formula_infinite_at_the_start_is_said_to_be_so(formula):
    """Item 4: '1/t' was refused as 'divides by zero' and 't**-1' as '0.0 cannot be raised to a negative power':
    true of the arithmetic at t = 0, but what the person must read is that the function is infinite where the run
    starts. A division by a true zero keeps its own message, and a pole later in the run is the run's to meet."""
    data = json.loads(samples.path("four_bar").read_text())
    data["forces"] = [{"type": "actuator", "name": "drive", "coordinate": "theta1", "formula": formula}]
    with pytest.raises(ModelError, match=r"force 'drive'\.formula: is infinite at t = 0 s, where a run starts"):
        loads(json.dumps(data))
    data["forces"][0]["formula"] = "1/0"
    with pytest.raises(ModelError, match="divides by zero"):
        loads(json.dumps(data))
    data["forces"][0]["formula"] = "1/(t - 0.5)"
    assert loads(json.dumps(data)).forces[0].formula == "1/(t - 0.5)"


@pytest.mark.parametrize("typed", ["1_0", "0.5_0", "١٠"])
def test_numbers_typed_on_the_command_line_are_numbers_as_people_write_them(typed, capsys):
    """Item 8: Python's float() reads '1_0' as 10 and Arabic-Indic digits as digits; the model files refuse them,
    and now so do --velocity, --at, --hold and --from (one reader, model/typed_numbers.py)."""
    code = main(["simulate", str(samples.path("four_bar")), "--t-end", "0.01", "--velocity", f"theta1={typed}"])
    assert code == 2 and f"'{typed}' is not a number" in capsys.readouterr().err
