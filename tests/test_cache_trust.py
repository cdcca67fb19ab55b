"""The engine cache trusts nothing it did not write: each reproduction of the fourth hardening round as a test.

A pristine cache with the double pendulum's and the four-bar's engines is built once by a separate process; each
test copies it, attacks the copy, and runs the double pendulum in a new process (a library this process has
loaded stays mapped, and the loader would hand the old copy back for the same path). The accelerations must be
the pristine engine's to the bit, and /proc/self/maps shows which libraries that process mapped."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mbstudio.numerics import compiled, native_cache

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
ROOT = Path(__file__).resolve().parents[1]
LINUX = sys.platform.startswith("linux")

PROBE = """
import json, sys
import numpy as np
from mbstudio import samples
from mbstudio.dynamics.engine import engine
eng = engine(samples.load(sys.argv[1]))
q = eng.mech.assemble(None)[0]
qdd = eng.accelerations(0.2, q, np.linspace(0.3, 0.7, len(eng.mech.partition.independent)))
maps = open("/proc/self/maps").read() if sys.platform.startswith("linux") else ""
mapped = sorted({line.split()[-1] for line in maps.splitlines() if line.endswith(".so")})
print(json.dumps({"qdd": [float(x).hex() for x in qdd], "native": eng.native, "mapped": mapped}))
"""


def _env(cache: Path) -> dict:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "MBSTUDIO_CACHE": str(cache), "PYTHONPATH": path}


def probe(cache: Path, sample: str = "double_pendulum") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, sample], env=_env(cache), capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def check(cache: Path) -> subprocess.CompletedProcess:
    sample = ROOT / "samples" / "double_pendulum.mbs"
    command = [sys.executable, "-m", "mbstudio.cli", "check", str(sample)]
    return subprocess.run(command, env=_env(cache), capture_output=True, text=True, cwd=ROOT, timeout=600)


def simulate_once(cache: Path) -> subprocess.CompletedProcess:
    """`mbstudio simulate` of the double pendulum on this cache: the first command that loads its engine (`check`
    no longer compiles nor loads one)."""
    sample = ROOT / "samples" / "double_pendulum.mbs"
    out = cache.parent / "run.csv"
    command = [sys.executable, "-m", "mbstudio.cli", "simulate", str(sample), "--t-end", "0.01", "--out", str(out)]
    return subprocess.run(command, env=_env(cache), capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, dict, dict]:
    """A cache holding the four-bar's engine, then the double pendulum's; the double pendulum's probe; the
    names of its library and manifest."""
    cache = tmp_path_factory.mktemp("pristine") / "cache"
    probe(cache, "four_bar")
    before = set((cache / "engines").iterdir())
    reference = probe(cache)
    (library,) = [p for p in set((cache / "engines").iterdir()) - before if p.suffix == ".so"]
    return cache, reference, {"library": library.name, "manifest": library.with_suffix(".json").name}


@pytest.fixture
def attacked(pristine, tmp_path) -> tuple[Path, dict, Path, Path]:
    """A copy of the pristine cache (modes kept): its folder, the reference probe, the double pendulum's library
    and manifest in it."""
    source, reference, names = pristine
    cache = tmp_path / "cache"
    shutil.copytree(source, cache)
    engines = cache / "engines"
    return cache, reference, engines / names["library"], engines / names["manifest"]


def _same_engine(cache: Path, reference: dict) -> dict:
    """The double pendulum run again on this cache: native, and the pristine engine's accelerations to the bit."""
    again = probe(cache)
    assert again["native"] and again["qdd"] == reference["qdd"]
    return again


def _other_library(cache: Path, library: Path) -> Path:
    return next(p for p in (cache / "engines").glob("*.so") if p != library)


def _private_regular(path: Path) -> bool:
    info = os.lstat(path)
    return stat.S_ISREG(info.st_mode) and info.st_mode & 0o077 == 0


# ---------------------------------------------------------------------------------------- the two tracebacks
def test_a_library_made_writable_by_others_is_rebuilt_not_a_traceback(attacked):
    """`chmod 666 CACHE/engines/engine_*.so`, then the first command that loads the engine (`check` did, in the
    report): CacheRefused escaped native_cache.verified."""
    cache, reference, library, _ = attacked
    library.chmod(0o666)
    done = simulate_once(cache)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert _private_regular(library)
    _same_engine(cache, reference)


def test_a_library_replaced_by_a_link_to_an_identical_copy_is_rebuilt(attacked, tmp_path):
    cache, reference, library, _ = attacked
    copy = tmp_path / "copy.so"
    shutil.copyfile(library, copy)
    library.unlink()
    library.symlink_to(copy)
    done = simulate_once(cache)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert _private_regular(library) and copy.exists()  # the link was removed, not what it pointed to
    _same_engine(cache, reference)


# ------------------------------------------------------------------------------- a library outside the cache
@pytest.mark.skipif(not LINUX, reason="reads /proc/self/maps")
@pytest.mark.parametrize("named", ["absolute", "relative"])
def test_a_manifest_naming_a_library_outside_the_cache_is_not_followed(attacked, tmp_path, named):
    """`"library": "OUTSIDE/evil.so"` (or "../../evil.so") in the manifest, with a matching evil.so.sha256 beside
    it, loaded that file: the double pendulum ran on the four-bar's engine. Here the attacker even rewrites the
    index so that the edited manifest passes: the library is still the cache's own name for the key."""
    cache, reference, library, manifest = attacked
    evil = (tmp_path / "outside" / "evil.so") if named == "absolute" else (cache.parent / "evil.so")
    evil.parent.mkdir(exist_ok=True)
    shutil.copyfile(_other_library(cache, library), evil)
    evil.with_name("evil.so.sha256").write_text(native_cache._sha256(evil))
    entry = json.loads(manifest.read_text())
    entry["library"] = str(evil) if named == "absolute" else "../../evil.so"
    manifest.write_text(json.dumps(entry))
    with native_cache._locked(manifest.parent):
        native_cache._record(manifest, native_cache._sha256(manifest))
    again = _same_engine(cache, reference)
    assert str(evil) not in again["mapped"] and str(library) in again["mapped"]


def test_a_manifest_changed_without_the_index_is_discarded(attacked):
    cache, reference, _, manifest = attacked
    entry = json.loads(manifest.read_text())
    entry["metadata"]["partition"] = None
    manifest.write_text(json.dumps(entry))
    _same_engine(cache, reference)
    assert _private_regular(manifest) and json.loads(manifest.read_text())["metadata"]["partition"] is not None


@pytest.mark.skipif(not LINUX, reason="reads /proc/self/maps")
def test_a_library_and_a_digest_beside_it_replaced_together_are_not_trusted(attacked):
    """Replacing a .so and its .sha256 together was accepted: the digest lived beside what it vouched for. The
    digests are in the cache's own index now; a digest file beside a library means nothing."""
    cache, reference, library, _ = attacked
    impostor = _other_library(cache, library)
    shutil.copyfile(impostor, library)
    library.with_name(library.name + ".sha256").write_text(native_cache._sha256(library))
    _same_engine(cache, reference)
    assert native_cache._sha256(library) != native_cache._sha256(impostor)
    assert native_cache._digests(library.parent)[library.name] == native_cache._sha256(library)


@pytest.mark.parametrize("attack", ["writable", "link", "garbage"])
def test_an_index_not_private_or_not_the_caches_own_is_discarded_and_the_engines_rebuilt(attacked, tmp_path, attack):
    cache, reference, library, _ = attacked
    index = library.parent / native_cache.INDEX
    if attack == "writable":
        index.chmod(0o666)
    elif attack == "link":
        shutil.copyfile(index, tmp_path / "index.json")
        index.unlink()
        index.symlink_to(tmp_path / "index.json")
    else:
        native_cache.write_private(index, b'{"sha256": {"x": "not a digest"}}')
    _same_engine(cache, reference)
    assert _private_regular(index) and library.name in native_cache._digests(library.parent)


def test_a_lock_file_replaced_by_a_link_is_replaced_and_the_engine_still_built(attacked, tmp_path):
    cache, reference, library, _ = attacked
    library.unlink()  # to be built again, under the lock
    target = tmp_path / "elsewhere"
    target.write_text("not the cache's")
    lock = library.parent / "digests.lock"
    lock.unlink()
    lock.symlink_to(target)
    _same_engine(cache, reference)
    assert _private_regular(lock) and target.read_text() == "not the cache's"


def test_a_refused_cache_is_reported_as_refused_not_as_no_compiler(attacked):
    """A writable engines folder was refused, and `check` said "no C compiler found"."""
    cache, _, _, _ = attacked
    (cache / "engines").chmod(0o777)
    done = check(cache)
    assert done.returncode == 0, done.stderr
    assert "CasADi virtual machine: the engine cache folder" in done.stdout and "writable by others" in done.stdout
    assert "no C compiler" not in done.stdout


# -------------------------------------------------------------------------------------------- the code version
VERSIONS = """
import json, sys
from pathlib import Path
from mbstudio.numerics.compiled import code_version
print(code_version())
for relative, text in json.loads(sys.argv[1]):
    with open(Path("mbstudio") / relative, "a", encoding="utf-8") as file:
        file.write(text)
    code_version.cache_clear()
    print(code_version())
"""


def test_a_module_a_traced_one_imports_is_in_the_code_version_recursively(tmp_path):
    """The regressor, traced into the compiled kernels (dynamics/kernels.py), lived in identification/ and was not
    hashed: a changed regressor was served stale from the cache. In a copy of the package, edited file after file:
    a changed regressor changes the code version; so does a module outside the traced packages once a traced module
    imports it (even inside a function), and through it; an edit of the window's code does not (its engines are
    still good)."""
    shutil.copytree(ROOT / "mbstudio", tmp_path / "mbstudio", ignore=shutil.ignore_patterns("__pycache__"))
    edits = [
        ("gui/main_window.py", "\n# an edit the engines do not depend on\n"),
        ("io/json_text.py", "\n# not imported by traced code yet\n"),
        ("dynamics/regressor.py", "\n# a changed regressor\n"),
        ("dynamics/kernels.py", "\n\ndef _helper():\n    from ..io.json_text import json_text\n"),
        ("io/json_text.py", "\n# now traced through the kernels\n"),
    ]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # and run there: `-c` puts the working folder first
    command = [sys.executable, "-c", VERSIONS, json.dumps(edits)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    before, window, untraced, regressor, importing, imported = done.stdout.split()
    assert before == window == untraced
    assert len({untraced, regressor, importing, imported}) == 4


TRACE = """
import sys
from mbstudio import samples
before = set(sys.modules)
from mbstudio.dynamics import engine, kernels
from mbstudio.model import dumps
model = samples.load("double_pendulum")
for name in kernels.KERNELS:
    kernels.kernel_function(model, name)
engine._trace(dumps(model), None)
print("\\n".join(sorted(m.__file__ for n, m in sys.modules.items() if n.startswith("mbstudio") and n not in before)))
"""


def test_every_module_imported_while_tracing_is_in_the_code_version():
    """The modules Python really loads to trace every kernel and an engine (an independent route: the import
    machinery, not the source scan) are all among those code_version hashes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", TRACE], env=env, capture_output=True, text=True, check=True)
    loaded = {Path(line).resolve() for line in done.stdout.split()}
    assert ROOT / "mbstudio" / "dynamics" / "regressor.py" in loaded
    assert loaded <= set(compiled.traced_modules())


def test_the_key_holds_how_this_machine_builds(monkeypatch):
    """Python's ABI and the compiler are part of the key: an extension built for another Python is never loaded."""
    key = compiled.engine_key("text")
    assert sys.implementation.cache_tag in compiled._build_identity()
    monkeypatch.setattr(compiled, "_build_identity", lambda: "another python")
    compiled.code_version.cache_clear()
    try:
        assert compiled.engine_key("text") != key
    finally:
        compiled.code_version.cache_clear()


REMEMBERED = """
from pathlib import Path
from mbstudio.numerics.compiled import _version_record, code_version
first = code_version()
remembered = _version_record(Path("mbstudio").resolve()).exists()
code_version.cache_clear()
again = code_version()
path = Path("mbstudio/dynamics/regressor.py")
text = path.read_text(encoding="utf-8")
path.write_text(text.replace("a", "b", 1), encoding="utf-8")  # the same size: only the time tells
code_version.cache_clear()
print(first, remembered, again, code_version())
"""


def test_the_remembered_code_version_is_dropped_when_a_traced_file_changes(tmp_path):
    """code_version is remembered in the cache with the traced files' sizes and times: read back unchanged, and
    computed anew after an edit that keeps a file's size."""
    shutil.copytree(ROOT / "mbstudio", tmp_path / "mbstudio", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "MBSTUDIO_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-c", REMEMBERED]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    first, remembered, again, edited = done.stdout.split()
    assert remembered == "True" and first == again
    assert edited != first
