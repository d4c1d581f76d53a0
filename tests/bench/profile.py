"""Where a step's time goes, measured with Linux `perf`: runs a model's steps for a few
seconds and writes /tmp/perf-PID.map naming Numba's compiled code (Numba's JIT code is
anonymous to perf), including Numba's runtime reference counting (NRT_incref/NRT_decref).
Not a test:

    perf record -F 4000 -o /tmp/perf.data python -m tests.bench.profile pile64 NEWTON 10
    perf report -i /tmp/perf.data --no-children --sort sym

Every function LLVM kept out of line is named (read from the objects in Numba's cache);
functions it inlined count as their caller. The runtime's reference counting stays separate.
"""
import importlib
import os
import sys
import time

import numba


def _elf_functions(path):
  """(name, offset, size) of the functions in the ELF object of a Numba cache file (.nbc)."""
  import struct
  import subprocess
  import tempfile
  raw = open(path, "rb").read()
  i = raw.find(b"\x7fELF")
  if i < 0:
    return []
  shoff, = struct.unpack_from("<Q", raw, i + 0x28)
  shentsize, shnum = struct.unpack_from("<HH", raw, i + 0x3A)
  with tempfile.NamedTemporaryFile(suffix=".o") as f:
    f.write(raw[i:i + shoff + shentsize * shnum])
    f.flush()
    out = subprocess.run(["nm", "-S", "--defined-only", f.name], capture_output=True,
                         text=True).stdout
  res = []
  for line in out.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tT":
      res.append((p[3], int(p[0], 16), int(p[1], 16)))
  return res


def _demangle(name):
  """engine.module.function from Numba's mangled name (_ZN6engine6solver10sol_primalB...)."""
  parts, k = [], name.find("_ZN") + 3
  while 0 < k < len(name) and name[k].isdigit():
    j = k
    while name[j].isdigit():
      j += 1
    n = int(name[k:j])
    parts.append(name[j:j + n])
    k = j + n
  return ".".join(parts) or name


def _symbols():
  """(address, size, name) of every function of the engine's compiled code (each function
  LLVM kept out of line, found in the objects of Numba's cache) and of the runtime's
  refcounting."""
  import glob

  from numba.core.runtime import nrt
  step = importlib.import_module("numjoco.engine.step")
  jit_engine = next(iter(step.step.overloads.values())).library.codegen._engine
  syms = set()
  for path in glob.glob(os.path.join(numba.config.CACHE_DIR, "**", "*.nbc"), recursive=True):
    funcs = _elf_functions(path)
    base = None
    for n, v, _ in funcs:
      a = jit_engine.get_function_address(n)   # exported symbols of the loaded objects
      if a:
        base = a - v
        break
    if base is None:
      continue   # not loaded in this process
    for n, v, size in funcs:
      if size and not n.startswith(("cpython.", "cfunc.", "_ZN7cpython")):
        syms.add((base + v, size, _demangle(n)))
  for fn in ("NRT_incref", "NRT_decref", "nrt_atomic_add", "nrt_atomic_sub"):
    syms.add((nrt.rtsys.library.get_pointer_to_function(fn), 0x40, "numba.runtime." + fn))
  return sorted(syms)


def main():
  import mujoco

  import numjoco
  from numjoco.engine import interop
  from tests.bench.contact import _load
  name = sys.argv[1] if len(sys.argv) > 1 else "pile64"
  solver = sys.argv[2] if len(sys.argv) > 2 else "NEWTON"
  seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
  m, mjm = _load(name)
  m.opt.solver = int(getattr(numjoco.mjtSolver, solver))
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, 1000)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.step(m, d, 2)
  syms = _symbols()
  with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
    for a, size, n in syms:
      f.write(f"{a:x} {size:x} {n}\n")
  t = time.time()
  n = 0
  while time.time() - t < seconds:
    numjoco.step(m, d, 100)
    n += 100
  print(f"{name} {solver}: {n} steps, {(time.time() - t) / n * 1e6:.1f} µs/step")


if __name__ == "__main__":
  main()
