"""Integer indexing in compiled code (engine/_jit.py, _fix_integer_index): the engine's own
functions index without Python's negative-index wrap; numba's functions and any other
compiled code keep it. The views below are the second half of a bigger array, so a negative
index reads a known row either way: the one before the view (no wrap) or the view's last."""
import numba
import numpy as np
from numba.np import arrayobj

from numjoco.engine import _jit
from numjoco.engine.collision.support import row3
from numjoco.engine.island import dsu_root


def test_numba_integer_indexing_is_replaced():
  assert _jit.NUMBA_FIX_INTEGER_INDEX is not None
  assert arrayobj.fix_integer_index is _jit._fix_integer_index


def test_engine_functions_do_not_wrap_negative_indices():
  buf = np.arange(30.0).reshape(10, 3)
  view = buf[5:]
  assert row3(view, 2) == (21.0, 22.0, 23.0)
  assert row3(view, -1) == (12.0, 13.0, 14.0)     # buf[4], not view[-1] = buf[9]
  parent = np.array([7, 7, 7, 7, -1, 0, 1, 2, 3, 0])[5:]
  # no wrap: parent[-1] is the -1 before the view, a root; wrapped it would be parent[4] = 0
  assert dsu_root(parent, -1) == -1


def test_other_compiled_code_keeps_negative_indices():
  @numba.njit
  def row(a, i):
    return a[i, 0], a[i, 1], a[i, 2]

  @numba.njit
  def last_by_numba(a):
    return np.diff(a)[-1]   # numba's own implementation inside

  buf = np.arange(30.0).reshape(10, 3)
  assert row(buf[5:], -1) == (27.0, 28.0, 29.0)
  assert row(buf[5:], -5) == (15.0, 16.0, 17.0)
  k = -2
  assert row.py_func(buf[5:], k) == row(buf[5:], k)
  assert last_by_numba(np.array([1.0, 4.0, 9.0])) == 5.0
