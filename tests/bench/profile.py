"""Where a step's time goes, measured with Linux `perf`: runs a model's steps for a few
seconds and writes /tmp/perf-PID.map naming Numba's compiled code (Numba's JIT code is
anonymous to perf), including Numba's runtime reference counting (NRT_incref/NRT_decref).
Not a test:

    perf record -F 4000 -o /tmp/perf.data python -m tests.bench.profile pile64 NEWTON 10
    perf report -i /tmp/perf.data --no-children --sort sym

Functions LLVM inlined into their callers count as the caller (e.g. most of a step shows as
engine.forward.step); the runtime's reference counting stays separate, which is what this
is most useful for.
"""
import os
import sys
import time

import numba


def _symbols():
  """(address, name) of every compiled engine function and of the runtime's refcounting."""
  from numba.core.runtime import nrt
  syms = []
  for mod in list(sys.modules.values()):
    if not getattr(mod, "__name__", "").startswith("engine"):
      continue
    for k, v in list(vars(mod).items()):
      if isinstance(v, numba.core.registry.CPUDispatcher):
        for cres in v.overloads.values():
          try:
            addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
          except Exception:   # noqa: BLE001 (not every overload keeps a symbol)
            continue
          if addr:
            syms.append((addr, f"{mod.__name__}.{k}"))
  for fn in ("NRT_incref", "NRT_decref", "nrt_atomic_add", "nrt_atomic_sub"):
    syms.append((nrt.rtsys.library.get_pointer_to_function(fn), "numba.runtime." + fn))
  return sorted(set(syms))


def main():
  import mujoco

  import engine
  from engine import interop
  from tests.bench.contact import _load
  name = sys.argv[1] if len(sys.argv) > 1 else "pile64"
  solver = sys.argv[2] if len(sys.argv) > 2 else "NEWTON"
  seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
  m, mjm = _load(name)
  m.opt.solver = int(getattr(engine.mjtSolver, solver))
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, 1000)
  d = engine.make_data(m)
  interop.data_from_mujoco(mjd, d)
  engine.step(m, d, 2)
  syms = _symbols()
  with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
    for i, (a, n) in enumerate(syms):
      size = min(syms[i + 1][0] - a if i + 1 < len(syms) else 0x10000, 0x100000)
      f.write(f"{a:x} {size:x} {n}\n")
  t = time.time()
  n = 0
  while time.time() - t < seconds:
    engine.step(m, d, 100)
    n += 100
  print(f"{name} {solver}: {n} steps, {(time.time() - t) / n * 1e6:.1f} µs/step")


if __name__ == "__main__":
  main()
