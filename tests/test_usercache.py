"""The user's cache folder (:mod:`depgraph.usercache`): owner-only folders, JSON that reads
as none when damaged, numba's disk cache kept there and a damaged entry compiled again."""

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from depgraph import usercache


@pytest.fixture
def root(monkeypatch, tmp_path):
    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _twice(x):  # pragma: no cover - compiled
    return x * 2


def test_folders_are_the_owners_only(root):
    path = usercache.folder("numba")
    assert path == root / "numba"
    for p in (root, path):
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0


def test_json_reads_as_none_when_missing_or_damaged(root):
    path = root / "facts.json"
    assert usercache.read_json(path) is None
    usercache.write_json(path, {"a": 1})
    assert usercache.read_json(path) == {"a": 1}
    path.write_text('{"a": ')
    assert usercache.read_json(path) is None
    assert [p.name for p in root.iterdir()] == ["facts.json"]  # no temporary file left


def test_json_is_not_written_where_the_cache_cannot_be(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    usercache.write_json(blocker / "sub" / "facts.json", {"a": 1})  # a file in the way
    assert blocker.read_text() == ""


def test_compiled_helpers_are_cached_in_the_cache_root_and_survive_damage(root):
    f = usercache.compiled(_twice)
    assert f(np.int64(21)) == 42
    kept = sorted(p for p in (root / "numba").rglob("*") if p.is_file())
    assert {p.suffix for p in kept} == {".nbi", ".nbc"}
    assert not list(Path(__file__).parent.glob("__pycache__/*_twice*.nbi"))
    for p in kept:
        p.write_bytes(b"damaged")
    g = usercache.compiled(_twice)  # a new dispatcher: it loads from disk
    assert g(np.int64(4)) == 8
    assert all(p.stat().st_size > len(b"damaged") for p in kept)  # written again, whole


def test_no_cache_where_the_cache_root_cannot_be_made(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("DEPGRAPH_CACHE", str(blocker / "cache"))
    assert usercache.compiled(_twice)(np.int64(5)) == 10
    assert blocker.read_text() == "" and not os.path.exists(blocker / "cache")


def test_an_entry_loads_without_refreshing_the_target_when_asked(root, monkeypatch):
    from numba import njit

    assert usercache.compiled(_twice)(np.int64(3)) == 6  # compiled, kept on disk
    g = usercache.cached(lambda cache: njit(cache=cache, nogil=True)(_twice), refresh=False)

    def refreshed():
        raise AssertionError("the target context was refreshed")

    monkeypatch.setattr(g.targetctx, "refresh", refreshed)
    assert g(np.int64(4)) == 8
    assert sum(g.stats.cache_hits.values()) == 1 and not g.stats.cache_misses
