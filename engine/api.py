"""Python entry points over the compiled kernels: load_model, forward, step."""
import dataclasses
import warnings

import numpy as np

from numjoco.engine import check
from numjoco.engine import forward as _fwd
from numjoco.engine import step as _step
# imported here, before engine/__init__ binds the name numjoco.inverse to the function below
from numjoco.engine import inverse as _inverse
from numjoco.engine import io
from numjoco.engine import lengthrange
from numjoco.engine import perturb as _perturb
from numjoco.engine import preview
from numjoco.engine import setconst
from numjoco.engine.types import MAXVAL, mjtWarning


def load_model(path_or_xml, assets=None, prepare=None):
  """Compile an MJCF (or URDF) file path or XML string into a Model: MuJoCo's compiler, then
  `build_model`. `prepare(m)` is called before the first kernel runs on it (the viewer compiles
  the units the model needs in other processes there)."""
  return build_model(preview.Compiled(path_or_xml, assets), prepare)


def build_model(compiled, prepare=None):
  """The Model of a compiled model (preview.Compiled), with the constants MuJoCo computes at
  qpos0 once the compiler is done: mj_setConst's, the compiler's actuator length ranges
  (muscles) and the flex edges' length0 and invweight0. The one way a Model is built: the
  viewer compiles and draws a preview first, then builds the Model of the same arrays here."""
  m = io.Model.from_compiled(compiled)
  if prepare is not None:
    prepare(m)
  setconst.set_const(m)
  lengthrange.set_length_range(m)
  setconst.set_flex_edge_constants(m)
  return m


_FULL = {int(mjtWarning.CONTACTFULL): ("contacts", "nconmax"),
         int(mjtWarning.CNSTRFULL): ("constraint rows", "njmax")}


def _warn_full(m, d, before):
  """Warn once per call when contacts or constraint rows overflowed their preallocated room or
  when the inertia matrix was singular (mjWARN_INERTIA: its pivot clamped to mjMINVAL); warn when
  a control is first found bad (mjWARN_BADCTRL: the controls taken as zero, as MuJoCo does)."""
  w = int(mjtWarning.INERTIA)
  if d.warning_number[w] > before[w]:
    warnings.warn(f"inertia matrix is singular or too close to it at dof "
                  f"{d.warning_lastinfo[w]} ({d.warning_number[w] - before[w]} pivot(s) clamped to "
                  "1e-15); check the model's masses, inertias and armature", RuntimeWarning,
                  stacklevel=3)
  for w, (what, size) in _FULL.items():
    if d.warning_number[w] > before[w]:
      room = d.contact_dist.shape[0] if size == "nconmax" else d.efc_pos.shape[0]
      warnings.warn(f"too many {what}: room for {room} was exceeded "
                    f"{d.warning_number[w] - before[w]} time(s); raise <size {size}=...> in the "
                    "model", RuntimeWarning, stacklevel=3)
  w = check.BADCTRL
  if d.warning_number[w] > before[w] == 0:   # the first one only, as mj_warning prints it
    warnings.warn(f"mjWARN_BADCTRL at ctrl {d.warning_lastinfo[w]}, time {d.time:.6g}: NaN, inf "
                  "or huge control; while it lasts every control is taken as zero, as MuJoCo "
                  "does (d.warning_number counts the steps)", RuntimeWarning, stacklevel=3)


def forward(m, d):
  """Forward dynamics at the current state: every derived field of Data (mj_forward)."""
  counts = d.warning_number
  seen0 = counts.tobytes()
  _fwd.forward.entry()(m.struct, d.struct)
  if counts.tobytes() != seen0:
    _warn_full(m, d, np.frombuffer(seen0, counts.dtype))


# the checks of the state every step makes (engine/check.py): what they name by their index
_CHECKS = {check.BADQPOS: ("mjWARN_BADQPOS", "qpos index", "qpos"),
           check.BADQVEL: ("mjWARN_BADQVEL", "dof", "qvel"),
           check.BADQACC: ("mjWARN_BADQACC", "dof", "qacc")}


@dataclasses.dataclass(frozen=True)
class Divergence:
  """A step met a NaN, inf or huge value (MuJoCo's mj_checkPos, mj_checkVel, mj_checkAcc)."""
  warning: str    # MuJoCo's name: mjWARN_BADQPOS, mjWARN_BADQVEL or mjWARN_BADQACC
  index: int      # the bad value's index (d.warning_lastinfo): in qpos, or the dof
  time: float     # d.time when the step met it
  reset: bool     # Data was reset (autoreset); False under the AUTORESET disable flag
  count: int = 1  # times it was met in the call (more than 1 only without autoreset)

  def __str__(self):
    where, field = next((w, f) for n, w, f in _CHECKS.values() if n == self.warning)
    text = f"{self.warning} at {where} {self.index}, time {self.time:.6g}: NaN, inf or huge {field}"
    if self.reset:
      return text + "; state reset"
    return text + f" ({self.count} time(s); autoreset disabled: the state is kept)"


def step(m, d, nstep=1):
  """Advance `nstep` steps (mj_step each) in one compiled call; returns the number taken. A step
  that meets a NaN, inf or huge qpos, qvel or qacc warns (a RuntimeWarning naming MuJoCo's
  warning, the index and the time; see Divergence) and resets Data as MuJoCo's autoreset does,
  then finishes from the reset state as mj_step does; the call ends with that step."""
  n, div = step_checked(m, d, nstep)
  if div is not None:
    warnings.warn(str(div), RuntimeWarning, stacklevel=2)
  return n


def step_checked(m, d, nstep=1, rows=None, start=0):
  """`step` that returns (steps taken, Divergence or None) instead of warning of a divergence,
  for callers that report it themselves (the viewer, `numjoco record`). With `rows` (a float64
  array), the INTEGRATION state (engine/state.py's layout) after step s goes into row
  (start + s) % len(rows): the viewer's history of recent states; a step that diverged writes
  none (the history starts again from its state)."""
  counts = d.warning_number
  seen0 = counts.tobytes()
  nstep = int(nstep)
  if rows is None:
    n = _step.step.entry()(m.struct, d.struct, nstep)
  else:
    n = _step.step_record(m.struct, d.struct, nstep, rows, int(start))
  if n == nstep and counts.tobytes() == seen0:   # no warning counted: nothing to report
    return n, None
  before = np.frombuffer(seen0, counts.dtype)
  div = after_steps(m, d, before, n < nstep)
  if div is not None:
    return n + 1, div
  seen = [w for w in _CHECKS if d.warning_number[w] > before[w]]
  if seen:   # without autoreset: the checks counted them and the steps went on
    w = seen[-1]
    return n, Divergence(_CHECKS[w][0], int(d.warning_lastinfo[w]), float(d.time), False,
                         int(d.warning_number[w] - before[w]))
  return n, None


def state_is_bad(d):
  """Whether qpos or qvel holds a NaN, inf or huge value (mju_isBad), which the next step's
  checks (mj_checkPos, mj_checkVel; a sleeping dof's qvel excepted) will find: a step's
  integration can leave one, e.g. under a NaN timestep."""
  return not ((np.abs(d.qpos) <= MAXVAL).all() and (np.abs(d.qvel) <= MAXVAL).all())


def after_steps(m, d, before, stopped):
  """What `step_checked` does after its compiled loop, for other compiled loops of `step` (the
  rollout's): warn of overflows and singular inertia since `before` (d.warning_number then);
  when the loop `stopped` at a failed check, finish that step as mj_step does and return its
  Divergence (else None)."""
  _warn_full(m, d, before)
  return _finish_diverged(m, d, before) if stopped else None


def _finish_diverged(m, d, before):
  """The compiled loop stopped at a failed check (autoreset on): reset Data (mj_resetData), count
  the warning again as mj_step does after its reset, and finish the step from the reset state.
  A model bad at the reset state too (a NaN parameter) fails the qacc check again and is reset
  once more, as in mj_step. Returns the Divergence of the first check."""
  w = next(w for w in _CHECKS if d.warning_number[w] > before[w])
  first = None
  while w >= 0:
    info = int(d.warning_lastinfo[w])
    if first is None:
      first = Divergence(_CHECKS[w][0], info, float(d.time), True)
    io.reset_data(m, d)
    d.warning_number[w] += 1
    d.warning_lastinfo[w] = info
    w = _step.step_once(m.struct, d.struct, w)
  return first


def init_perturb(m, d):
  """Start a mouse drag on body d.pert_select at d.pert_localpos: the reference pose becomes the
  current one and d.pert_localmass the effective mass at the grab point (mjv_initPerturb).
  Kinematics and the factor of M must be current (call forward first)."""
  _perturb.init_perturb(m.struct, d.struct)


def apply_perturb_pose(m, d, paused):
  """Move mocap bodies (and, when paused, free bodies) to the drag reference
  (mjv_applyPerturbPose). `step` does this itself every substep while d.pert_active is set."""
  _perturb.apply_perturb_pose(m.struct, d.struct, bool(paused))


def apply_perturb_force(m, d):
  """The drag's spring-damper wrench into d.xfrc_perturb (mjv_applyPerturbForce). `step` does
  this itself every substep while d.pert_active is set."""
  _perturb.apply_perturb_force(m.struct, d.struct)


def _inverse_work(m, d):
  from numjoco.engine.types import mjtEnableBit, mjtIntegrator
  if (m.opt.enableflags & mjtEnableBit.INVDISCRETE) and m.opt.integrator == mjtIntegrator.RK4:
    raise ValueError("discrete inverse dynamics (INVDISCRETE enable flag) is not supported by "
                     "the RK4 integrator")
  return _inverse, (np.zeros(d.efc_pos.shape[0]), np.zeros(m.nv), np.zeros(m.nv), np.zeros(36))


def inverse(m, d):
  """Inverse dynamics at the current qpos, qvel, qacc: d.qfrc_inverse, the force that produces
  qacc (mj_inverse); also recomputes the position and velocity stages, efc_force and
  qfrc_constraint from the soft-constraint model, and the sensors."""
  _inv, work = _inverse_work(m, d)
  _inv.inverse_skip(m.struct, d.struct, _inv.STAGE_NONE, False, *work)


def compare_fwd_inv(m, d):
  """After `forward`: d.solver_fwdinv = (|qfrc_constraint(fwd) - qfrc_constraint(inv)|,
  |qfrc_applied + qfrc_actuator + J'xfrc - qfrc_inverse|), returned as a copy; forward's results
  are left in place (mj_compareFwdInv; `step` does this itself under the FWDINV enable flag)."""
  _inverse_work(m, d)
  _inverse.fwd_inv_stats(m.struct, d.struct)
  return d.solver_fwdinv.copy()


def eval_fk(m, d):
  """Body poses (nbody, 7) and twists (nbody, 6) from qpos, qvel (kinematics only); see
  engine.articulation for the conventions."""
  from numjoco.engine import articulation
  return articulation.eval_fk(m, d)


def eval_ik(m, d, body_pose, body_vel):
  """d.qpos, d.qvel from body poses (nbody, 7) and twists (nbody, 6): the inverse of eval_fk."""
  from numjoco.engine import articulation
  articulation.eval_ik(m, d, body_pose, body_vel)


def joint_q_start(m):
  """Per-joint start in qpos, nq appended (Newton's joint_q_start)."""
  from numjoco.engine import articulation
  return articulation.joint_q_start(m)


def joint_qd_start(m):
  """Per-joint start in qvel, nv appended (Newton's joint_qd_start)."""
  from numjoco.engine import articulation
  return articulation.joint_qd_start(m)
