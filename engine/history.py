"""Control and sensor history buffers (MuJoCo 4's nsample / interp / delay / interval).

An actuator or sensor with nsample > 0 owns a block of d.history at actuator_historyadr /
sensor_historyadr, laid out as MuJoCo lays it out:

    [user, cursor, times(nsample), values(nsample * dim)]

dim is actuator_ctrlnum (a multi-input actuator stores its whole control block) or sensor_dim.
The samples form a ring sorted by time: `cursor` is the physical index of the newest one,
logical index 0 the oldest. `user` holds the last computation time of an interval sensor.
The step writes a sample per buffer (step.advance_history); actuation and the sensor stages
read them at time - delay (read_ctrl_into, read_sensor_into) with zero-order hold, linear or
Catmull-Rom cubic interpolation and constant extrapolation outside the stored times.

The Python helpers at the end carry MuJoCo's names: read_ctrl (mj_readCtrl), read_sensor
(mj_readSensor), init_ctrl_history (mj_initCtrlHistory), init_sensor_history
(mj_initSensorHistory) and reset_history (the part of mj_resetData that fills the buffers).
"""
import math
import warnings

import numpy as np

from numjoco.engine._jit import inline, jit
from numjoco.engine.types import MINVAL as _MINVAL

ZOH, LINEAR, CUBIC = 0, 1, 2   # interp values (MJCF: zoh, linear, cubic)


@jit
def _phys(cursor, n, logical):
  """Physical index of logical sample `logical` (0: oldest, n-1: newest)."""
  return (cursor + 1 + logical) % n


@jit
def _find(buf, n, cursor, t):
  """Logical i with times[i-1] < t <= times[i]: 0 when t is at or before the oldest sample, n
  when after the newest (binary search over the ring)."""
  if t <= buf[2 + _phys(cursor, n, 0)]:
    return 0
  if t > buf[2 + _phys(cursor, n, n - 1)]:
    return n
  lo, hi = 0, n - 1
  while hi - lo > 1:
    mid = (lo + hi) // 2
    if buf[2 + _phys(cursor, n, mid)] < t:
      lo = mid
    else:
      hi = mid
  return hi


@jit
def size(n, dim):
  """Length of the block of a buffer with n samples of dim values."""
  return 2 + n + n * dim


@jit
def insert(buf, n, dim, t):
  """Offset in `buf` where the dim values of a sample at time t go (mju_historyInsert): the
  slot of an existing sample at t, else a new slot that drops the oldest sample."""
  cursor = int(buf[1])
  i = _find(buf, n, cursor, t)
  if i < n:
    p = _phys(cursor, n, i)
    if abs(t - buf[2 + p]) < _MINVAL:
      return 2 + n + p * dim
  if i == 0:
    p = _phys(cursor, n, 0)
    buf[2 + p] = t
    return 2 + n + p * dim
  if i == n:
    cursor = (cursor + 1) % n
    buf[1] = cursor
    buf[2 + cursor] = t
    return 2 + n + cursor * dim
  # out of order: shift logical 1..i-1 one slot older (dropping the oldest), insert at i-1
  for j in range(i - 1):
    src, dst = _phys(cursor, n, j + 1), _phys(cursor, n, j)
    buf[2 + dst] = buf[2 + src]
    for k in range(dim):
      buf[2 + n + dst * dim + k] = buf[2 + n + src * dim + k]
  p = _phys(cursor, n, i - 1)
  buf[2 + p] = t
  return 2 + n + p * dim


@jit
def read(buf, n, dim, t, interp, out):
  """out[:dim] = the buffer's value at time t (mju_historyRead): the sample at or before t for
  zero-order hold, else linear or cubic (Catmull-Rom, zero slope at the ends) interpolation
  between the samples around t; the oldest or newest value outside the stored times."""
  cursor = int(buf[1])
  vals = 2 + n
  p_old, p_new = _phys(cursor, n, 0), _phys(cursor, n, n - 1)
  src = -1
  if t <= buf[2 + p_old] + _MINVAL:
    src = p_old
  elif t >= buf[2 + p_new] - _MINVAL:
    src = p_new
  else:
    i = _find(buf, n, cursor, t)
    hi = _phys(cursor, n, i)
    lo = _phys(cursor, n, i - 1)
    if abs(t - buf[2 + hi]) < _MINVAL:
      src = hi
    elif interp == ZOH:
      src = lo
    else:
      t_lo, t_hi = buf[2 + lo], buf[2 + hi]
      dt = t_hi - t_lo
      a = (t - t_lo) / dt
      if interp == LINEAR:
        for k in range(dim):
          v_lo, v_hi = buf[vals + lo * dim + k], buf[vals + hi * dim + k]
          out[k] = v_lo + a * (v_hi - v_lo)
      else:
        a2 = a * a
        a3 = a2 * a
        h00 = 2 * a3 - 3 * a2 + 1
        h10 = a3 - 2 * a2 + a
        h01 = -2 * a3 + 3 * a2
        h11 = a3 - a2
        for k in range(dim):
          v_lo, v_hi = buf[vals + lo * dim + k], buf[vals + hi * dim + k]
          m_lo = 0.0
          if i > 1:
            pp = _phys(cursor, n, i - 2)
            m_lo = (v_hi - buf[vals + pp * dim + k]) / (t_hi - buf[2 + pp])
          m_hi = 0.0
          if i < n - 1:
            pn = _phys(cursor, n, i + 1)
            m_hi = (buf[vals + pn * dim + k] - v_lo) / (buf[2 + pn] - t_lo)
          out[k] = h00 * v_lo + h10 * dt * m_lo + h01 * v_hi + h11 * dt * m_hi
      return
  for k in range(dim):
    out[k] = buf[vals + src * dim + k]


@inline
def _read_into(d, hist, histadr, dim, t, interp, src, srcadr, out):
  """out[:dim] = src[srcadr:srcadr + dim] for an object without a buffer (hist[0] <= 0), else
  its buffer at histadr read at time t (interp < 0: the object's own, hist[1])."""
  n = hist[0]
  if n <= 0:
    for k in range(dim):
      out[k] = src[srcadr + k]
    return
  if interp < 0:
    interp = hist[1]
  read(d.history[histadr:histadr + size(n, dim)], n, dim, t, interp, out)


@jit
def read_ctrl_into(m, d, i, time, interp, out):
  """out[:actuator_ctrlnum[i]] = actuator i's controls at `time` (mj_readCtrl): d.ctrl without
  a buffer, else the buffer read at time - actuator_delay[i]; interp < 0: the actuator's own."""
  _read_into(d, m.actuator_history[i], m.actuator_historyadr[i], m.actuator_ctrlnum[i],
             time - m.actuator_delay[i], interp, d.ctrl, m.actuator_ctrladr[i], out)


@jit
def read_sensor_into(m, d, i, time, interp, out):
  """out[:sensor_dim[i]] = sensor i's value at `time` (mj_readSensor): its sensordata without
  a buffer, else the buffer read at time - sensor_delay[i]; interp < 0: the sensor's own."""
  _read_into(d, m.sensor_history[i], m.sensor_historyadr[i], m.sensor_dim[i],
             time - m.sensor_delay[i], interp, d.sensordata, m.sensor_adr[i], out)


# ------------------------------------------------------------------ Python-level helpers

def _block(m, d, kind, i):
  """(buffer view, nsample, dim) of actuator/sensor i; ValueError when it has none."""
  count = m.nactuator if kind == "actuator" else m.nsensor
  if not 0 <= int(i) < count:
    raise ValueError(f"invalid {kind} id {i} (model has {count})")
  hist = m.actuator_history if kind == "actuator" else m.sensor_history
  n = int(hist[i, 0])
  dim = int(m.actuator_ctrlnum[i] if kind == "actuator" else m.sensor_dim[i])
  if n <= 0:
    return None, 0, dim
  adr = int((m.actuator_historyadr if kind == "actuator" else m.sensor_historyadr)[i])
  return d.history[adr:adr + 2 + n + n * dim], n, dim


def _read_block(m, d, kind, i, time, interp, live, liveadr):
  """read_ctrl / read_sensor: the live values live[liveadr[i]:][:dim] without history, else
  the buffer of actuator/sensor i read at time - its delay."""
  buf, n, dim = _block(m, d, kind, i)
  if buf is None:
    a = int(liveadr[i])
    return np.array(live[a:a + dim])
  hist, delay = ((m.actuator_history, m.actuator_delay) if kind == "actuator"
                 else (m.sensor_history, m.sensor_delay))
  interp = int(hist[i, 1]) if interp < 0 else _check_interp(interp)
  out = np.zeros(dim)
  read(buf, n, dim, float(time) - float(delay[i]), interp, out)
  return out


def read_ctrl(m, d, i, time, interp=-1):
  """Controls of actuator i at `time` (mj_readCtrl): d.ctrl's block when it has no history,
  else its buffer read at time - actuator_delay[i]. interp: 0 zero-order hold, 1 linear,
  2 cubic, -1 the actuator's own. Returns a new array of actuator_ctrlnum[i] values."""
  return _read_block(m, d, "actuator", i, time, interp, d.ctrl, m.actuator_ctrladr)


def read_sensor(m, d, i, time, interp=-1):
  """Value of sensor i at `time` (mj_readSensor): its sensordata when it has no history, else
  its buffer read at time - sensor_delay[i]. interp as in read_ctrl. Returns a new array of
  sensor_dim[i] values."""
  return _read_block(m, d, "sensor", i, time, interp, d.sensordata, m.sensor_adr)


def _check_interp(interp):
  if interp not in (ZOH, LINEAR, CUBIC):
    raise ValueError(f"interp must be 0 (zoh), 1 (linear), 2 (cubic) or -1, got {interp}")
  return int(interp)


def _init(buf, n, dim, times, values, user, what):
  """MuJoCo's history initialisation: given `times` (strictly increasing) start a fresh
  ring, newest sample last; without them keep the ring's times and cursor and write `values`
  (oldest first) into its slots in time order. The user slot becomes `user`."""
  fresh = times is not None
  cursor = n - 1 if fresh else int(buf[1])
  order = [(cursor + 1 + k) % n for k in range(n)]   # physical slots, oldest first
  if fresh:
    times = np.array(times, np.float64).ravel()
    if times.shape != (n,):
      raise ValueError(f"{what}: expected {n} times, got {times.size}")
  else:
    times = np.array(buf[2:2 + n])[order]
  for k in range(n - 1):
    if times[k + 1] - times[k] < _MINVAL:
      raise ValueError(f"{what}: times must be strictly increasing, got times[{k}]="
                       f"{times[k]:g} >= times[{k + 1}]={times[k + 1]:g}")
  if values is not None:
    values = np.asarray(values, np.float64).ravel()
    if values.size != n * dim:
      raise ValueError(f"{what}: expected {n * dim} values ({n} samples x {dim}), got "
                       f"{values.size}")
  buf[0] = user
  buf[1] = cursor
  for k, p in enumerate(order):
    buf[2 + p] = times[k]
    if values is not None:
      buf[2 + n + p * dim:2 + n + (p + 1) * dim] = values[k * dim:(k + 1) * dim]


def init_ctrl_history(m, d, i, times, values):
  """Fill actuator i's buffer (mj_initCtrlHistory): `times` (nsample, strictly increasing; None
  keeps the current ones) and `values` (nsample x actuator_ctrlnum[i]); the newest sample is
  the last."""
  buf, n, dim = _block(m, d, "actuator", i)
  if buf is None:
    raise ValueError(f"actuator {i} has no history buffer")
  _init(buf, n, dim, times, values, buf[0], f"actuator {i} history")


def init_sensor_history(m, d, i, times, values, phase):
  """Fill sensor i's buffer (mj_initSensorHistory) as init_ctrl_history; `phase` is the last
  computation time of an interval sensor (the buffer's user slot)."""
  buf, n, dim = _block(m, d, "sensor", i)
  if buf is None:
    raise ValueError(f"sensor {i} has no history buffer")
  _init(buf, n, dim, times, values, float(phase), f"sensor {i} history")


def reset_history(m, d):
  """The buffers as mj_resetData leaves them: values zero; actuators and sensors without an
  interval sampled at [-n dt, ..., -dt]; an interval sensor's samples `period` apart ending at
  its phase (0: -period), each rounded up to a multiple of dt, and its phase as the last
  computation time. Keyframe resets keep these times (MuJoCo does too)."""
  if m.nhistory == 0:
    return
  dt = float(m.opt.timestep)
  if dt <= 0:
    warnings.warn(f"history buffers need a positive timestep, got {dt:g}: their times are "
                  "meaningless until the next reset", RuntimeWarning, stacklevel=3)
  d.history[:] = 0.0
  for i in range(m.nactuator):
    buf, n, _ = _block(m, d, "actuator", i)
    if buf is None:
      continue
    buf[1] = n - 1
    for j in range(n):
      buf[2 + j] = -(n - j) * dt
  for i in range(m.nsensor):
    buf, n, _ = _block(m, d, "sensor", i)
    if buf is None:
      continue
    period, phase = float(m.sensor_interval[i, 0]), float(m.sensor_interval[i, 1])
    buf[1] = n - 1
    if period > 0:
      t0 = -period if phase == 0 else phase
      buf[0] = t0
      for j in range(n):
        buf[2 + j] = math.ceil((t0 - (n - 1 - j) * period) / dt) * dt
    else:
      buf[0] = -dt
      for j in range(n):
        buf[2 + j] = -(n - j) * dt
