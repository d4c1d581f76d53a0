"""Compile-time actuator length ranges (MuJoCo's mj_setLengthRange and the compiler's
<lengthrange> options): muscles need actuator_lengthrange, which MuJoCo finds by simulating the
model with a force pushing the actuator to each end of its range and recording the length
reached. Joint/tendon limits are used instead when `uselimit` allows it."""
import math

from numjoco.engine import forward as _fwd
from numjoco.engine import step as _step
from numjoco.engine import io
from numjoco.engine import smooth
from numjoco.engine._jit import jit
from numjoco.engine.types import mjtBias, mjtDisableBit, mjtGain, mjtIntegrator, mjtTrn

_MODE_NONE, _MODE_MUSCLE, _MODE_MUSCLEUSER = 0, 1, 2


@jit
def _simulate(m, d, index, side, accel, maxforce, timeconst, inttotal, interval):
  """Drive actuator output `index` towards one end of its range (evalAct loop); returns
  (ok, lmin, lmax) over the last `interval` seconds."""
  nv = m.nv
  moment = d.scratch_nv[6]
  x = d.scratch_nv[7]
  lmin = 0.0
  lmax = 0.0
  updated = False
  decay = math.exp(-m.opt_timestep[0] / max(0.01, timeconst))
  sgn = 2.0 * side - 1.0
  while d.time[0] < inttotal:
    for k in range(nv):
      d.qvel[k] *= decay
    _fwd.fwd_position(m, d)
    for k in range(nv):
      moment[k] = 0.0
    a = d.moment_rowadr[index]
    for k in range(a, a + d.moment_rownnz[index]):
      moment[d.moment_colind[k]] += d.actuator_moment[k]
    smooth.solve_m(m, d, x, moment)
    nrm = 0.0
    for k in range(nv):
      nrm += x[k] * x[k]
    nrm = math.sqrt(nrm)
    f = sgn * accel / max(1e-15, nrm)
    fn = 0.0
    for k in range(nv):
      d.qfrc_applied[k] = moment[k] * f
      fn += d.qfrc_applied[k] ** 2
    fn = math.sqrt(fn)
    if maxforce > 0 and fn > maxforce:
      for k in range(nv):
        d.qfrc_applied[k] *= maxforce / max(1e-15, fn)
    length = d.actuator_length[index]
    if _step.step_once(m, d, -1) >= 0:   # a bad value: MuJoCo's step would reset Data
      return False, 0.0, 0.0
    for k in range(nv):
      if not (abs(d.qvel[k]) < 1e10 and abs(d.qacc[k]) < 1e10):
        return False, 0.0, 0.0
    if d.time[0] > inttotal - interval:
      if length < lmin or not updated:
        lmin = length
      if length > lmax or not updated:
        lmax = length
      updated = True
  return True, lmin, lmax


def _needs(m, i, o):
  gt, bt = m.actuator_gaintype[i], m.actuator_biastype[i]
  muscle = gt == mjtGain.MUSCLE or bt == mjtBias.MUSCLE
  user = gt == mjtGain.USER or bt == mjtBias.USER
  mode = o["mode"]
  if mode == _MODE_NONE or (mode == _MODE_MUSCLE and not muscle) or (
      mode == _MODE_MUSCLEUSER and not muscle and not user):
    return False
  lr = m.actuator_lengthrange[m.actuator_outadr[i]]
  return not (o["useexisting"] and lr[0] < lr[1])


def _error(o, i, msg):
  """The error to raise for actuator `i`: the compiler's load error naming its element (file,
  line) when the compiler passed the actuators' elements along, else a ValueError."""
  nodes = o.get("actuators")
  return nodes[i].error(msg) if nodes else ValueError(msg)


def set_length_range(m):
  """Fill m.actuator_lengthrange as MuJoCo's compiler does (after set_const)."""
  o = getattr(m, "lropt", None)
  if o is None or m.nactuator == 0:
    return
  todo = []
  for i in range(m.nactuator):
    if m.actuator_outnum[i] != 1 or not _needs(m, i, o):
      continue
    trn, tid = m.actuator_trntype[i], m.actuator_trnid[i, 0]
    out = m.actuator_outadr[i]
    if o["uselimit"]:
      if trn in (mjtTrn.JOINT, mjtTrn.JOINTINPARENT) and m.jnt_limited[tid]:
        m.actuator_lengthrange[out] = m.jnt_range[tid]
        continue
      if trn == mjtTrn.TENDON and m.tendon_limited[tid]:
        m.actuator_lengthrange[out] = m.tendon_range[tid]
        continue
    todo.append(i)
  if not todo:
    return
  opt = m.opt
  saved = (opt.disableflags, opt.timestep, opt.integrator)
  opt.disableflags = int(mjtDisableBit.FRICTIONLOSS | mjtDisableBit.CONTACT |
                         mjtDisableBit.SPRING | mjtDisableBit.DAMPER | mjtDisableBit.GRAVITY |
                         mjtDisableBit.ACTUATION)
  if o["timestep"] > 0:
    opt.timestep = o["timestep"]
  if opt.integrator == mjtIntegrator.RK4:
    opt.integrator = int(mjtIntegrator.EULER)   # mj_step2 has no RK4
  try:
    d = io.make_data(m)
    for i in todo:
      lo, hi = [0.0, 0.0], [0.0, 0.0]
      for side in (0, 1):
        io.reset_data(m, d)
        ok, lo[side], hi[side] = _simulate(m.struct, d.struct, m.actuator_outadr[i], side, o["accel"],
                                           o["maxforce"], o["timeconst"], o["inttotal"],
                                           o["interval"])
        if not ok:
          raise _error(o, i, f"unstable lengthrange simulation in actuator {i}")
      rng = (lo[0], hi[1])
      dif = rng[1] - rng[0]
      if dif <= 0:
        raise _error(o, i, f"invalid lengthrange ({rng[0]:g}, {rng[1]:g}) in actuator {i}")
      for side in (0, 1):
        if hi[side] - lo[side] > o["tolrange"] * dif:
          raise _error(o, i,
              f"lengthrange computation did not converge in actuator {i}: eval "
              f"({lo[side]:g}, {hi[side]:g}), range ({rng[0]:g}, {rng[1]:g}); set "
              "'lengthrange' on the actuator or adjust <compiler><lengthrange>")
      m.actuator_lengthrange[m.actuator_outadr[i]] = rng
  finally:
    opt.disableflags, opt.timestep, opt.integrator = saved
