"""Where a step's time goes, measured with Linux `perf`: runs a model's steps for a few
seconds and writes /tmp/perf-PID.map naming Numba's compiled code (Numba's JIT code is
anonymous to perf), including Numba's runtime reference counting (NRT_incref/NRT_decref).
Not a test:

    perf record -F 4000 -o /tmp/perf.data python -m tests.bench.profile pile64 NEWTON 10
    perf record ... python -m tests.bench.profile path/to/model.xml NEWTON 10
    perf record ... python -m tests.bench.profile dog NEWTON 10 --unit numjoco.engine.solver.primal

or attach `perf record -p PID` once it prints "profile: running (pid PID)".
    perf report -i /tmp/perf.data --no-children --sort sym

Each unit (engine/_jit.py) is named by its entry function, read from its object code in the
kernel cache; the helpers compiled into a unit that LLVM kept out of line have no symbol there
and count as `<unit>.<helpers>`; functions LLVM inlined count as their caller. The runtime's
reference counting stays separate. `--unit SYMBOL` (repeatable) compiles that unit again
outside the cache and runs the new copy, whose out-of-line helpers all have names.
"""
import os
import sys
import time


def _elf_functions(raw):
  """(name, offset, size) of the functions in an ELF object (Numba's compiled object code)."""
  import struct
  import subprocess
  import tempfile
  i = raw.find(b"\x7fELF")
  if i < 0:
    return [], 0
  shoff, = struct.unpack_from("<Q", raw, i + 0x28)
  shentsize, shnum = struct.unpack_from("<HH", raw, i + 0x3A)
  with tempfile.NamedTemporaryFile(suffix=".o") as f:
    f.write(raw[i:i + shoff + shentsize * shnum])
    f.flush()
    out = subprocess.run(["nm", "-S", "--defined-only", f.name], capture_output=True,
                         text=True).stdout
    sections = subprocess.run(["size", "-A", f.name], capture_output=True, text=True).stdout
  res = []
  for line in out.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tT":
      res.append((p[3], int(p[0], 16), int(p[1], 16)))
  code = sum(int(p[1]) for p in (line.split() for line in sections.splitlines())
             if len(p) == 3 and p[0] in (".text", ".ltext"))
  return res, code


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


def _object_symbols(funcs, code, address, label):
  """(address, size, name) of the functions of an object file (from _elf_functions) loaded
  where `address` (function name -> loaded address, 0 if not exported) finds them; the
  unnamed stretches between them are `label.<helpers>`."""
  base = None
  for n, v, _ in funcs:
    a = address(n)
    if a:
      base = a - v
      break
  if base is None:
    return []
  out = []
  named = sorted((v, size, n) for n, v, size in funcs if size)
  for v, size, n in named:
    if not n.startswith(("cpython.", "cfunc.", "_ZN7cpython")):
      out.append((base + v, size, _demangle(n)))
  at = 0   # the unnamed stretches between them: the unit's out-of-line helpers
  for v, size, _ in named + [(code, 0, "")]:
    if v > at:
      out.append((base + at, v - at, label + ".<helpers>"))
    at = max(at, v + size)
  return out


def _symbols(skip=()):
  """(address, size, name) of every function of the engine's compiled code (each function
  LLVM kept out of line, in the object code of every unit loaded in this process: helpers are
  linked into their units, engine/_jit.py) and of the runtime's refcounting."""
  from numba.core.runtime import nrt
  from numjoco.engine import _jit
  syms = set()
  for u in _jit.units().values():
    if u.symbol in skip:   # run from an uncached copy (--unit)
      continue
    for cres in list(u.disp.overloads.values()):
      lib = cres.library
      engine = lib.codegen._engine
      try:   # the object code, as the kernel cache stored it (the loaded copy is consumed)
        with open(u.disp._cache._path(u.sig, u.disp.targetctx.codegen()), "rb") as f:
          funcs, code = _elf_functions(f.read())
      except OSError:
        print(f"profile: {u.symbol} not named (not in the kernel cache)", file=sys.stderr)
        continue
      syms.update(_object_symbols(funcs, code, engine.get_function_address, u.symbol))
  # the runtime's functions sit 16 bytes apart
  fns = sorted((nrt.rtsys.library.get_pointer_to_function(fn), fn)
               for fn in ("NRT_incref", "NRT_decref", "nrt_atomic_add", "nrt_atomic_sub"))
  for k, (a, fn) in enumerate(fns):
    size = fns[k + 1][0] - a if k + 1 < len(fns) else 0x10
    syms.add((a, size, "numba.runtime." + fn))
  return sorted(syms)


_KEEP = []   # the uncached copies of --unit units (their code must outlive the run)


def _relink_uncached(symbol):
  """Compile unit `symbol` again outside the kernel cache and point its table cell at the new
  code, so that the helpers LLVM kept out of line keep their names; returns their (address,
  size, name) entries."""
  import numba

  from numjoco.engine import _jit
  u = _jit.units()[symbol]
  u.link()
  disp = numba.njit(nogil=True, error_model="numpy")(u.disp.py_func)
  disp.compile(u.sig)
  cres = disp.overloads[u.sig.args]
  lib = cres.library
  u.cell.value = lib.get_pointer_to_function(cres.fndesc.llvm_func_name)
  _KEEP.append(disp)
  # the JIT places the module's functions one by one: each exported function is named up to
  # the next one (LLVM's internal functions count as the function before them)
  addrs = []
  for f in lib._final_module.functions:
    if not f.is_declaration and not f.name.startswith(("cpython.", "cfunc.", "_ZN7cpython")):
      a = lib.get_pointer_to_function(f.name)
      if a:
        addrs.append((a, _demangle(f.name)))
  addrs.sort()
  return [(a, min(addrs[k + 1][0] - a if k + 1 < len(addrs) else 0x1000, 0x40000), n)
          for k, (a, n) in enumerate(addrs)]


def main():
  import mujoco

  import numjoco
  from numjoco.engine import interop
  from tests.bench.speed import load
  argv = sys.argv[1:]
  relink = []
  while "--unit" in argv:
    k = argv.index("--unit")
    relink.append(argv[k + 1])
    del argv[k:k + 2]
  name = argv[0] if len(argv) > 0 else "pile64"
  solver = argv[1] if len(argv) > 1 else "NEWTON"
  seconds = float(argv[2]) if len(argv) > 2 else 10.0
  m, mjm = load(name, name if os.path.isfile(name) else None)
  m.opt.solver = int(getattr(numjoco.mjtSolver, solver))
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, 1000)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.step(m, d, 2)
  syms = _symbols(relink)
  for symbol in relink:
    syms += _relink_uncached(symbol)
  with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
    for a, size, n in syms:
      f.write(f"{a:x} {size:x} {n}\n")
  print(f"profile: running (pid {os.getpid()})", flush=True)
  t = time.time()
  n = 0
  while time.time() - t < seconds:
    numjoco.step(m, d, 100)
    n += 100
  print(f"{name} {solver}: {n} steps, {(time.time() - t) / n * 1e6:.1f} µs/step")


if __name__ == "__main__":
  main()
