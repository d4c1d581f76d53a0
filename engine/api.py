"""Python entry points over the compiled kernels: load_model, forward, step."""
import warnings

import numpy as np

from numjoco.engine import forward as _fwd
from numjoco.engine import step as _step
# imported here, before engine/__init__ binds the name numjoco.inverse to the function below
from numjoco.engine import inverse as _inverse
from numjoco.engine import io
from numjoco.engine import lengthrange
from numjoco.engine import perturb as _perturb
from numjoco.engine import preview
from numjoco.engine import setconst
from numjoco.engine.types import mjtDisableBit, mjtWarning


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
  """Warn once per call when contacts or constraint rows overflowed their preallocated room, or
  when the inertia matrix was singular (mjWARN_INERTIA: its pivot clamped to mjMINVAL)."""
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


def forward(m, d):
  """Forward dynamics at the current state: every derived field of Data (mj_forward)."""
  before = d.warning_number.copy()
  _fwd.forward(m.struct, d.struct)
  _warn_full(m, d, before)


def step(m, d, nstep=1):
  """Advance `nstep` steps in one compiled call. On divergence (NaN/huge qvel or qacc) warns
  and resets Data, as MuJoCo's autoreset does; returns the number of steps taken."""
  before = d.warning_number.copy()
  return _stepped(m, d, _step.step(m.struct, d.struct, int(nstep)), nstep, before)


def step_record(m, d, nstep, rows, start):
  """`step`, writing the INTEGRATION state (engine/state.py's layout) after step s into row
  (start + s) % len(rows) of the float64 array `rows`: the viewer's history of recent states.
  Returns the number of steps taken."""
  before = d.warning_number.copy()
  n = _step.step_record(m.struct, d.struct, int(nstep), rows, int(start))
  return _stepped(m, d, n, nstep, before)


def _stepped(m, d, n, nstep, before):
  """After `n` of `nstep` steps: warn of full buffers; on divergence warn and reset Data, as
  MuJoCo's autoreset does."""
  _warn_full(m, d, before)
  if n < nstep or not np.isfinite(d.qpos).all():
    t = d.time
    if not (m.opt.disableflags & mjtDisableBit.AUTORESET):
      io.reset_data(m, d)
    warnings.warn(f"simulation diverged at time {t:.6g} (step {n + 1} of {nstep}): "
                  "state reset", RuntimeWarning, stacklevel=3)
  return n


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
