"""Numba cache directory keyed by a hash of every engine source file that compiled code can see.

Numba does not track dependencies across files: a cached caller keeps a stale inlined callee
(measured, ../shared/DESIGN.md section 4). Keying the whole cache on all sources makes any
engine edit a clean rebuild instead of a silent stale result.

`engine/mjcf/` is left out: it is the model compiler, plain Python that no kernel imports (it
only produces the arrays a Model is built from), so an edit there cannot make a cached kernel
stale. `test_cache_key_ignores_mjcf` keeps that true.
"""
import hashlib
import os
import pathlib
import sys


def cache_dir(numba_version=None):
  """Directory for this exact engine source + numba + python version. Numba is imported only
  when its version is not given: app/warmup.py loads this file by path and asks without
  importing numba or the engine."""
  if numba_version is None:
    import numba
    numba_version = numba.__version__
  h = hashlib.sha256()
  here = pathlib.Path(__file__).parent
  for p in sorted(here.rglob("*.py")):
    if p.parent.name == "mjcf":
      continue
    h.update(p.relative_to(here).as_posix().encode())
    h.update(p.read_bytes())
  h.update(numba_version.encode())
  h.update(sys.version.encode())
  h.update(os.environ.get("NUMBA_BOUNDSCHECK", "").encode())
  root = os.environ.get("NUMJOCO_CACHE_DIR") or os.path.join(
      os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "numjoco")
  return os.path.join(root, "numba-" + h.hexdigest()[:16])


def configure():
  """Point numba's cache at `cache_dir()` (must run before any engine kernel is defined)."""
  import numba
  if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = cache_dir(numba.__version__)
