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
  from engine import io, mjcf
  m = mjcf.load_model("<mujoco/>")
  m.unlinked_struct()
  io.Data(m)


def _structs_cached():
  from engine import _structs
  return all(os.path.exists(f._cache._path((), f.targetctx.codegen()))
             for f in (_structs.new_model, _structs.new_data))


def _compile_unit(symbol):
  """Worker: compile one unit (or the STRUCTS task) into the cache; returns (symbol,
  seconds, cache hit)."""
  t0 = time.perf_counter()
  if symbol == STRUCTS:
    _compile_structs()
    return symbol, time.perf_counter() - t0, False
  import engine.api  # noqa: F401  (defines every unit)
  from engine import _jit
  u = _jit.units()[symbol]
  hits = u.disp._cache.hits
  u.disp.compile(u.sig)
  return symbol, time.perf_counter() - t0, u.disp._cache.hits > hits


def needed_units(model=None):
  """Symbols of the units `model` (a Python-side Model; None: every unit) needs."""
  import engine.api  # noqa: F401
  from engine import _jit
  return [s for s, u in _jit.units().items()
          if model is None or u.needs is None or u.needs(model)]


def build(model_path=None, jobs=None, out=sys.stdout):
  """Compile the units the model at `model_path` needs (None: all units) that are not cached
  yet, and the Model/Data constructors if they are not, with `jobs` processes, then link the
  units here. Returns the number of tasks compiled."""
  from engine import _jit
  from engine import mjcf
  jobs = jobs or os.cpu_count() or 1
  m = mjcf.load_model(model_path) if model_path else None
  symbols = needed_units(m)
  units = _jit.units()
  todo = _by_cost([s for s in symbols if not units[s].is_cached()])
  if todo and not _structs_cached():
    todo.insert(0, STRUCTS)   # its ~12 s would otherwise follow the build in this process
  t0 = time.perf_counter()
  env = {k: v for k, v in os.environ.items() if k.startswith(("NUMJOCO_", "NUMBA_"))}
  if jobs > 1 and len(todo) > 1:
    ctx = multiprocessing.get_context("spawn")   # the parent has LLVM loaded: never fork it
    # a fresh worker every few units bounds each process's memory (compiled modules pile up)
    with ctx.Pool(jobs, initializer=_worker_init, initargs=(env,), maxtasksperchild=6) as pool:
      for done, (symbol, dt, hit) in enumerate(
          pool.imap_unordered(_compile_unit, todo), 1):
        _report(out, done, len(todo), symbol, dt, hit)
  else:
    for done, symbol in enumerate(todo, 1):
      _report(out, done, len(todo), *_compile_unit(symbol))
  for symbol in symbols:
    units[symbol].link()
  if todo:
    print(f"{len(todo)} units compiled in {time.perf_counter() - t0:.1f} s", file=out, flush=True)
  return len(todo)


def _report(out, done, total, symbol, dt, hit):
  """One progress line: `[done/total] unit seconds` (app/warmup.py's progress reads it)."""
  print(f"[{done}/{total}] {symbol} {'cached' if hit else f'{dt:.1f} s'}", file=out, flush=True)


def _by_cost(symbols):
  """Big units first, so the last ones to finish are short: ordered by the bytecode size of
  everything a unit compiles (its own code and its helpers', engine/_jit.py's closure)."""
  from engine import _jit
  units = _jit.units()
  return sorted(symbols, key=lambda s: -_jit.closure_size(units[s].disp.py_func))


def cache_size():
  """(files, bytes) of the kernel cache."""
  from engine import _jit
  root = pathlib.Path(_jit.cache_root())
  files = list(root.glob("*.nbk")) if root.is_dir() else []
  return len(files), sum(f.stat().st_size for f in files)


def remove_legacy():
  """Delete the whole-engine caches older versions left beside `kernels/` (numba-<hash>/, one
  per engine source, several GB each); returns the bytes freed."""
  import shutil
  from engine import _cache
  root = pathlib.Path(_cache.cache_dir()).parent
  freed = 0
  for d in root.glob("numba-*"):
    if d.is_dir():
      freed += sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
      shutil.rmtree(d, ignore_errors=True)
  return freed
