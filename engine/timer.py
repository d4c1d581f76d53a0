"""MuJoCo's stage timers (mjData.timer indexed by mjtTimer; TM_START, TM_END and TM_ADD in
engine_forward.c). While d.timer_on[0] is set (MuJoCo: while mjcb_time is set) the stages add
the CPU cycles they take to d.timer_duration[i] and count their runs in d.timer_number[i]; off,
a timer costs a load and a branch. The cycle counter is LLVM's readcyclecounter (the TSC on
x86), read without a call into Python; `stage_us` converts cycles to microseconds."""
import time

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from numjoco.engine._jit import jit
from numjoco.engine.types import ints, mjtTimer


@intrinsic
def _cycles(typingctx):
  """The CPU's cycle counter (llvm.readcyclecounter)."""
  def codegen(context, builder, sig, args):
    fn = builder.module.declare_intrinsic("llvm.readcyclecounter",
                                          fnty=ir.FunctionType(ir.IntType(64), []))
    return builder.call(fn, [])
  return types.int64(), codegen


@jit
def start(d):
  """TM_START: the counter now, when the timers are on (else 0)."""
  if d.timer_on[0]:
    return float(_cycles())
  return 0.0


@jit
def end(d, i, t0):
  """TM_END: add the cycles since `t0` to timer `i` and count one run; returns the counter
  now, the next stage's start (TM_RESTART)."""
  if d.timer_on[0]:
    t = float(_cycles())
    d.timer_duration[i] += t - t0
    d.timer_number[i] += 1
    return t
  return 0.0


@jit
def add(d, i, t0):
  """TM_ADD: add the cycles since `t0` to timer `i` without counting a run."""
  if d.timer_on[0]:
    d.timer_duration[i] += float(_cycles()) - t0


@jit
def _now():
  return float(_cycles())


_HZ = None


def cycles_per_second():
  """The cycle counter's rate, measured once against time.perf_counter over 0.2 s."""
  global _HZ
  if _HZ is None:
    t0, c0 = time.perf_counter(), _now()
    time.sleep(0.2)
    t1, c1 = time.perf_counter(), _now()
    _HZ = (c1 - c0) / (t1 - t0)
  return _HZ


def enable(d, on=True):
  """Turn the stage timers of `d` on (cleared) or off."""
  d.timer_duration[:] = 0.0
  d.timer_number[:] = 0
  d.timer_on[0] = bool(on)


def stage_us(d, per=None):
  """{timer name (mjtTimer, lower case): µs} of `d`'s timers: per run of the stage, or per
  `per` (e.g. the number of steps) when given."""
  hz = cycles_per_second()
  out = {}
  for t in mjtTimer:
    n = per if per is not None else max(1, int(d.timer_number[int(t)]))
    out[t.name.lower()] = float(d.timer_duration[int(t)]) / hz / n * 1e6
  return out


# the timers by name, for the stages (numba reads module-level ints as constants)
(STEP, FORWARD, POSITION, VELOCITY, ACTUATION, CONSTRAINT, ADVANCE, POS_KINEMATICS, POS_INERTIA,
 POS_COLLISION, POS_MAKE, POS_PROJECT, COL_BROAD, COL_NARROW) = ints(
    mjtTimer, "STEP FORWARD POSITION VELOCITY ACTUATION CONSTRAINT ADVANCE POS_KINEMATICS "
    "POS_INERTIA POS_COLLISION POS_MAKE POS_PROJECT COL_BROAD COL_NARROW")
