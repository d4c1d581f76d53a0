"""Python entry points over the compiled kernels: load_model, forward, step."""
import warnings

import numpy as np

from engine import forward as _fwd
from engine import io
from engine import setconst
from engine.types import mjtDisableBit


def load_model(path_or_xml, assets=None):
  """Compile an MJCF file path or XML string into a Model (MuJoCo's compiler + mj_setConst)."""
  from engine import mjcf
  m = mjcf.load_model(path_or_xml, assets=assets) if assets else mjcf.load_model(path_or_xml)
  setconst.set_const(m)
  return m


def forward(m, d):
  """Forward dynamics at the current state: every derived field of Data (mj_forward)."""
  _fwd.forward(m.struct, d.struct)


def step(m, d, nstep=1):
  """Advance `nstep` steps in one compiled call. On divergence (NaN/huge qvel or qacc) warns
  and resets Data, as MuJoCo's autoreset does; returns the number of steps taken."""
  n = _fwd.step(m.struct, d.struct, int(nstep))
  if n < nstep or not np.isfinite(d.qpos).all():
    t = d.time
    if not (m.opt.disableflags & mjtDisableBit.AUTORESET):
      io.reset_data(m, d)
    warnings.warn(f"simulation diverged at time {t:.6g} (step {n + 1} of {nstep}): "
                  "state reset", RuntimeWarning, stacklevel=2)
  return n
