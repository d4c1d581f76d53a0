"""Where the engine's kernel cache lives, and whether it is warm, without importing numba.

Kernels are cached one file per function under a key of their own content (engine/_jit.py).
This module answers the viewer's first question, "can the engine start without compiling?",
from a marker a finished build leaves (`warm-<what>-<stamp>`): the stamp hashes the engine's kernel
sources, numba's and Python's versions and the flags. `engine/mjcf/` (the model compiler) and
`engine/rotation.py` (its quaternions and frames) are left out: plain Python that no kernel
reaches (`test_cache_key` keeps that true).
"""
import hashlib
import os
import pathlib
import sys

PLAIN_MODULES = ("rotation.py",)   # engine modules outside mjcf/ left out of the stamp


def cache_dir():
  """The kernel cache: $NUMJOCO_CACHE_DIR/kernels, else $XDG_CACHE_HOME/numjoco/kernels, else
  ~/.cache/numjoco/kernels."""
  root = os.environ.get("NUMJOCO_CACHE_DIR") or os.path.join(
      os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "numjoco")
  return os.path.join(root, "kernels")


def stamp(numba_version=None):
  """Hash of what the compiled kernels are made of (the numba version is looked up without
  importing numba when not given)."""
  if numba_version is None:
    import importlib.metadata
    numba_version = importlib.metadata.version("numba")
  h = hashlib.sha256()
  here = pathlib.Path(__file__).parent
  for p in sorted(here.rglob("*.py")):
    if p.parent.name == "mjcf" or p.relative_to(here).as_posix() in PLAIN_MODULES:
      continue
    h.update(p.relative_to(here).as_posix().encode())
    h.update(p.read_bytes())
  for part in (numba_version, sys.version, os.environ.get("NUMBA_BOUNDSCHECK", ""),
               os.environ.get("NUMBA_CPU_NAME", ""), os.environ.get("NUMBA_CPU_FEATURES", "")):
    h.update(part.encode() + b"\0")
  return h.hexdigest()[:16]


def _marker(what, numba_version=None):
  return os.path.join(cache_dir(), f"warm-{what}-{stamp(numba_version)}")


def is_warm(what="demo", numba_version=None):
  """True when a build of exactly these sources finished into the cache: "demo" (the units of
  one model and the entry points the viewer uses, app/warmup.py; the viewer then starts
  without that build, and other models' units compile when they load) or "units" (every
  unit)."""
  return os.path.exists(_marker(what, numba_version))


def mark_warm(what="demo", numba_version=None):
  """Record that a build of these sources finished (removes markers of other sources)."""
  path = _marker(what, numba_version)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  for p in pathlib.Path(cache_dir()).glob(f"warm-{what}-*"):
    p.unlink(missing_ok=True)
  pathlib.Path(path).touch()
