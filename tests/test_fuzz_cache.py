"""Fuzzing what the fourth hardening round attacked by hand: the engine cache's files changed in any order and any
way (manifests, index, libraries, modes, links), and saves of several files killed at any step.

- Cache: a pristine cache with two libraries is attacked by a random sequence of changes; then the engine filed
  under the first key is looked up. Nothing may raise, and a library reaches the loader only under the cache's own
  name for the key, as a regular file no one else may write, whose bytes have the digest the index holds (the
  pristine bytes, when the attack did not rewrite the index: whoever can write the index is the cache's owner).
- Exports: a model whose description holds any text (lone surrogates, control characters, "-->") exports to
  URDF and MJCF as well-formed UTF-8 XML.
- Saves: a child process saving 2 to 4 files (in one or two folders) is SIGKILLed before its k-th rename or flush.
  The files left are the previous save's, or that save is committed (its journal is there); after the repair a
  reader makes, they are all from one save.

MBSTUDIO_FUZZ_EXAMPLES sets the number of examples, as in tests/test_fuzz.py (a fifth of it for the killed saves)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mbstudio.cli import main
from mbstudio.model import files
from mbstudio.numerics import compiled, native_cache

FUZZ = settings(
    max_examples=int(os.environ.get("MBSTUDIO_FUZZ_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# each killed save forks a process and flushes its files to disk (about 0.2 s): a fifth as many examples
KILLED_FUZZ = settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 5))
ROOT = Path(__file__).resolve().parents[1]
KEY, OTHER = "a" * 64, "b" * 64

# ------------------------------------------------------------------------------------------------ the cache
BUILD = """
import casadi
from mbstudio.numerics.compiled import cached_functions
for key, factor in ((%r, 1.0), (%r, 2.0)):
    x = casadi.SX.sym("x")
    f = casadi.Function("scaled", [x], [factor * casadi.sin(x)])
    cached_functions(key, "engine", lambda: ([f], {"partition": [[0], [1]], "factor": factor}))
"""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A cache with two compiled libraries and their manifests, built by another process (none of them is loaded
    here)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    cache = tmp_path_factory.mktemp("pristine") / "cache"
    env = {**os.environ, "MBSTUDIO_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", BUILD % (KEY, OTHER)], env=env, check=True, cwd=ROOT)
    return cache / "engines"


# any character, lone surrogates (halves of UTF-16 pairs, which UTF-8 cannot hold) included
TEXT = st.characters(min_codepoint=0) | st.integers(0xD800, 0xDFFF).map(chr)
FILES = ["library", "manifest", "other library", "other manifest", "index", "lock"]
MODES = st.sampled_from([0o600, 0o644, 0o666, 0o700, 0o707, 0o620, 0o000, 0o400])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
ATTACKS = st.one_of(
    st.tuples(st.just("chmod"), st.sampled_from(FILES), MODES),
    st.tuples(st.just("bytes"), st.sampled_from(FILES), st.binary(max_size=64)),
    st.tuples(st.just("truncate"), st.sampled_from(FILES), st.integers(0, 4000)),
    st.tuples(st.just("copy other"), st.sampled_from(["library", "manifest"]), st.none()),
    st.tuples(st.just("link"), st.sampled_from(FILES), st.booleans()),  # to a copy outside, or to the other file
    st.tuples(st.just("delete"), st.sampled_from(FILES), st.none()),
    st.tuples(
        st.just("manifest"),
        st.fixed_dictionaries(
            {},
            optional={
                "library": st.sampled_from(["OUTSIDE", "../../evil.so", "engine_" + "b" * 32 + ".so"]),
                "functions": st.lists(st.text(max_size=8), max_size=3) | JSON,
                "module": st.text(max_size=30) | st.none() | JSON,
                "metadata": JSON,
            },
        ),
        st.booleans(),  # the index rewritten to vouch for the edited manifest
    ),
    st.tuples(
        st.just("index"),
        st.dictionaries(st.sampled_from(FILES), st.sampled_from(["pristine", "other", "garbage"]), max_size=4),
        st.none(),
    ),
    st.tuples(st.just("digest beside"), st.sampled_from(["library", "other library"]), st.none()),
)


def _paths(engines: Path) -> dict[str, Path]:
    library, manifest = compiled._filed(engines, KEY, "engine")
    other_library, other_manifest = compiled._filed(engines, OTHER, "engine")
    return {
        "library": library,
        "manifest": manifest,
        "other library": other_library,
        "other manifest": other_manifest,
        "index": engines / native_cache.INDEX,
        "lock": engines / "digests.lock",
    }


def _attack(engines: Path, outside: Path, attack: tuple) -> bool:
    """Applies one change; True when it rewrote the index (with digests of files the attacker chose)."""
    kind, name, detail = attack
    paths = _paths(engines)
    path = paths.get(name) if isinstance(name, str) else None
    if kind == "chmod" and os.path.lexists(path) and not path.is_symlink():
        path.chmod(detail)
    elif kind == "bytes":
        _replace(path, detail)
    elif kind == "truncate" and path.is_file():
        _replace(path, path.read_bytes()[:detail])
    elif kind == "copy other" and paths[f"other {name}"].is_file():
        _replace(path, paths[f"other {name}"].read_bytes())
    elif kind == "link" and path.is_file():
        destination = paths["other library"] if detail else outside / f"copy{len(os.listdir(outside))}-{path.name}"
        if not detail:
            shutil.copyfile(path, destination)
        path.unlink()
        path.symlink_to(destination)
    elif kind == "delete" and os.path.lexists(path):
        path.unlink()
    elif kind == "manifest":
        return _edit_manifest(paths, outside, name, detail)
    elif kind == "index":
        digests = {
            paths[f].name: {"pristine": _digest(paths[f]), "other": _digest(paths["other library"])}.get(v, "0" * 64)
            for f, v in name.items()
        }
        _replace(paths["index"], json.dumps({"sha256": digests}).encode())
        return True
    elif kind == "digest beside" and path.is_file():
        path.with_name(path.name + ".sha256").write_text(_digest(path))
    return False


def _edit_manifest(paths: dict[str, Path], outside: Path, changes: dict, reseal: bool) -> bool:
    manifest = paths["manifest"]
    try:
        entry = json.loads(manifest.read_bytes())
    except (OSError, ValueError):
        entry = {}
    if not isinstance(entry, dict):
        entry = {}
    if changes.get("library") == "OUTSIDE" and paths["other library"].is_file():
        evil = outside / "evil.so"
        shutil.copyfile(paths["other library"], evil)
        evil.with_name("evil.so.sha256").write_text(_digest(evil))
        changes = {**changes, "library": str(evil)}
    _replace(manifest, json.dumps({**entry, **changes}).encode())
    if reseal:
        native_cache._record(manifest, _digest(manifest))
    return reseal


def _replace(path: Path, data: bytes) -> None:
    """The file's bytes changed in place (its mode kept), or a new private file."""
    if path.is_symlink():
        path.unlink()
    if path.exists():
        path.write_bytes(data)
    else:
        native_cache.write_private(path, data)


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "0" * 64


@FUZZ
@given(attacks=st.lists(ATTACKS, min_size=1, max_size=4))
@example(attacks=[("bytes", "index", b"0")])  # JSON that is not an object: a TypeError escaped the index reader
@example(attacks=[("bytes", "index", b"[]")])
@example(attacks=[("bytes", "index", b"{}")])
def test_an_attacked_cache_loads_only_its_own_library_with_the_digest_it_wrote(pristine, tmp_path_factory, attacks):
    work = tmp_path_factory.mktemp("attacked")
    engines, outside = work / "cache" / "engines", work / "outside"
    outside.mkdir()
    shutil.copytree(pristine.parent, engines.parent)
    library = _paths(engines)["library"]
    original = _digest(library)
    index_rewritten = False
    for attack in attacks:
        index_rewritten |= _attack(engines, outside, attack)
    reached = []

    def loader(path: Path, *names):  # what would be handed to dlopen, with its state at that moment
        info = os.lstat(path)
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        reached.append((Path(path), stat.S_ISREG(info.st_mode) and not writable, _digest(Path(path))))
        raise RuntimeError("not loaded in the fuzz")

    with (
        mock.patch.dict(os.environ, {"MBSTUDIO_CACHE": str(engines.parent)}),
        mock.patch.object(compiled, "_external", lambda name, path: loader(path)),
        mock.patch.object(compiled, "load_extension", loader),
    ):
        assert compiled.filed_functions(KEY, "engine") is None  # the loader above refuses everything
    for path, trusted, digest in reached:
        assert path == library and trusted
        assert digest == native_cache._digests(engines).get(path.name, digest) or not path.exists()
        if not index_rewritten:
            assert digest == original
    shutil.rmtree(work)


# ------------------------------------------------------------------------------------ saves killed at any step
@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked child")
@KILLED_FUZZ
@given(
    names=st.lists(
        st.sampled_from(["run.csv", "run.csv.json", "a.txt", "sub/run.csv", "sub/b.json"]),
        min_size=2,
        max_size=4,
        unique=True,
    ),
    filler=st.text(TEXT, max_size=200),
    previous=st.booleans(),
    kill_at=st.integers(1, 12),
)
def test_a_save_killed_at_any_step_leaves_one_saves_files(tmp_path_factory, names, filler, previous, kill_at):
    folder = tmp_path_factory.mktemp("saves")
    (folder / "sub").mkdir()
    targets = [folder / name for name in names]
    if previous:
        files.write_all(_save(targets, 1, filler))
    child = os.fork()
    if child == 0:  # the writer: SIGKILLed before its kill_at-th rename or flush (or done, with fewer steps)
        try:
            _killed_at(kill_at, lambda: files.write_all(_save(targets, 2, filler)))
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    killed = os.WIFSIGNALED(status)
    before = 1 if previous else None
    left = _generations(targets)
    assert len(set(left)) == 1 or _committed(folder) and killed
    assert left[0] in (before, 2)
    files.finish_interrupted(targets[-1])
    after = _generations(targets)
    assert len(set(after)) == 1 and after[0] in (before, 2)
    assert after[0] == 2 or killed
    files.write_all(_save(targets, 3, filler))  # the next save clears what the killed one left
    assert all(t.read_bytes() == f"3\n{filler}".encode("utf-8", "backslashreplace") for t in targets)
    assert [p.name for p in (*folder.iterdir(), *(folder / "sub").iterdir()) if p.name.startswith(".")] == []
    shutil.rmtree(folder)


def _save(targets: list[Path], generation: int, filler: str) -> dict[Path, str]:
    return {target: f"{generation}\n{filler}" for target in targets}


def _generations(targets: list[Path]) -> list[int | None]:
    return [int(t.read_bytes().split(b"\n", 1)[0]) if t.exists() else None for t in targets]


def _committed(folder: Path) -> bool:
    names = [p.name for p in (*folder.iterdir(), *(folder / "sub").iterdir())]
    return any(files._JOURNAL.fullmatch(name) for name in names)


def _killed_at(step: int, save) -> None:
    """Runs `save` with os.replace and os.fsync counted: the process kills itself before the step-th call."""
    calls = [0]

    def counted(real):
        def call(*args):
            calls[0] += 1
            if calls[0] == step:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args)

        return call

    with mock.patch.object(os, "replace", counted(os.replace)), mock.patch.object(os, "fsync", counted(os.fsync)):
        save()


# ------------------------------------------------------------------------------- text that UTF-8 cannot hold
@FUZZ
@given(description=st.text(TEXT, max_size=40), option=st.sampled_from(["--urdf", "--mjcf"]))
def test_any_description_exports_as_well_formed_utf8(tmp_path_factory, description, option):
    """A description keeps a lone surrogate at load (docs/file-format.md); every writer goes through
    model/files.py, which writes it as its escape."""
    folder = tmp_path_factory.mktemp("export")
    data = json.loads((ROOT / "samples" / "double_pendulum.mbs").read_text(encoding="utf-8"))
    data["description"] = description
    model = folder / "f.mbs"
    model.write_text(json.dumps(data), encoding="ascii")
    assert main(["export", str(model), option, str(folder / "o.xml")]) == 0
    ElementTree.fromstring((folder / "o.xml").read_bytes().decode("utf-8").encode("utf-8"))
    shutil.rmtree(folder)
