"""MuJoCo's checks of the state (engine_forward.c's mj_checkPos, mj_checkVel, mj_checkAcc, run
by every step) and its warning counter (mj_warning). A value is bad when it is NaN or larger
than mjMAXVAL in magnitude (mju_isBad). A check that finds one counts its warning with the bad
index; the reset MuJoCo then does (mj_resetData, unless the AUTORESET disable flag) is
numjoco.engine.api's, between the compiled calls (engine/step.py's `step_once`)."""
from numjoco.engine import sleep
from numjoco.engine._jit import jit
from numjoco.engine.types import MAXVAL, mjtDisableBit, mjtWarning

BADQPOS, BADQVEL, BADQACC, BADCTRL = (
    int(mjtWarning.BADQPOS), int(mjtWarning.BADQVEL), int(mjtWarning.BADQACC),
    int(mjtWarning.BADCTRL))
_DSBL_AUTORESET = int(mjtDisableBit.AUTORESET)


@jit
def warning(d, w, info):
  """Count warning `w` and keep `info` as its last occurrence's (mj_warning)."""
  d.warning_lastinfo[w] = info
  d.warning_number[w] += 1


@jit
def is_bad(x):
  """NaN, or larger than mjMAXVAL in magnitude (mju_isBad)."""
  return not (abs(x) <= MAXVAL)


@jit
def autoreset(m):
  """Whether a failed check resets Data (the AUTORESET disable flag is off)."""
  return not (m.opt_disableflags[0] & _DSBL_AUTORESET)


@jit
def check_pos(m, d):
  """The first bad qpos index (mj_checkPos), its BADQPOS warning counted; -1 when none."""
  for i in range(m.nq):
    if is_bad(d.qpos[i]):
      warning(d, BADQPOS, i)
      return i
  return -1


@jit
def _check_dofs(m, d, x, w):
  """The first bad entry of the dof vector x over the awake dofs (all of them unless some tree
  sleeps), its warning `w` counted; -1 when none."""
  if sleep.enabled(m) and d.nv_awake[0] < m.nv:
    for k in range(d.nv_awake[0]):
      i = d.dof_awake_ind[k]
      if is_bad(x[i]):
        warning(d, w, i)
        return i
    return -1
  for i in range(m.nv):
    if is_bad(x[i]):
      warning(d, w, i)
      return i
  return -1


@jit
def check_vel(m, d):
  """The first bad qvel index among awake dofs (mj_checkVel), BADQVEL counted; -1 when none."""
  return _check_dofs(m, d, d.qvel, BADQVEL)


@jit
def check_acc(m, d):
  """The first bad qacc index among awake dofs (mj_checkAcc), BADQACC counted; -1 when none."""
  return _check_dofs(m, d, d.qacc, BADQACC)
