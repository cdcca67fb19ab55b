"""The compiled-engine cache is private and checked: each reproduction of the reports as a test (the attacks of
tests/test_cache_trust.py are the later ones).

Each test compiles a one-line function into its own cache folder (MBSTUDIO_CACHE), so nothing here touches the
user's cache; the functions' values are checked against the uncompiled function every time."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import casadi
import numpy as np
import pytest

from mbstudio.numerics import native_cache
from mbstudio.numerics.compiled import NativeNote, is_external, native

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


def _function(name: str = "twice_sine") -> casadi.Function:
    x = casadi.SX.sym("x")
    return casadi.Function(name, [x], [2 * casadi.sin(x)])


def _built_elsewhere(name: str = "twice_sine") -> None:
    """The function compiled into the cache by another process, as a previous run leaves it: a library this
    process has loaded stays mapped, and the loader would hand the old copy back for the same path."""
    code = f"from tests.test_native_cache import _function, native; native(_function({name!r}))"
    subprocess.run(
        [sys.executable, "-c", code], check=True, env=os.environ, cwd=os.path.dirname(os.path.dirname(__file__))
    )


def _libraries(folder) -> list:
    return sorted((folder / "engines").glob("*.so"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_cache_is_private_whatever_the_umask(cache):
    """Under umask 000 the cache and its libraries were world-writable."""
    old = os.umask(0)
    try:
        f = native(_function())
    finally:
        os.umask(old)
    assert is_external(f) and float(f(0.5)) == pytest.approx(2 * np.sin(0.5), abs=1e-15)
    (library,) = _libraries(cache)
    for folder in (cache, cache / "engines"):
        assert _mode(folder) == 0o700
    assert _mode(library) & 0o077 == 0
    assert _mode(cache / "engines" / native_cache.INDEX) & 0o077 == 0
    assert native_cache._digests(cache / "engines")[library.name] == native_cache._sha256(library)


def test_a_cache_writable_by_others_is_refused_with_a_message(cache):
    _built_elsewhere()
    os.chmod(cache / "engines", 0o777)
    with pytest.warns(NativeNote, match=r"writable by others \(mode 0777\).*MBSTUDIO_CACHE"):
        f = native(_function())
    assert not is_external(f) and float(f(0.5)) == pytest.approx(2 * np.sin(0.5), abs=1e-15)


def test_a_cache_not_owned_by_the_user_is_refused_with_a_message(cache, monkeypatch):
    _built_elsewhere()
    other = os.getuid() + 1
    if os.getuid() == 0:  # root can give the folder away for real
        os.chown(cache / "engines", other, -1)
    else:  # any other user: the cache looks as it would to the next user id
        monkeypatch.setattr(native_cache.os, "getuid", lambda: other - 2)
    with pytest.warns(NativeNote, match=r"belongs to user id \d+, not to you"):
        f = native(_function())
    assert not is_external(f)


def test_a_replaced_library_is_not_loaded_but_rebuilt(cache):
    """A library is loaded only when its bytes have the sha256 the index holds for it since it was built: another
    library copied over it (its constructor would run on loading) is removed and the right one built again."""
    _built_elsewhere()
    (library,) = _libraries(cache)
    _built_elsewhere("other")
    impostor = next(p for p in _libraries(cache) if p != library)
    shutil.copyfile(impostor, library)
    digest = native_cache._digests(cache / "engines")[library.name]
    f = native(_function())
    assert is_external(f) and float(f(0.5)) == pytest.approx(2 * np.sin(0.5), abs=1e-15)
    assert native_cache._sha256(library) == digest  # the rebuilt library is the one the digest names


@pytest.mark.parametrize("digest_too", [False, True])
def test_a_truncated_library_is_rebuilt(cache, digest_too):
    """A truncated .so made every later run of that model fail with "cannot open shared object file". Even
    with a digest that matches the truncated bytes, the load fails, and the library is built again."""
    _built_elsewhere()
    (library,) = _libraries(cache)
    library.write_bytes(library.read_bytes()[:1000])
    if digest_too:
        _vouch_for(library)
    f = native(_function())
    assert is_external(f) and float(f(0.5)) == pytest.approx(2 * np.sin(0.5), abs=1e-15)
    assert library.stat().st_size > 1000


def test_a_library_that_cannot_be_rebuilt_leaves_the_uncompiled_function_with_a_note(cache, monkeypatch):
    _built_elsewhere()
    (library,) = _libraries(cache)
    library.write_bytes(b"\x7fELF truncated")
    monkeypatch.setattr("mbstudio.numerics.compiled._compile", lambda *a: _truncated(library))
    with pytest.warns(NativeNote, match="cannot be loaded"):
        f = native(_function())
    assert not is_external(f) and float(f(0.5)) == pytest.approx(2 * np.sin(0.5), abs=1e-15)


def _truncated(library) -> bool:
    """A compiler that writes a broken library (and its digest): it can never be loaded."""
    library.write_bytes(b"\x7fELF broken")
    _vouch_for(library)
    return True


def _vouch_for(library) -> None:
    """The index made to hold the library's present digest, as an attacker who can write the index would."""
    with native_cache._locked(library.parent):
        native_cache._record(library, native_cache._sha256(library))


def test_the_location_is_the_platforms_cache_folder_unless_mbstudio_cache_says(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.delenv("MBSTUDIO_CACHE", raising=False)
    assert native_cache.cache_root() == native_cache.Path(platformdirs.user_cache_dir("mbstudio", appauthor=False))
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path))
    assert native_cache.cache_root() == tmp_path


def test_an_engine_loads_from_the_cache_without_tracing(cache, monkeypatch):
    """A second process (here: the engine forgotten) finds the library, its functions and the partition filed
    under the model's text and the code version, and traces nothing."""
    from mbstudio import samples
    from mbstudio.dynamics import engine as engines

    model = samples.load("four_bar")
    engines.clear_engines()
    first = engines.engine(model)
    q = first.mech.assemble(None)[0]
    expected = first.accelerations(0.3, q, np.array([0.7]))
    engines.clear_engines()
    monkeypatch.setattr(engines, "_trace", lambda *a, **k: pytest.fail("traced although cached"))
    again = engines.engine(model)
    assert again is not first and again.native and again.mech.partition == first.mech.partition
    assert np.array_equal(again.accelerations(0.3, q, np.array([0.7])), expected)


SEALER = """
import sys
from pathlib import Path
from mbstudio.numerics import native_cache
folder, writer = Path(sys.argv[1]), sys.argv[2]
for k in range(40):
    native_cache.write_sealed(folder / f"{writer}_{k}.json", f"{writer} {k}".encode())
"""


def test_processes_filing_at_once_lose_no_digest(cache):
    """The index is one file that every build rewrites: under its lock, four processes filing 40 files each at
    once leave 160 entries, each the digest of its file."""
    folder = native_cache.cache_folder()
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(__file__))}
    writers = [subprocess.Popen([sys.executable, "-c", SEALER, str(folder), f"w{n}"], env=env) for n in range(4)]
    assert [w.wait() for w in writers] == [0] * 4
    digests = native_cache._digests(folder)
    assert len(digests) == 160
    assert all(native_cache.read_sealed(folder / name) == " ".join(name[:-5].split("_")).encode() for name in digests)


def test_a_manifest_filed_while_another_process_looks_is_kept(cache, monkeypatch):
    """The window's sliders look for the engine while its job files it. Looking found no manifest, the job then
    filed it, and the look removed it as untrustworthy: the library stayed unreachable and the sliders started a
    second build (seen once in CI, under load, at the lowest library versions)."""
    from mbstudio.numerics import compiled

    folder = native_cache.cache_folder()
    manifest = folder / "race.json"
    looked = native_cache.read_sealed

    def filed_meanwhile(path):
        found = looked(path)  # nothing there yet ...
        native_cache.write_sealed(manifest, b'{"functions": ["f"], "module": null, "metadata": {}}')  # ... now there is
        return found

    monkeypatch.setattr(compiled, "read_sealed", filed_meanwhile)
    monkeypatch.setattr(compiled, "_filed", lambda folder, key, stem: (folder / "race.so", manifest))
    assert compiled.filed_functions("key", "race") is None
    assert native_cache.read_sealed(manifest) is not None
