"""Build the engine's kernel cache ahead of use: the units a model needs (or all of them),
compiled in parallel processes (`numjoco compile`, app/warmup.py).

Units are compiled independently (engine/_jit.py), so N processes each take a share. A helper
two units share may be compiled in both processes; both write the same content-keyed file
(atomically), so there is no index to race on. Afterwards the calling process links the units
(loads them from the cache); `numjoco compile` then steps the model once, which compiles the
few helpers Python calls directly.
"""
import multiprocessing
import os
import pathlib
import sys
import time


def _worker_init(env):
  os.environ.update(env)


# The task that compiles the Model/Data constructors (engine/_structs.py's setters, ~12 s cold)
STRUCTS = "Model and Data constructors"


def _compile_structs():
  """Build a Model and Data of an empty model: that compiles every setter (their argument
  types are the field types, the same for every model)."""
  from numjoco.engine import io, preview
  m = io.Model.from_compiled(preview.Compiled("<mujoco/>"))
  m.unlinked_struct()
  io.Data(m)


def _structs_cached():
  from numjoco.engine import _structs
  return all(os.path.exists(f._cache._path((), f.targetctx.codegen()))
             for f in (_structs.new_model, _structs.new_data))


def _compile_unit(symbol):
  """Worker: compile one unit (or the STRUCTS task) into the cache; returns (symbol,
  seconds, cache hit)."""
  t0 = time.perf_counter()
  if symbol == STRUCTS:
    _compile_structs()
    return symbol, time.perf_counter() - t0, False
  import numjoco.engine.api  # noqa: F401  (defines every unit)
  from numjoco.engine import _jit
  u = _jit.units()[symbol]
  hits = u.disp._cache.hits
  u.disp.compile(u.sig)
  return symbol, time.perf_counter() - t0, u.disp._cache.hits > hits


def needed_units(model=None):
  """Symbols of the units `model` (a Python-side Model; None: every unit) needs."""
  import numjoco.engine.api  # noqa: F401
  from numjoco.engine import _jit
  return [s for s, u in _jit.units().items()
          if model is None or u.needs is None or u.needs(model)]


def missing_units(m):
  """Symbols of the units model `m` needs with its current options that are neither linked
  nor in the cache."""
  from numjoco.engine import _jit
  units = _jit.units()
  return [s for s in needed_units(m) if not units[s].is_cached()]


def compile_units(symbols, jobs=None, out=sys.stdout):
  """Compile the units `symbols` into the cache, and the Model/Data constructors if they are
  not cached, with `jobs` processes (this one when jobs is 1). Returns the number of tasks."""
  jobs = jobs or os.cpu_count() or 1
  todo = _by_cost(list(symbols))
  if todo and not _structs_cached():
    todo.insert(0, STRUCTS)   # its ~12 s would otherwise follow the build in this process
  t0 = time.perf_counter()
  env = {k: v for k, v in os.environ.items() if k.startswith(("NUMJOCO_", "NUMBA_"))}
  if jobs > 1 and len(todo) > 1:
    ctx = multiprocessing.get_context("spawn")   # the parent has LLVM loaded: never fork it
    # a fresh worker every few units bounds each process's memory (compiled modules pile up)
    with ctx.Pool(jobs, initializer=_worker_init, initargs=(env,), maxtasksperchild=4) as pool:
      results = pool.imap_unordered(_compile_unit, todo)
      hits = sum(_report(out, done, len(todo), *r) for done, r in enumerate(results, 1))
  else:
    hits = sum(_report(out, done, len(todo), *_compile_unit(symbol))
               for done, symbol in enumerate(todo, 1))
  if todo:
    print(f"{len(todo) - hits} compiled in {time.perf_counter() - t0:.1f} s", file=out,
          flush=True)
  return len(todo)


def compile_missing(m, jobs=None, out=sys.stderr):
  """Compile the units model `m` needs that are not cached, in parallel processes; as
  `numjoco.load_model(path, prepare=compile_missing)` it runs before the model's first kernel,
  which would otherwise compile them one after another in this process."""
  return compile_units(missing_units(m), jobs, out)


def build(model_path=None, jobs=None, out=sys.stdout):
  """Compile the units the model at `model_path` needs (None: all units) that are not cached
  yet (`compile_units`), then link them here. Returns the number of tasks compiled."""
  from numjoco.engine import _jit, io, preview
  m = io.Model.from_compiled(preview.Compiled(model_path)) if model_path else None
  symbols = needed_units(m)
  units = _jit.units()
  n = compile_units([s for s in symbols if not units[s].is_cached()], jobs, out)
  for symbol in symbols:
    units[symbol].link()
  return n


def _report(out, done, total, symbol, dt, hit):
  """One progress line: `[done/total] unit seconds` (app/warmup.py's progress reads it);
  returns the cache hit flag."""
  print(f"[{done}/{total}] {symbol} {'cached' if hit else f'{dt:.1f} s'}", file=out, flush=True)
  return hit


def _by_cost(symbols):
  """Big units first, so the last ones to finish are short: ordered by the bytecode size of
  everything a unit compiles (its own code and its helpers', engine/_jit.py's closure)."""
  from numjoco.engine import _jit
  units = _jit.units()
  return sorted(symbols, key=lambda s: -_jit.closure_size(units[s].disp.py_func))


def cache_size():
  """(files, bytes) of the kernel cache."""
  from numjoco.engine import _jit
  root = pathlib.Path(_jit.cache_root())
  files = list(root.glob("*.nbk")) if root.is_dir() else []
  return len(files), sum(f.stat().st_size for f in files)


def remove_legacy():
  """Delete the whole-engine caches older versions left beside `kernels/` (numba-<hash>/, one
  per engine source, several GB each); returns the bytes freed."""
  import shutil
  from numjoco.engine import _cache
  root = pathlib.Path(_cache.cache_dir()).parent
  freed = 0
  for d in root.glob("numba-*"):
    if d.is_dir():
      freed += sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
      shutil.rmtree(d, ignore_errors=True)
  return freed


def main(argv=None):
  """`python -m numjoco.engine.build [--jobs N] SYMBOL...`: compile these units into the cache, with
  progress lines on stdout (the viewer's worker runs it for the units a newly loaded model or
  an option edit needs: compiled in the worker's own thread they would hold the GIL for
  seconds and stall the window)."""
  import argparse
  p = argparse.ArgumentParser(prog="python -m numjoco.engine.build")
  p.add_argument("symbols", nargs="+", help="units, as engine/_jit.py names them")
  p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
  args = p.parse_args(argv)
  import numjoco.engine.api  # noqa: F401  (defines every unit)
  from numjoco.engine import _jit
  unknown = set(args.symbols) - set(_jit.units())
  if unknown:
    p.error(f"no such unit: {', '.join(sorted(unknown))}")
  compile_units(args.symbols, args.jobs)
  return 0


if __name__ == "__main__":
  sys.exit(main())
