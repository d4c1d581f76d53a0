"""Reference counts in compiled engine code are inline (engine/_jit.py, _inline_refcounts):
numba links NRT_incref/NRT_decref into every library as functions that are never inlined, and
a call to one on a Model/Data view (NULL meminfo) only returns. A numba whose
_optimize_final_module differs from the one _jit follows, or a change that stops the
inlining, would bring the calls back silently: only the step time would show it."""
import os

from numba.core import codegen

import numjoco
from numjoco.engine import _jit


def test_numba_final_optimization_is_replaced():
  assert _jit.NUMBA_OPTIMIZE_FINAL_MODULE is not None, (
      "this numba's CPUCodeLibrary._optimize_final_module is not the one engine/_jit.py "
      "follows: reference counts stay calls")
  assert codegen.CPUCodeLibrary._optimize_final_module is _jit._optimize_final_module


_BOX = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>"""


def test_kernels_have_no_refcount_calls(tmp_path):
  """Every unit that steps a box resting on a plane (contacts, the Newton solver) links keeps
  no NRT_incref or NRT_decref of its own: their bodies are inlined and the definitions
  dropped."""
  path = tmp_path / "box.xml"
  path.write_text(_BOX)
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  numjoco.step(m, d, 5)
  assert d.ncon > 0 and d.nefc > 0
  linked = [u for u in _jit.units().values() if u.linked]
  assert len(linked) > 10
  found = []
  for u in linked:
    path = u.disp._cache._path(u.sig, u.disp.targetctx.codegen())
    with open(path, "rb") as f:
      blob = f.read()
    if b"NRT_incref" in blob or b"NRT_decref" in blob:
      found.append(os.path.basename(path))
  assert not found, f"compiled with reference-count calls: {found}"
