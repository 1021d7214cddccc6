"""What depgraph keeps between runs, in the user's cache folder.

- :func:`cache_root`: ``$DEPGRAPH_CACHE``, else ``$XDG_CACHE_HOME/depgraph``, else
  ``~/.cache/depgraph``; its folders are made readable by their owner only, since numba's
  cache entries are pickles, which run code when loaded.
- :func:`read_json` / :func:`write_json`: small measured facts (the GPU cost model's
  calibration, the strips' cell orders); a missing, damaged or unreadable file reads as
  none, and a file that cannot be written is skipped.  :func:`measured_file` names the
  file of a measurement per device or machine, :func:`code_digest` the code that made it.
- :func:`compiled` and :func:`cached`: numba dispatchers whose disk cache lives under the
  cache root, not in the installed package's ``__pycache__``, and whose entries that
  cannot be loaded (damaged, from another numba) are a miss, compiled again, not an
  error; :func:`module_file` keeps a generated kernel's source as a file there, so numba
  can cache what it compiled from it across processes.

Assumptions: the cache is a convenience: anything in it may be missing or damaged, and
depgraph then measures or compiles again.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["cache_root", "folder", "read_json", "write_json", "compiled", "cached",
           "module_file", "measured_file", "code_digest"]


def cache_root() -> Path:
    """The folder depgraph keeps its caches in (not created here).

    Examples
    --------
    >>> cache_root().is_absolute() or "DEPGRAPH_CACHE" in os.environ
    True
    """
    return Path(os.environ.get("DEPGRAPH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "depgraph"))


def folder(name: str) -> Path:
    """The cache root's folder ``name``, made (owner only) if missing; ``OSError`` when
    it cannot be."""
    root = cache_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / name
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def read_json(path: Path) -> Any:
    """The JSON value in ``path``; ``None`` when it is missing, damaged or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def measured_file(kind: str, name: str) -> Path:
    """The cache root's JSON file of a measurement of ``kind`` on ``name`` (a device or a
    machine), ``name`` made a file name.

    Examples
    --------
    >>> measured_file("calibration", "NVIDIA H100 80GB HBM3").name
    'calibration-nvidia-h100-80gb-hbm3.json'
    """
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
    return cache_root() / f"{kind}-{slug}.json"


@functools.cache
def code_digest(modules: tuple[ModuleType, ...]) -> str:
    """A digest of the source of ``modules`` (what a measurement timed), so a measurement
    kept before any of them changed is made again; once per process.

    Examples
    --------
    >>> code_digest((json,)) == code_digest((json,)) != code_digest((json, os))
    True
    """
    text = "".join(inspect.getsource(m) for m in modules)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole: a temporary file renamed over it, so a reader
    never sees half of one, and none is left behind when writing fails (``OSError``)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` whole (:func:`_write_whole`); nothing happens where the
    cache cannot be written (a read-only home, a full disk: what was measured stays in
    memory)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_whole(path, json.dumps(value, indent=1, sort_keys=True))
    except OSError:
        pass


def compiled(func: Callable[..., Any], **options: Any) -> Any:
    """``numba.njit(cache=True, nogil=True, **options)(func)`` (nogil: the CLI's main thread
    takes an interrupt while it runs) with its cache in the cache root's ``numba`` folder
    (no cache at all where that cannot be made), loading an entry that fails as a miss."""
    from numba import njit  # numba: when the first compiled helper is needed

    return cached(lambda cache: njit(cache=cache, nogil=True, **options)(func))


def cached(make: Callable[[bool], Any], refresh: bool = True) -> Any:
    """The numba dispatcher ``make(cache)`` returns, made with its disk cache (``cache``
    true) in the cache root's ``numba`` folder, where that folder can be made (else
    ``make(False)``); an entry that cannot be loaded (damaged, truncated, from another
    numba) is a miss, compiled again, and one that cannot be saved is skipped.

    Without ``refresh``, an entry is loaded without numba's refresh of the target context
    first.  That refresh installs every lowering registry of the target (half a second
    once per process) and a compile does it itself; a CUDA kernel rebuilt from its cubin
    needs none of them, nor does a CPU kernel compiled without numba's reference counting
    (whose functions the refresh installs), so their dispatchers pass ``False``."""
    from numba import config  # numba: when the first compiled function is needed

    try:
        where = folder("numba")
    except OSError:
        return make(False)
    before = config.CACHE_DIR
    config.CACHE_DIR = str(where)  # read when the dispatcher picks its cache's place
    try:
        dispatcher = make(True)
    finally:
        config.CACHE_DIR = before
    cache = dispatcher._cache  # numba's disk cache of this function
    load, save = cache.load_overload, cache.save_overload

    def load_or_miss(sig: Any, target_context: Any) -> Any:
        try:
            if not refresh:
                return cache._load_overload(sig, target_context)
            return load(sig, target_context)
        except Exception:  # damaged, truncated, or written by another numba
            try:
                cache.flush()  # a fresh, empty index over the damaged one
            except OSError:
                pass
            return None

    def save_or_skip(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except Exception:  # what cannot be kept is compiled again next time
            pass

    cache.load_overload, cache.save_overload = load_or_miss, save_or_skip
    return dispatcher


def module_file(name: str, source: str, namespace: dict[str, Any]) -> Any | None:
    """The module of generated ``source``, kept as ``kernels/<name>.py`` in the cache root
    (written once, never rewritten: numba's disk cache knows a file by its time stamp) and
    run with ``namespace`` as its globals; ``None`` where the folder cannot be written."""
    import importlib.util

    try:
        path = folder("kernels") / f"{name}.py"
        if not path.exists():
            _write_whole(path, source)
    except OSError:
        return None
    spec = importlib.util.spec_from_file_location(f"depgraph_kernel_{name}", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace)
    sys.modules[spec.name] = module  # numba finds a cached function's module by its name
    spec.loader.exec_module(module)
    return module
