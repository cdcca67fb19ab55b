"""Parameter studies on Dask: the grid, one point, a study on a local cluster and on a separately started
scheduler with two workers, and the files of `mbstudio sweep`."""

from __future__ import annotations

import csv
import http.client
import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import distributed
import numpy as np
import psutil
import pyarrow.parquet as pq
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.identification.pipeline import base_parameters
from mbstudio.jobs import study as study_module
from mbstudio.jobs.study import NOT_RUN, Study, evaluate_point, grid, grids, points, scheduler_address
from mbstudio.model import ModelError, dumps


def test_a_grid_is_start_stop_count_both_ends_included():
    name, values = grid("D12=0.30:0.34:21")
    assert name == "D12" and len(values) == 21 and values[0] == 0.30 and values[-1] == 0.34
    assert np.allclose(np.diff(values), 0.002)
    assert grid("L1 = 0.2")[1].tolist() == [0.2]
    for bad in ("D12", "D12=a:b:3", "D12=0:1", "D12=0:1:0", "=1:2:3", "D12=0:inf:3", "L1=nan", "L1=-inf"):
        with pytest.raises(ModelError, match="vary"):
            grid(bad)


def test_points_combine_the_grids_and_refuse_a_name_that_is_not_a_parameter():
    model = samples.load("four_bar")
    name = model.parameters[0].name
    grid_points = points(model, {name: np.array([1.0, 2.0]), model.parameters[1].name: np.array([3.0, 4.0, 5.0])})
    assert len(grid_points) == 6 and grid_points[0][name] == 1.0 and grid_points[-1][name] == 2.0
    with pytest.raises(ModelError, match="is not a parameter of the model") as err:
        points(model, {"nope": np.array([1.0])})
    assert name in str(err.value)  # the valid names are listed


def _varied(model, point: dict):
    for p in model.parameters:
        p.value = point.get(p.name, p.value)
    return model


def test_a_point_gives_what_the_analysis_gives_on_the_varied_model():
    model = samples.load("double_pendulum")
    name = model.parameters[0].name
    point = {name: 1.7 * model.parameters[0].value}
    row = evaluate_point(dumps(model), point, "basepar", {"method": "dp"})
    direct = base_parameters(_varied(samples.load("double_pendulum"), point), "dp").dp
    assert row["error"] == "" and row[name] == point[name]
    assert row["dp_rank"] == direct.rank == 6
    assert row["dp_condition"] == pytest.approx(float(direct.sigma[0] / direct.sigma[direct.rank - 1]), rel=1e-12)


def test_a_failed_point_keeps_its_row_and_says_why():
    model = samples.load("four_bar")
    long_crank = {p.name: 10.0 for p in model.parameters[:1]}  # the loop cannot close any more
    row = evaluate_point(dumps(model), long_crank, "kinematics", {"samples": 5})
    assert row["error"] and "peak" not in " ".join(row)
    assert row[model.parameters[0].name] == 10.0 and row["seconds"] >= 0


def test_a_study_on_a_local_cluster_gives_every_point_as_computed_alone_and_serves_no_pages():
    """Issue 23 item 5: Dask's pages (status, workers, logs) were served on 127.0.0.1:8787 though no dashboard was
    asked for; every port the cluster listens on is asked for them while the study runs."""
    model = samples.load("double_pendulum")
    study = Study(model, {"L": np.array([0.5, 1.0, 1.5])}, "basepar", {"method": "dp"}, workers=2)
    answers: dict = {}

    def look(done: int, total: int) -> None:
        if not answers:
            ours = {os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))}
            ports = _listening(ours)
            paths = ("/", "/status", "/health", "/info")
            answers.update({(port, path): _http_status(port, path) for port in ports for path in paths})

    rows = study.run(progress=look)
    ports = {port for port, _ in answers}
    assert 8787 not in ports and len(ports) >= 3  # the scheduler, two workers (and their nannies) listen
    assert all(status in (None, 404) for status in answers.values()), {
        k: v for k, v in answers.items() if v not in (None, 404)
    }
    assert [r["L"] for r in rows] == [0.5, 1.0, 1.5]
    for point, row in zip(study.points, rows, strict=True):
        alone = evaluate_point(study.model_text, point, "basepar", {"method": "dp"})
        assert row["error"] == "" and row["worker"].startswith("tls://127.0.0.1")  # the local cluster speaks TLS
        assert row["dp_rank"] == alone["dp_rank"] and row["dp_condition"] == pytest.approx(alone["dp_condition"])
    assert study.client is None  # closed after the run


@pytest.mark.slow  # a Dask cluster of its own (10 s); the study and the window's panel run on one in the README run
def test_the_sweep_command_writes_parquet_and_csv_with_provenance(tmp_path, capsys):
    model_path = tmp_path / "pendulum.mbs"
    model_path.write_text(dumps(samples.load("double_pendulum")))
    name = samples.load("double_pendulum").parameters[0].name
    args = ["sweep", str(model_path), "--vary", f"{name}=0.5:1.5:3", "--analysis", "basepar", "--method", "dp"]
    assert main([*args, "--out", str(tmp_path / "study.parquet")]) == 0
    table = pq.read_table(tmp_path / "study.parquet")
    unit = f"{name} [m]"  # the varied parameter names its unit
    assert table.column(unit).to_pylist() == [0.5, 1.0, 1.5] and table.column("dp_rank").to_pylist() == [6, 6, 6]
    provenance = json.loads(table.schema.metadata[b"provenance"])
    assert provenance["analysis"] == "base_parameters" and provenance["points"] == 3  # the old name is read
    assert provenance["notes"] == [
        "'basepar' is read as 'base_parameters' (the name of the window and the jobs), with its old defaults"
    ]
    assert main([*args, "--out", str(tmp_path / "study.csv")]) == 0
    lines = [line for line in (tmp_path / "study.csv").read_text().splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert [float(r[unit]) for r in rows] == [0.5, 1.0, 1.5] and {r["dp_rank"] for r in rows} == {"6"}
    assert main([*args, "--out", str(tmp_path / "mm.csv"), "--units", "deg,mm"]) == 0  # --units honoured
    lines = [line for line in (tmp_path / "mm.csv").read_text().splitlines() if not line.startswith("#")]
    assert [float(r[f"{name} [mm]"]) for r in csv.DictReader(lines)] == [500.0, 1000.0, 1500.0]
    assert main([*args, "--out", str(tmp_path / "study.xlsx")]) == 2
    assert "must end in .parquet or .csv" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_separately_started_scheduler_and_two_workers_give_the_local_clusters_results(tmp_path):
    """Issue 12: the SLA's 50-digit base parameters over 21 values of D12, on a LocalCluster and on a `dask
    scheduler` with two `dask worker`s started here (loopback only), give the same table."""
    dask = [sys.executable, "-m", "dask"]  # this interpreter's Dask, so the workers import this mbstudio
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    scheduler = subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"])
    workers = [
        subprocess.Popen([*dask, "worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"])
        for _ in range(2)
    ]
    try:
        model = samples.load("sla_suspension")
        vary = {"D12": grid("D12=0.30:0.34:21")[1]}
        options = {"digits": 50, "samples": 40}
        local = Study(model, vary, "basepar", options, workers=2).run()
        with distributed.Client(address, timeout="60s") as client:  # both have registered, however slow a start
            client.wait_for_workers(2, timeout=120)
        remote = Study(model, vary, "basepar", options, scheduler=address).run()
    finally:
        for process in [*workers, scheduler]:
            process.terminate()
        for process in [*workers, scheduler]:
            process.wait(timeout=30)
    assert len({r["worker"] for r in remote}) == 2  # both workers took points
    keys = ["D12", "vp_rank", "vp_ridge_depth", "vp_condition", "model_hash", "error"]
    assert [[r[k] for k in keys] for r in local] == [[r[k] for k in keys] for r in remote]
    assert {r["vp_rank"] for r in local} == {41}  # Iriarte et al. (2017), Table 5, at every D12 of the sweep


PENDULUM = """{"format": "mbstudio", "schema_version": 1, "name": "pendulum",
 "parameters": [{"name": "L", "value": 1.0}],
 "bodies": [{"label": "1", "name": "bob", "inertia": {"m": 2, "mx": "2*L", "my": 0, "mz": 0, "Ixx": 0, "Ixy": 0,
   "Ixz": 0, "Iyy": "2*L**2", "Iyz": 0, "Izz": "2*L**2"}}],
 "joints": [{"name": "pivot", "type": "revolute", "parent": "0", "child": "1", "parent_frame": {"z": [0, 1, 0]},
   "child_frame": {"z": [0, 1, 0]}, "coordinates": [{"name": "theta", "initial": 1.2}]}]}"""


@pytest.mark.parametrize("length", [0.5, 2.0])
def test_a_linearize_point_finds_the_hanging_equilibrium_and_the_pendulum_frequency(length):
    row = evaluate_point(PENDULUM, {"L": length}, "linearize", {})
    assert row["error"] == "", row["error"]
    assert row["lowest_frequency_hz"] == pytest.approx(np.sqrt(9.81 / length) / (2 * np.pi), rel=1e-9)
    assert row["at theta"] == pytest.approx(np.pi / 2, abs=1e-9)  # the bob hangs straight down
    assert abs(row["min_damping_ratio"]) < 1e-9 and row["max_real_eigenvalue"] < 1e-9


# ---------------------------------------------------------------------------------------- grids and scheduler addresses
def test_a_parameter_varied_twice_is_refused(capsys):
    """`--vary L=1 --vary L=2` kept the second grid only."""
    with pytest.raises(ModelError, match="gives L a second grid"):
        grids(["L=0.5:1:3", "L=2"])
    args = ["sweep", str(samples.path("double_pendulum")), "--vary", "L=1", "--vary", "L=2", "--analysis", "basepar"]
    assert main([*args, "--out", "never.csv"]) == 2
    assert "gives L a second grid" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("garbage", "is not an address"),
        ("tcp://127.0.0.1", "is not an address"),
        ("tcp://127.0.0.1:99999", "is not an address"),
        ("tcp://host name:8786", "is not an address"),
        ("inproc://x", "uses inproc://, which MB Studio does not connect through"),
        ("ucx://127.0.0.1:1", "uses ucx://"),
        ("tls://127.0.0.1:1", "is tls://, which needs the certificates"),
    ],
)
def test_a_scheduler_address_is_checked_before_any_connection(address, words):
    """These gave tracebacks (ValueError, TypeError from inside Dask)."""
    with pytest.raises(ModelError, match="--scheduler") as caught:
        Study(samples.load("double_pendulum"), {"L": np.array([1.0])}, "basepar", scheduler=address)
    assert words in str(caught.value)


def test_addresses_that_are_addresses_are_kept():
    assert scheduler_address("192.168.1.10:8786") == "tcp://192.168.1.10:8786"
    assert scheduler_address("TLS://[::1]:8786") == "tls://[::1]:8786"
    assert scheduler_address("tcp://node-3.cluster:08786") == "tcp://node-3.cluster:8786"


def test_an_unreachable_scheduler_is_said_so(monkeypatch):
    """It was reported as "not enough memory" (and took the connection's timeout)."""
    monkeypatch.setattr(study_module, "CONNECT_SECONDS", 1)
    study = Study(
        samples.load("double_pendulum"), {"L": np.array([1.0])}, "basepar", scheduler=f"127.0.0.1:{_free_port()}"
    )
    with pytest.raises(ModelError, match=r"--scheduler: cannot connect to tcp://127\.0\.0\.1:\d+"):
        study.start()


def _listening(pids: set[int]) -> list[int]:
    return [c.laddr.port for c in psutil.net_connections("tcp") if c.status == "LISTEN" and c.pid in pids]


def _http_status(port: int, path: str) -> int | None:
    """The HTTP status of GET path on 127.0.0.1:port, None when what answers is not plain HTTP."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


@pytest.mark.slow  # 4 s (the README's run is held under 5 minutes)
def test_a_failed_study_hands_over_its_finished_points_and_lists_the_others():
    """A study that failed (here: its caller's progress callback) left no output at all."""
    model = samples.load("double_pendulum")
    # 40 ms a point in variable precision (DP took 0.3 ms: all 400 points could finish before the first poll)
    study = Study(model, {"L": np.linspace(0.5, 1.5, 400)}, "basepar", {"method": "vp", "digits": 50})
    seen: list[list[dict]] = []

    def fail(done: int, total: int) -> None:
        if done >= 2:
            raise RuntimeError("the caller broke down")

    with pytest.raises(RuntimeError, match="broke down"):
        study.run(progress=fail, checkpoint=seen.append)
    counts = [sum(r["error"] == "" for r in rows) for rows in seen]  # written as they came: how many at a time
    assert counts == sorted(counts) and counts[0] >= 1 and counts[-1] >= 2  # depends on the machine's load
    last = seen[-1]
    done = [r for r in last if r["error"] == ""]
    assert len(last) == 400 and 2 <= len(done) < 400 and study.client is None
    assert {r["error"] for r in last if r not in done} == {NOT_RUN}
    assert all(r["vp_rank"] == 6 for r in done) and study.provenance()["complete"] is False


@pytest.mark.slow  # a local cluster of its own (5 to 15 s)
def test_workers_of_another_mbstudio_are_refused_by_name(monkeypatch):
    monkeypatch.setattr(study_module, "__version__", "9.9.9")  # this side's version, the workers keep theirs
    study = Study(samples.load("double_pendulum"), {"L": np.array([1.0])}, "basepar", {"method": "dp"})
    with pytest.raises(ModelError, match=r"worker tls://127\.0\.0\.1:\d+: runs mbstudio 0\.1\.0") as caught:
        study.start()
    assert "mbstudio 9.9.9 installed" in str(caught.value) and study.client is None


def test_a_scheduler_without_workers_is_said_so(monkeypatch):
    from dask.distributed import LocalCluster

    monkeypatch.setattr(study_module, "WORKER_SECONDS", 1)
    with LocalCluster(
        n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        study = Study(
            samples.load("double_pendulum"), {"L": np.array([1.0])}, "basepar", scheduler=cluster.scheduler_address
        )
        with pytest.raises(ModelError, match="has no worker"):
            study.start()


def _certificates(folder, name: str = "mbstudio test CA") -> dict[str, str]:
    """A throwaway certificate authority and one certificate it signs for 127.0.0.1 (scheduler, worker and
    client alike), as PEM files in `folder`: {'ca': ..., 'cert': ..., 'key': ...}."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def certificate(subject: str, key, issuer: str, signer, ca: bool, extra=()):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        for extension in extra:
            builder = builder.add_extension(extension, critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate(name, ca_key, name, ca_key, True)
    san = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    leaf = certificate("127.0.0.1", key, name, ca_key, False, [san])
    paths = {kind: str(folder / f"{kind}.pem") for kind in ("ca", "cert", "key")}
    Path(paths["ca"]).write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    Path(paths["cert"]).write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    Path(paths["key"]).write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def _security_file(folder, certificates: dict[str, str]) -> Path:
    path = folder / "security.yaml"
    path.write_text(
        "distributed:\n  comm:\n    require-encryption: true\n    tls:\n"
        f"      ca-file: {certificates['ca']}\n      client:\n"
        f"        cert: {certificates['cert']}\n        key: {certificates['key']}\n"
    )
    return path


def test_a_study_on_a_tls_cluster_with_dask_security_and_a_client_it_does_not_know(tmp_path):
    """TLS and authentication through Dask's security configuration (`--security FILE`): a scheduler that only
    takes clients whose certificate its authority signed runs the points of ours; a client that trusts the
    scheduler but shows a certificate of another authority cannot connect, and is told so."""
    from dask.distributed import LocalCluster
    from distributed.security import Security

    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours, theirs = _certificates(tmp_path / "ours"), _certificates(tmp_path / "theirs", "another CA")
    roles = {f"tls_{role}_{part}": ours[part] for role in ("scheduler", "worker", "client") for part in ("cert", "key")}
    security = Security(tls_ca_file=ours["ca"], require_encryption=True, **roles)
    model = samples.load("double_pendulum")
    with LocalCluster(
        n_workers=1, processes=False, protocol="tls://", host="127.0.0.1", security=security, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        rows = Study(
            model,
            {"L": np.array([0.5, 1.5])},
            "basepar",
            {"method": "dp"},
            address,
            security=_security_file(tmp_path / "ours", ours),
        ).run()
        assert [(r["L"], r["error"], r["dp_rank"]) for r in rows] == [(0.5, "", 6), (1.5, "", 6)]
        stranger = Study(
            model,
            {"L": np.array([0.5])},
            "basepar",
            {},
            address,
            security=_security_file(tmp_path / "theirs", {**theirs, "ca": ours["ca"]}),
        )
        with pytest.raises(ModelError, match=f"cannot connect to {address}"):
            stranger.start()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("distributed: {comm: {}}", "has no distributed.comm.tls section"),
        ("[1, 2", "cannot be read"),
        ("distributed: {comm: {tls: {ca-file: /nowhere/ca.pem, client: {cert: /nowhere/c.pem}}}}", "cannot be used"),
    ],
)
def test_a_security_file_that_cannot_serve_is_named(tmp_path, text, words):
    path = tmp_path / "security.yaml"
    path.write_text(text)
    with pytest.raises(ModelError, match="--security") as caught:
        Study(
            samples.load("double_pendulum"),
            {"L": np.array([1.0])},
            "basepar",
            scheduler="tls://127.0.0.1:1",
            security=path,
        )
    assert words in str(caught.value)


def _this_mbstudio() -> dict:
    """The environment for a child process that imports this checkout's mbstudio."""
    root = str(Path(__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}


WORKER_WITHOUT_MBSTUDIO = """
import sys
sys.modules["mbstudio"] = None  # import mbstudio fails here, as on a machine where it is not installed
from distributed.cli.dask_worker import main
sys.argv = ["dask worker", *sys.argv[1:]]
main()
"""


@pytest.mark.slow  # a scheduler and a worker started here (10 s)
def test_a_worker_without_mbstudio_is_named_at_once(tmp_path, capsys):
    """It made the sweep wait for ever, with no message."""
    dask = [sys.executable, "-m", "dask"]
    address = f"tcp://127.0.0.1:{_free_port()}"
    scheduler = subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1]])
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER_WITHOUT_MBSTUDIO, address, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1"]
    )
    out = tmp_path / "study.csv"
    try:
        start = time.perf_counter()
        args = ["--vary", "L=0.5:1.5:3", "--analysis", "basepar", "--scheduler", address, "--out", str(out)]
        assert main(["sweep", str(samples.path("double_pendulum")), *args]) == 2
        assert time.perf_counter() - start < 60
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(timeout=30)
    err = capsys.readouterr().err
    assert re.search(r"worker tcp://127\.0\.0\.1:\d+: mbstudio is not installed there \(ModuleNotFoundError", err)
    assert not out.exists()


@pytest.mark.slow  # a sweep of its own, stopped (20 s)
def test_a_sweep_stopped_by_sigterm_leaves_a_table_of_its_points_with_the_others_listed(tmp_path):
    """4 342 of 10 000 points done, then SIGTERM: no output at all."""
    out = tmp_path / "study.parquet"
    sweep = [sys.executable, "-m", "mbstudio.cli", "sweep", str(samples.path("four_bar")), "--vary", "L1=0.09:0.11:200"]
    process = subprocess.Popen(
        [*sweep, "--analysis", "kinematics", "--samples", "2000", "--out", str(out)],
        env=_this_mbstudio(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not out.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the first point's row is written as it comes
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    table = pq.read_table(out)
    provenance = json.loads(table.schema.metadata[b"provenance"])
    errors = table.column("error").to_pylist()
    done, missing = errors.count(""), errors.count(NOT_RUN)
    assert table.num_rows == 200 and done + missing == 200 and done >= 1 and missing >= 1
    assert provenance["points_done"] == done and provenance["complete"] is False
    assert f"stopped by SIGTERM; {done} of 200 points done, written to {out}" in err and "not run: L1=" in err


@pytest.mark.slow  # a TLS scheduler and worker started here (10 s)
def test_the_sweep_command_on_a_tls_scheduler_with_a_security_file(tmp_path, capsys):
    certificates = _certificates(tmp_path)
    tls = ["--tls-ca-file", certificates["ca"], "--tls-cert", certificates["cert"], "--tls-key", certificates["key"]]
    port = _free_port()
    dask = [sys.executable, "-m", "dask"]
    scheduler = subprocess.Popen(
        [*dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard", *tls]
    )
    address = f"tls://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [*dask, "worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1", *tls],
        env=_this_mbstudio(),
    )
    out = tmp_path / "study.csv"
    try:
        args = ["--vary", "L=0.5:1.5:3", "--analysis", "basepar", "--method", "dp", "--scheduler", address]
        security = ["--security", str(_security_file(tmp_path, certificates)), "--out", str(out)]
        assert main(["sweep", str(samples.path("double_pendulum")), *args, *security]) == 0
        assert main(["sweep", str(samples.path("double_pendulum")), *args, "--out", str(out)]) == 2
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(timeout=30)
    assert "is tls://, which needs the certificates" in capsys.readouterr().err
    rows = list(csv.DictReader(line for line in out.read_text().splitlines() if not line.startswith("#")))
    assert [(r["L [m]"], r["dp_rank"], r["worker"][:16]) for r in rows] == [
        (v, "6", "tls://127.0.0.1:") for v in ("0.5", "1.0", "1.5")
    ]


@pytest.mark.slow  # a local cluster of its own (5 to 15 s)
def test_the_dashboard_when_asked_for_is_on_the_loopback(capsys):
    seen = []

    def look(done: int, total: int) -> None:
        if not seen:
            link = study.client.dashboard_link
            seen.append((link, _http_status(int(link.split(":")[2].split("/")[0]), "/status")))

    study = Study(samples.load("double_pendulum"), {"L": np.array([1.0])}, "basepar", {"method": "dp"}, dashboard=True)
    study.run(progress=look)
    assert seen[0][0].startswith("http://127.0.0.1:") and seen[0][1] == 200


@pytest.mark.slow  # a worker started here (10 s)
def test_a_study_whose_workers_all_left_stops_with_its_points(monkeypatch):
    """A scheduler left without workers made the study wait for ever; after a while without any, it stops and
    hands over the points done."""
    from dask.distributed import LocalCluster

    monkeypatch.setattr(study_module, "WORKER_SECONDS", 1)
    monkeypatch.setattr(study_module, "CHECKPOINT_SECONDS", 0.2)
    seen: list[list[dict]] = []
    cluster = LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None)
    with cluster:
        dask_worker = [sys.executable, "-m", "dask", "worker", cluster.scheduler_address, "--nthreads", "1"]
        worker = subprocess.Popen([*dask_worker, "--no-nanny", "--host", "127.0.0.1"], env=_this_mbstudio())
        try:
            deadline = time.monotonic() + 60
            while not cluster.scheduler.workers and time.monotonic() < deadline:
                time.sleep(0.1)  # the worker has joined before the study looks for one (for 1 s here)
            vary = {"L1": np.linspace(0.09, 0.11, 20)}
            study = Study(samples.load("four_bar"), vary, "kinematics", {"samples": 3000}, cluster.scheduler_address)
            with pytest.raises(study_module.StudyStopped, match="no worker has been connected for 1 s"):
                study.run(progress=lambda done, total: worker.kill(), checkpoint=seen.append)  # the only worker goes
        finally:
            worker.kill()
            worker.wait()
    errors = [r["error"] for r in seen[-1]]
    assert 1 <= errors.count("") < 20 and errors.count(NOT_RUN) == 20 - errors.count("")
