"""Cold builds: the engines and kernels of the largest models built into an empty cache, each in a process of its own,
as the first command on a new model builds them: tracing, generating C and compiling it (the compilers' CPU time
included), against the targets of 10 s of CPU and 300 MB.

The child process makes the model first, outside the measure, then reports the CPU time of the build (its own and
its waited-for children's, the compilers) and the peak resident memory of the largest of its processes: its own
(VmHWM, reset when it starts) and each compiler's, as GNU time reports it for the compiler alone (a process's
`ru_maxrss` counts the memory of the process it was started from, so neither is read from the rusage of a child).
Where GNU time is missing, the compilers' peaks are not measured and the row says so. An engine's row is what a run
waits for before it integrates; its output series, which the run's results build after the integration, are
measured next (`series_cpu_s`, their compilers' peaks in the row's). Beside the chain's and Talos'
rows, Pinocchio's own model build from the same input (its URDF parser for Talos, the reference's model of the chain
made by hand, io/pinocchio_reference.py): what a Pinocchio user waits for before a first call, with no code
generated.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .registry import benchmark, row

CPU_TARGET_S = 10.0  # CPU seconds of one build, compilers included
MEMORY_TARGET_MB = 300.0  # the largest resident size of any of its processes

# row name: (model, what is built: "engine" or a kernel's name)
BUILDS = {
    "chain 100": ("chain 100", "engine"),
    "Talos engine": ("talos", "engine"),
    "Talos kernels (RNEA, CRBA, ABA)": ("talos", "mass_matrix"),
    "Talos regressor kernel": ("talos", "regressor"),
    "vehicle engine": ("vehicle", "engine"),
}


@benchmark("cold_builds")
def _cold_builds(states: int) -> list[dict]:
    """Each build in a fresh process into an empty cache (a minute or two in all). `states` does not apply."""
    rows = []
    for name, (model, what) in BUILDS.items():
        with tempfile.TemporaryDirectory() as folder:
            report = _child(model, what, folder)
        kept = ("python_peak_mb", "native", "series_cpu_s", "series_native")
        extra = {key: report[key] for key in kept if key in report}
        pinocchio = _pinocchio_build_s(model)
        if pinocchio is not None:
            extra["pinocchio_model_build_cpu_s"] = pinocchio
        cpu = row(f"{name} build, cold (s per build, CPU)", report["cpu_s"], CPU_TARGET_S, 1.0, **extra)
        memory = row(f"{name} build, cold (peak resident MB)", report["peak_mb"], MEMORY_TARGET_MB, 1.0, unit="MB")
        compilers = {"compiler_peak_mb": report["compiler_peak_mb"]}
        rows += [{**cpu, "reference_method": "target"}, {**memory, **compilers, "reference_method": "target"}]
    return rows


def _child(model: str, what: str, cache: str) -> dict:
    """The build measured in a process of its own with `cache` as its engine cache (and a folder for a `cc` that
    runs the compiler under GNU time, each peak appended to a file)."""
    script = (
        "import json, sys; from mbstudio.benchmarks.cold_builds import build; print(json.dumps(build(*sys.argv[1:])))"
    )
    environment = {**os.environ, "MBSTUDIO_CACHE": cache, "MBSTUDIO_PEAKS": str(Path(cache) / "peaks.txt")}
    compiler, timer = shutil.which("cc") or shutil.which("gcc"), shutil.which("time", path="/usr/bin:/bin")
    if compiler and timer:
        shim = Path(cache) / "shim"
        shim.mkdir()
        script_path = shim / "cc"
        script_path.write_text(f'#!/bin/sh\nexec {timer} -a -o "$MBSTUDIO_PEAKS" -f %M {compiler} "$@"\n')
        script_path.chmod(0o700)
        environment["PATH"] = f"{shim}{os.pathsep}{environment.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", script, model, what], capture_output=True, text=True, env=environment, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def build(model_name: str, what: str) -> dict:
    """In the child: the model made, then its engine or kernel built and measured."""
    from ..numerics.native_cache import cache_root

    model = _model(model_name)
    start = _cpu()
    series = {}
    if what == "engine":
        from ..dynamics.engine import engine

        built = engine(model)
        cpu = _cpu() - start
        # the output series, a library of their own that a run builds after its integration, for its results
        series["series_native"] = built.series_functions.compiled
        series["series_cpu_s"] = _cpu() - start - cpu
    else:
        from ..dynamics.kernels import kernel

        kernel(model, what)
        cpu = _cpu() - start
    own = _own_peak_mb()
    peaks = Path(os.environ.get("MBSTUDIO_PEAKS", os.devnull))
    compilers = [int(n) / 1024 for n in peaks.read_text().split() if n.isdigit()] if peaks.exists() else []
    native = any((cache_root() / "engines").glob("*.so"))  # a library was compiled and filed
    measured = max(compilers) if compilers else None
    return {
        "cpu_s": cpu,
        "python_peak_mb": own,
        "compiler_peak_mb": measured if measured is not None else "not measured (no GNU time)",
        "peak_mb": max(own, measured or 0.0),
        "native": native,
        **series,
    }


def _own_peak_mb() -> float:
    """This process's peak resident size since it started (Linux: VmHWM; elsewhere ru_maxrss, which may count
    the process it was started from)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, kilobytes elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _cpu() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _model(name: str):
    from .. import samples
    from .models import spatial_chain, talos

    if name == "talos":
        return talos()[0]
    if name.startswith("chain "):
        return spatial_chain(int(name.split()[1]))
    return samples.load(name)


def _pinocchio_build_s(name: str) -> float | None:
    """CPU seconds of Pinocchio's model build from the same input, or None where it has none (the vehicle)."""
    if name == "talos":
        import pinocchio as pin

        from .models import talos

        path = str(talos()[1])
        start = time.process_time()
        pin.buildModelFromUrdf(path)
        return time.process_time() - start
    if name.startswith("chain "):
        from ..io.pinocchio_reference import ClosedLoopReference
        from ..kinematics import Mechanism

        mech = Mechanism(_model(name))
        start = time.process_time()
        ClosedLoopReference.of(mech)
        return time.process_time() - start
    return None
