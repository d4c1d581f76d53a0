"""How compiled code reads the Model/Data structs (engine/_borrow.py): a field read is a set of
loads LLVM may treat as invariant, with no reference counting of the field or of the struct,
and the structs and their arrays are still freed when their Python handles go."""
import gc
import re

import numba
import numpy as np
from numba.core.runtime import _nrt_python, rtsys

import numjoco
from numjoco.engine._jit import jit
from tests.models import suite_source


@jit
def _scale_qpos(m, d, s):
  for i in range(m.nq):
    d.qpos[i] = d.qpos[i] * s + m.qpos0[i]


@jit
def _row_sum(d, i):
  row = d.xpos[i]          # a view of a field
  return row[0] + row[1] + row[2]


def _ir(fn, *args):
  fn(*args)
  sig = fn.signatures[-1]
  return fn.inspect_llvm(sig)


def _body(ir, name):
  """The LLVM function of the python function `name` (its numba-mangled definition)."""
  m = re.search(r"define [^\n]*" + name + r"[^\n]*\{\n(.*?)\n\}", ir, re.S)
  assert m, name
  return m.group(1)


def _uncached(fn):
  """A fresh compile of `fn` (the kernel cache keeps no IR)."""
  return numba.njit(nogil=True, error_model="numpy")(fn.py_func)


def test_field_reads_are_invariant_loads_without_reference_counting():
  m = numjoco.load_model(suite_source("humanoid")[0])
  d = numjoco.make_data(m)
  body = _body(_ir(_uncached(_scale_qpos), m.struct, d.struct, 1.0), "_scale_qpos")
  assert "!invariant.load" in body
  # no counting of the struct (its meminfo) or of the arrays read from it
  assert "NRT_incref" not in body and "NRT_decref" not in body
  # the loop keeps the fields in registers: every ordinary load left in it reads array data
  # (a double), none re-reads a field's pointer, size or stride after the loop's store
  loop = body[body.index("store double"):]
  for line in loop.splitlines():
    if " = load " in line and "!invariant.load" not in line:
      assert "load double" in line, line


def test_the_struct_read_gives_the_arrays_values():
  m = numjoco.load_model(suite_source("humanoid")[0])
  d = numjoco.make_data(m)
  rng = np.random.default_rng(0)
  d.qpos[:] = rng.normal(size=m.nq)
  want = d.qpos * 2.0 + m.qpos0
  _scale_qpos(m.struct, d.struct, 2.0)
  np.testing.assert_array_equal(d.qpos, want)
  d.xpos[:] = rng.normal(size=d.xpos.shape)
  assert _row_sum(d.struct, 3) == d.xpos[3, 0] + d.xpos[3, 1] + d.xpos[3, 2]


def test_models_and_data_are_freed_with_their_handles():
  """The structs are not reference counted in compiled code: the handle's one reference must
  still free them, and stepping must not leave any allocation behind."""
  path = suite_source("humanoid")[0]
  m = numjoco.load_model(path)
  numjoco.step(m, numjoco.make_data(m), 2)   # compile and load first
  gc.collect()
  _nrt_python.memsys_enable_stats()
  try:
    before = rtsys.get_allocation_stats()
    for _ in range(20):
      mm = numjoco.load_model(path)
      d = numjoco.make_data(mm)
      numjoco.step(mm, d, 20)
      numjoco.forward(mm, d)
      del mm, d
    gc.collect()
    after = rtsys.get_allocation_stats()
  finally:
    _nrt_python.memsys_disable_stats()
  made = after.alloc - before.alloc
  freed = after.free - before.free
  assert made > 20 * 2, (before, after)            # the structs were counted at all
  assert made == freed, (before, after)
  assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free, (before, after)
