"""`python -m numjoco.app.warmup [MODEL]` (`numjoco compile`): build the engine's kernel cache for a
model, the demo by default (engine/build.py).

The viewer runs this in a subprocess on a first start, for the model it opens (compiling inside
the UI process holds the GIL for seconds and stalls the window), and shows the `[i/N] unit`
lines it prints as progress; afterwards the viewer process loads every kernel from the cache in
well under a second. Units that another model or an option edit needs later compile in other
processes when they are first needed (app/sim.py).
"""
import importlib.util
import os
import pathlib
import re
import sys

ENGINE = pathlib.Path(__file__).resolve().parent.parent / "engine"
PORTABLE_CPU = "x86-64-v3"   # AVX2/FMA: every x86 machine of the last ten years


def _cache_module():
  """engine/_cache.py loaded by path: the viewer asks before numba (0.4 s) is imported, and
  without importing the engine package (tests/app/test_startup.py checks both)."""
  spec = importlib.util.spec_from_file_location("_numjoco_cache_key", ENGINE / "_cache.py")
  key = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(key)
  return key


def cache_dir():
  """The engine's kernel cache directory."""
  return _cache_module().cache_dir()


def is_warm():
  """True when a build of this exact engine source finished into the cache."""
  return _cache_module().is_warm()


_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")


def progress(log):
  """(units done, units to build) from the last progress line of a build's output `log`."""
  for line in reversed(log):
    m = _PROGRESS.match(line)
    if m:
      return int(m.group(1)), int(m.group(2))
  return 0, 0


def main(argv=None):
  """Build the units the model needs (default: the demo) in parallel, then step it once."""
  import argparse
  p = argparse.ArgumentParser(prog="numjoco compile",
                              description="compile the engine's kernels into the cache")
  p.add_argument("model", nargs="?", help="MJCF file whose units to build (default: the demo)")
  p.add_argument("--all", action="store_true", help="every unit, whatever the model needs")
  p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
  p.add_argument("--portable", metavar="DIR",
                 help=f"build every unit for a generic CPU ({PORTABLE_CPU}) into DIR; "
                 "NUMJOCO_CACHE_DIR=DIR on another clone or machine then starts warm")
  args = p.parse_args(argv)
  if args.portable:   # before numba is imported: its target machine reads these
    args.all = True
    os.environ["NUMJOCO_CACHE_DIR"] = os.path.abspath(args.portable)
    os.environ["NUMBA_CPU_NAME"] = PORTABLE_CPU
    os.environ["NUMBA_CPU_FEATURES"] = ""
    kernels = pathlib.Path(_cache_module().cache_dir())
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "portable-cpu").write_text(PORTABLE_CPU + "\n")
  import time
  t0 = time.perf_counter()
  from numjoco.engine import build
  from numjoco.engine.mjcf import MjcfError
  from numjoco.assets import DEMO_MODEL
  path = args.model or str(DEMO_MODEL)
  try:
    build.build(None if args.all else path, jobs=args.jobs)
  except (MjcfError, OSError) as e:   # the viewer reports the model's error when it loads it
    print(f"cannot load {path} ({e}); building for the demo model", flush=True)
    path = str(DEMO_MODEL)
    build.build(path, jobs=args.jobs)
  import numjoco
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  print("compiling the entry points", flush=True)
  numjoco.step(m, d, 2)
  numjoco.forward(m, d)
  numjoco.reset_data(m, d)
  if args.all:
    _cache_module().mark_warm("units")
  # with this marker the viewer starts without this process: the units another model needs
  # compile when it loads (app/sim.py, in other processes too)
  _cache_module().mark_warm("demo")
  freed = build.remove_legacy()
  if freed:
    print(f"removed {freed / 1e9:.1f} GB of caches of older engine versions", flush=True)
  files, size = build.cache_size()
  print(f"done in {time.perf_counter() - t0:.0f} s; cache {cache_dir()}: {files} kernels, "
        f"{size / 1e6:.0f} MB", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
