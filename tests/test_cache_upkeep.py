"""The engine cache is kept within bounds (numerics/cache_upkeep.py): what it holds, what a trim, an age or a
clear removes, the marks of use, the limit after each build, and `mbstudio cache`. Each test has a cache folder of
its own (MBSTUDIO_CACHE)."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from mbstudio.cli import main
from mbstudio.numerics import cache_upkeep, native_cache
from mbstudio.numerics.cache_upkeep import RECENT, TRIMMED, prune, usage

DAY = 86400.0


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MBSTUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MBSTUDIO_CACHE_LIMIT", raising=False)
    return tmp_path / "cache" / "engines"


def _filed(name: str, size: int, age_days: float, folder: str = "") -> None:
    """A file written by the cache's own sealed write (its digest in the index), last used `age_days` ago."""
    path = native_cache.cache_folder(*([folder] if folder else [])) / name
    native_cache.write_sealed(path, bytes(size))
    when = time.time() - age_days * DAY
    os.utime(path, (when, when))


def _index(folder) -> dict:
    return json.loads((folder / native_cache.INDEX).read_text())["sha256"]


@pytest.fixture
def filled(cache):
    """Three engines (a library and its manifest each) of 100, 40 and 10 days ago, a start in its subfolder of 20
    days ago, and a library built a minute ago."""
    for stem, age in (("engine_a", 100), ("engine_b", 40), ("series_c", 10)):
        _filed(f"{stem}.so", 1000, age)
        _filed(f"{stem}.json", 100, age)
    _filed("start_d.pickle", 500, 20, folder="starts")
    _filed("engine_e.so", 2000, 60 / DAY)
    return cache


def test_usage_counts_entries_files_and_bytes_and_the_oldest_use(filled):
    held = usage()
    assert (held.entries, held.files, held.size) == (5, 8, 5800)
    assert held.oldest == pytest.approx(time.time() - 100 * DAY, abs=60)
    assert held.limit == cache_upkeep.DEFAULT_LIMIT
    assert "5 entries (8 files), 5.7 KB of 2.0 GB" in held.text() and "100 days ago" in held.text()


def test_entries_unused_for_some_days_go_with_their_index_entries(filled):
    pruned = prune(unused_days=30)
    assert (pruned.entries, pruned.files, pruned.size) == (2, 4, 2200)
    names = sorted(p.name for p in filled.iterdir() if p.is_file())
    assert names == ["digests.json", "digests.lock", "engine_e.so", "series_c.json", "series_c.so"]
    assert sorted(_index(filled)) == ["engine_e.so", "series_c.json", "series_c.so"]
    assert (filled / "starts" / "start_d.pickle").exists() and list(_index(filled / "starts")) == ["start_d.pickle"]


def test_a_trim_removes_the_entries_unused_longest_down_to_its_share_of_the_limit(filled):
    """5800 bytes held; a limit of 4000 leaves at most 3200: the two oldest engines go (2200 bytes), then the
    start (500): 3100 left. The library built a minute ago stays however small the limit."""
    pruned = prune(limit=4000)
    assert (pruned.entries, pruned.size, pruned.recent) == (3, 2700, 0)
    assert usage().size == 3100 <= TRIMMED * 4000
    assert not (filled / "starts" / "start_d.pickle").exists() and (filled / "series_c.so").exists()
    assert prune(limit=4000).entries == 0  # within the limit: nothing more
    tiny = prune(limit=10)
    assert (tiny.entries, tiny.recent) == (1, 1) and [e.names for e in cache_upkeep.entries()] == [("engine_e.so",)]
    assert "kept 1 used within the hour" in tiny.text()


def test_clearing_removes_everything_but_a_file_being_written(filled):
    writing = filled / ".engine_f.so.4242.tmp"
    writing.write_bytes(b"half a library")
    left = filled / ".engine_g.so.4243.tmp"  # a killed build's, two hours old
    left.write_bytes(b"half")
    os.utime(left, (time.time() - 2 * RECENT, time.time() - 2 * RECENT))
    pruned = prune(everything=True)
    assert pruned.entries == 6 and usage().entries == 1 and writing.exists() and not left.exists()
    assert _index(filled) == {} and _index(filled / "starts") == {}


def test_a_load_marks_its_use_at_most_once_a_day(cache):
    _filed("engine_h.json", 10, 3)
    path = cache / "engine_h.json"
    assert native_cache.read_sealed(path) == bytes(10)
    assert time.time() - path.stat().st_mtime < 60  # used now
    marked = time.time() - 0.5 * DAY
    os.utime(path, (marked, marked))
    native_cache.read_sealed(path)
    assert path.stat().st_mtime == pytest.approx(marked, abs=1e-3)  # marked half a day ago: left as it is


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_a_build_trims_a_cache_beyond_its_limit(filled, monkeypatch):
    from mbstudio.numerics.compiled import is_external, native
    from tests.test_native_cache import _function

    monkeypatch.setenv("MBSTUDIO_CACHE_LIMIT", "6K")  # the new library alone takes the cache beyond it
    assert is_external(native(_function("trimmed")))
    left = cache_upkeep.entries()
    assert all(time.time() - e.used < RECENT for e in left)  # the four old entries went, the recent ones stayed
    assert {"engine_e.so"} < {n for e in left for n in e.names} and len(left) >= 2


def test_mbstudio_cache_says_what_it_holds_and_removes_on_request(filled, capsys):
    assert main(["cache"]) == 0
    assert "5 entries (8 files)" in capsys.readouterr().out
    assert main(["cache", "--unused-days", "30", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["removed"] == {"entries": 2, "files": 4, "bytes": 2200} and said["entries"] == 3
    assert main(["cache", "--trim", "3K"]) == 0
    assert capsys.readouterr().out.startswith("removed 2 entries (3 files, 1.6 KB)")
    assert main(["cache", "--clear"]) == 0
    assert "empty" in capsys.readouterr().out and usage().entries == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--trim", "lots"], "--trim: 'lots' is not a size; expected a positive number of bytes"),
        (["--trim", "0"], "--trim: '0' is not a size"),
        (["--unused-days", "-1"], "--unused-days: -1 is not a number of days; expected 0 or more"),
        (["--unused-days", "nan"], "--unused-days: nan is not a number of days"),
    ],
)
def test_mbstudio_cache_refuses_what_is_not_a_size_or_an_age(filled, capsys, argv, message):
    assert main(["cache", *argv]) == 2
    assert message in capsys.readouterr().err and usage().entries == 5


def test_a_limit_that_is_not_a_size_is_named_and_the_build_goes_on(filled, monkeypatch, capsys):
    monkeypatch.setenv("MBSTUDIO_CACHE_LIMIT", "two gigs")
    assert main(["cache"]) == 2
    assert "MBSTUDIO_CACHE_LIMIT: 'two gigs' is not a size" in capsys.readouterr().err
    cache_upkeep.keep_within_limit()  # after a build: never an error, nothing removed
    monkeypatch.delenv("MBSTUDIO_CACHE_LIMIT")
    assert usage().entries == 5


def test_nothing_is_removed_from_a_cache_others_may_write_to(filled, capsys):
    os.chmod(filled, 0o777)
    try:
        assert main(["cache", "--clear"]) == 2
        assert "is writable by others" in capsys.readouterr().err
        cache_upkeep.keep_within_limit()  # after a build: left as it is, no error
    finally:
        os.chmod(filled, 0o700)
    assert usage().entries == 5
