"""`python -m app.warmup`: compile the engine's Numba kernels into the on-disk cache.

The viewer runs this in a subprocess on a first start (compiling inside the UI process stalls
the window: ../shared/DESIGN.md section 4) and shows progress by counting the cache's index
files; afterwards the viewer process loads every kernel from the cache in well under a second.
"""
import os
import pathlib
import sys

ENGINE = pathlib.Path(__file__).resolve().parent.parent / "engine"


def cache_dir():
  """The engine's Numba cache directory, from engine/_cache.py loaded by path, without
  importing the engine package or numba: the viewer asks before opening its window, and
  numba's import (0.4 s) belongs on the boot thread, beside the window's start
  (tests/app/test_startup.py checks that both give the same directory)."""
  if os.environ.get("NUMBA_CACHE_DIR"):
    return os.environ["NUMBA_CACHE_DIR"]
  import importlib.metadata
  import importlib.util
  spec = importlib.util.spec_from_file_location("_numjoco_cache_key", ENGINE / "_cache.py")
  key = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(key)   # the engine's own key, without the engine package or numba
  return key.cache_dir(importlib.metadata.version("numba"))


def _kernel_dir(root):
  """Numba's per-source-directory cache subfolder (numba's _CacheLocator naming)."""
  import hashlib
  sub = str(ENGINE)
  return pathlib.Path(root) / ("engine_" + hashlib.sha1(sub.encode()).hexdigest())


def progress():
  """(kernels cached, kernels expected): index files written so far against the most any other
  cache of this engine holds (a rough total; 0 when none is known)."""
  root = pathlib.Path(cache_dir())
  here = _kernel_dir(root)
  done = len(list(here.glob("*.nbi"))) if here.is_dir() else 0
  expect = 0
  parent = root.parent
  if parent.is_dir():
    for d in parent.glob("numba-*/*"):
      if d.is_dir():
        expect = max(expect, len(list(d.glob("*.nbi"))))
  return done, expect


def is_warm():
  """True when the step kernel of this exact engine source is in the cache."""
  here = _kernel_dir(cache_dir())
  return here.is_dir() and any(here.glob("forward.step-*.nbi"))


def main():
  """Load the demo and a small model with every integrator, and step them (fills the cache)."""
  import engine
  from assets import DEMO_MODEL
  m = engine.load_model(str(DEMO_MODEL))
  d = engine.make_data(m)
  print("compiling step", flush=True)
  engine.step(m, d, 2)
  engine.forward(m, d)
  for integ in range(5):
    print(f"compiling integrator {integ}", flush=True)
    m.opt.integrator = integ
    engine.step(m, d, 1)
  engine.reset_data(m, d)
  print("done", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
