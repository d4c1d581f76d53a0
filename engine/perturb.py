"""Mouse perturbation as MuJoCo's viewer applies it (mjv_initPerturb, mjv_applyPerturbPose,
mjv_applyPerturbForce), compiled so the step loop can apply it at every substep.

The viewer writes only the reference: `d.pert_select` (body), `d.pert_active` (bit 1 translate,
bit 2 rotate, as mjtPertBit), `d.pert_localpos` (grab point in the body frame), `d.pert_refpos`/
`d.pert_refquat` (reference pose of the body's inertial frame) and `d.pert_refselpos` (reference
grab point). `init_perturb` fills the reference and `pert_localmass` from the current pose; the
step writes the spring-damper wrench into `d.xfrc_perturb`, which is added to the user's
`xfrc_applied` (never written) wherever the latter is applied.
"""
import math

from numjoco.engine import constraint
from numjoco.engine import math as mm
from numjoco.engine import sensor
from numjoco.engine import smooth
from numjoco.engine._jit import inline, jit
from numjoco.engine.types import MINVAL, mjtJoint, mjtObj

TRANSLATE = 1   # mjPERT_TRANSLATE
ROTATE = 2      # mjPERT_ROTATE
_FREE = int(mjtJoint.FREE)
_BODY = int(mjtObj.BODY)


@jit
def _selpos(m, d, sel):
  """World position of the grab point."""
  l = d.pert_localpos
  r0, r1, r2 = mm.mat_vec(d.xmat[sel], l[0], l[1], l[2])
  return r0 + d.xpos[sel, 0], r1 + d.xpos[sel, 1], r2 + d.xpos[sel, 2]


@jit
def init_perturb(m, d):
  """Reference pose := current pose of the selected body; local mass at the grab point
  (3 / trace(J M^-1 J'), mjv_initPerturb). Needs kinematics and the factor of M (forward)."""
  sel = d.pert_select[0]
  if sel <= 0 or sel >= m.nbody:
    return
  s0, s1, s2 = _selpos(m, d, sel)
  jac = d.scratch_nv[0:6]
  x = d.scratch_nv[6]
  constraint.jac(m, d, jac, s0, s1, s2, sel)
  invmass = 0.0
  for r in range(3):
    smooth.solve_m(m, d, x, jac[r])
    for k in range(m.nv):
      invmass += jac[r, k] * x[k]
  d.pert_localmass[0] = 1.0 if invmass == 0.0 else 3.0 / max(invmass, MINVAL)
  for k in range(3):
    d.pert_refpos[k] = d.xipos[sel, k]
  q = d.xquat[sel]
  iq = m.body_iquat[sel]
  d.pert_refquat[0], d.pert_refquat[1], d.pert_refquat[2], d.pert_refquat[3] = mm.quat_mul(
      q[0], q[1], q[2], q[3], iq[0], iq[1], iq[2], iq[3])
  d.pert_refselpos[0], d.pert_refselpos[1], d.pert_refselpos[2] = s0, s1, s2


@jit
def _neg_pose(p, q):
  c0, c1, c2, c3 = q[0], -q[1], -q[2], -q[3]
  r0, r1, r2 = mm.quat_rot(c0, c1, c2, c3, p[0], p[1], p[2])
  return -r0, -r1, -r2, c0, c1, c2, c3


@jit
def _mul_pose(p1, q1, p2, q2):
  """(p1, q1) * (p2, q2) as tuples: position then quaternion."""
  r0, r1, r2 = mm.quat_rot(q1[0], q1[1], q1[2], q1[3], p2[0], p2[1], p2[2])
  w, x, y, z = mm.quat_mul(q1[0], q1[1], q1[2], q1[3], q2[0], q2[1], q2[2], q2[3])
  return (r0 + p1[0], r1 + p1[1], r2 + p1[2]), (w, x, y, z)


@jit
def apply_perturb_pose(m, d, paused):
  """Move a mocap body to the reference pose; while paused also a free body, or the free root
  of the selected body (mjv_applyPerturbPose). Kinematics must be current."""
  sel = d.pert_select[0]
  if sel <= 0 or sel >= m.nbody or d.pert_active[0] == 0:
    return
  b0, b1, b2, bq0, bq1, bq2, bq3 = _neg_pose(m.body_ipos[sel], m.body_iquat[sel])
  ref_p, ref_q = _mul_pose(d.pert_refpos, d.pert_refquat, (b0, b1, b2), (bq0, bq1, bq2, bq3))
  root = m.body_rootid[sel]
  mocap = m.body_mocapid[sel]
  if mocap >= 0:
    for k in range(3):
      d.mocap_pos[mocap, k] = ref_p[k]
    for k in range(4):
      d.mocap_quat[mocap, k] = ref_q[k]
  elif paused and m.body_jntnum[sel] == 1 and m.jnt_type[m.body_jntadr[sel]] == _FREE:
    a = m.jnt_qposadr[m.body_jntadr[sel]]
    for k in range(3):
      d.qpos[a + k] = ref_p[k]
    for k in range(4):
      d.qpos[a + 3 + k] = ref_q[k]
  elif paused and m.body_jntnum[root] == 1 and m.jnt_type[m.body_jntadr[root]] == _FREE:
    a = m.jnt_qposadr[m.body_jntadr[root]]
    c0, c1, c2, cq0, cq1, cq2, cq3 = _neg_pose(d.xpos[sel], d.xquat[sel])
    rp = (d.qpos[a], d.qpos[a + 1], d.qpos[a + 2])
    rq = (d.qpos[a + 3], d.qpos[a + 4], d.qpos[a + 5], d.qpos[a + 6])
    p2, q2 = _mul_pose((c0, c1, c2), (cq0, cq1, cq2, cq3), rp, rq)
    p3, q3 = _mul_pose(ref_p, ref_q, p2, q2)
    for k in range(3):
      d.qpos[a + k] = p3[k]
    for k in range(4):
      d.qpos[a + 3 + k] = q3[k]


@jit
def clear_perturb_force(m, d):
  """Zero d.xfrc_perturb (reads before it writes: released drags cost a scan, no stores)."""
  for b in range(m.nbody):
    for k in range(6):
      if d.xfrc_perturb[b, k] != 0.0:
        d.xfrc_perturb[b, k] = 0.0


@inline
def _axis(x0, x1, x2):
  """(|x|, x / |x|), the x axis when |x| < MINVAL (mju_normalize3, as mju_quat2Vel uses it)."""
  n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
  if n < MINVAL:
    return n, 1.0, 0.0, 0.0
  inv = 1.0 / n
  return n, x0 * inv, x1 * inv, x2 * inv


@jit
def apply_perturb_force(m, d):
  """Spring-damper wrench at the selected body into d.xfrc_perturb (mjv_applyPerturbForce,
  with MuJoCo's stiffnesses m.vis.map.stiffness/stiffnessrot scaled by the local mass and the
  body's rotational inertia). Uses the kinematics and velocities of the last forward pass."""
  clear_perturb_force(m, d)
  sel = d.pert_select[0]
  active = d.pert_active[0]
  if sel < 0 or sel >= m.nbody or active == 0:
    return
  f = d.xfrc_perturb[sel]
  # body velocity at its centre of mass, world frame (mj_objectVelocity, mjOBJ_BODY)
  w0, w1, w2, v0, v1, v2 = sensor.object_velocity(m, d, _BODY, sel, False)
  invweight = m.body_invweight0[sel, 1]
  inertia = 1.0 / max(MINVAL, invweight) if invweight != 0.0 else 1.0
  if active & TRANSLATE:
    s0, s1, s2 = _selpos(m, d, sel)
    df0 = s0 - d.pert_refselpos[0]
    df1 = s1 - d.pert_refselpos[1]
    df2 = s2 - d.pert_refselpos[2]
    k = m.vis_map_stiffness[0]
    lm = d.pert_localmass[0]
    a0 = s0 - d.xipos[sel, 0]
    a1 = s1 - d.xipos[sel, 1]
    a2 = s2 - d.xipos[sel, 2]
    sv0, sv1, sv2 = mm.cross(w0, w1, w2, a0, a1, a2)
    sv0, sv1, sv2 = sv0 + v0, sv1 + v1, sv2 + v2
    damp = -math.sqrt(k) * lm
    f[0] = -k * lm * df0 + damp * sv0
    f[1] = -k * lm * df1 + damp * sv1
    f[2] = -k * lm * df2 + damp * sv2
    f[3], f[4], f[5] = mm.cross(a0, a1, a2, f[0], f[1], f[2])
    kr = m.vis_map_stiffnessrot[0]
    n, df0, df1, df2 = _axis(df0, df1, df2)
    t = -math.sqrt(kr) * inertia * (df0 * w0 + df1 * w1 + df2 * w2)
    f[3] += t * df0
    f[4] += t * df1
    f[5] += t * df2
  if active & ROTATE:
    kr = m.vis_map_stiffnessrot[0]
    q = d.xquat[sel]
    iq = m.body_iquat[sel]
    x0, x1, x2, x3 = mm.quat_mul(q[0], q[1], q[2], q[3], iq[0], iq[1], iq[2], iq[3])
    r = d.pert_refquat
    q0, q1, q2, q3 = mm.quat_mul(r[0], r[1], r[2], r[3], x0, -x1, -x2, -x3)
    # mju_quat2Vel with dt = 1 / (stiffness * inertia)
    s, ax0, ax1, ax2 = _axis(q1, q2, q3)
    speed = 2.0 * math.atan2(s, q0)
    if speed > math.pi:
      speed -= 2.0 * math.pi
    speed /= 1.0 / (kr * inertia)
    damp = -math.sqrt(kr) * inertia
    # MuJoCo 4 adds the rotation spring to the translation's torque when both are active
    f[3] += ax0 * speed + damp * w0
    f[4] += ax1 * speed + damp * w1
    f[5] += ax2 * speed + damp * w2
