"""Newton-style articulation helpers over MuJoCo's joint layout: eval_fk (body poses and twists
from qpos, qvel), eval_ik (qpos, qvel back from body poses and twists), joint_q_start and
joint_qd_start (per-joint offsets into qpos and qvel).

Conventions: a body pose is (x, y, z, qw, qx, qy, qz) in the world frame (MuJoCo's xpos, xquat);
a body twist is (angular velocity, linear velocity of the body frame's origin), both in the world
frame.
"""
import numpy as np

from numjoco.engine import rotation
from numjoco.engine import smooth
from numjoco.engine.types import mjtJoint

_FREE, _BALL, _SLIDE, _HINGE = (int(mjtJoint.FREE), int(mjtJoint.BALL), int(mjtJoint.SLIDE),
                                int(mjtJoint.HINGE))
_NQ = {_FREE: 7, _BALL: 4, _SLIDE: 1, _HINGE: 1}
_NV = {_FREE: 6, _BALL: 3, _SLIDE: 1, _HINGE: 1}


def joint_q_start(m):
  """Start of each joint's coordinates in qpos, with qpos's size appended (njnt + 1,), so joint j
  owns qpos[start[j]:start[j + 1]] (Newton's Model.joint_q_start over jnt_qposadr)."""
  return np.append(np.asarray(m.jnt_qposadr, dtype=np.int64), m.nq)


def joint_qd_start(m):
  """Start of each joint's dofs in qvel, with nv appended (njnt + 1,) (Newton's
  Model.joint_qd_start over jnt_dofadr)."""
  return np.append(np.asarray(m.jnt_dofadr, dtype=np.int64), m.nv)


def _rotate(v, q):
  """v rotated by unit quaternion q, as an array."""
  return np.array(rotation.rot_vec_quat(v, q))


def _body_fk(m, b, ppos, pquat, qpos):
  """Pose of body b from its parent's pose and qpos (the per-body step of mj_kinematics)."""
  jadr, jnum = m.body_jntadr[b], m.body_jntnum[b]
  if jnum and m.jnt_type[jadr] == _FREE:
    a = m.jnt_qposadr[jadr]
    q = qpos[a + 3:a + 7]
    return qpos[a:a + 3].copy(), q / np.linalg.norm(q)
  pos = ppos + _rotate(m.body_pos[b], pquat)
  quat = rotation.quat_mul(pquat, m.body_quat[b])
  for j in range(jadr, jadr + jnum):
    jt, a = m.jnt_type[j], m.jnt_qposadr[j]
    if jt == _SLIDE:
      pos = pos + _rotate(m.jnt_axis[j], quat) * (qpos[a] - m.qpos0[a])
      continue
    anchor = pos + _rotate(m.jnt_pos[j], quat)
    if jt == _BALL:
      r = qpos[a:a + 4] / np.linalg.norm(qpos[a:a + 4])
    else:
      r = rotation.axis_angle(m.jnt_axis[j], qpos[a] - m.qpos0[a])
    quat = rotation.quat_mul(quat, r)
    quat /= np.linalg.norm(quat)
    pos = anchor - _rotate(m.jnt_pos[j], quat)
  return pos, quat


def eval_fk(m, d):
  """Forward kinematics only (kinematics, com_pos, com_vel): fills xpos, xquat, xmat, cvel and
  returns (body_pose (nbody, 7), body_vel (nbody, 6)) in this module's conventions."""
  if d.qpos.shape != (m.nq,) or d.qvel.shape != (m.nv,):
    raise ValueError(f"Data does not match the model: qpos {d.qpos.shape}, qvel {d.qvel.shape}, "
                     f"model nq={m.nq} nv={m.nv}")
  smooth.kinematics(m.struct, d.struct)
  smooth.com_pos(m.struct, d.struct)
  smooth.com_vel(m.struct, d.struct)
  pose = np.concatenate([d.xpos, d.xquat], axis=1)
  c = d.subtree_com[m.body_rootid]
  w, v = d.cvel[:, :3], d.cvel[:, 3:]
  vel = np.concatenate([w, v + np.cross(w, d.xpos - c)], axis=1)
  return pose, vel


def _check(name, a, n, k):
  a = np.asarray(a, dtype=np.float64)
  if a.shape != (n, k):
    raise ValueError(f"{name} must have shape ({n}, {k}) (nbody, {k}), got {a.shape}")
  if not np.isfinite(a).all():
    raise ValueError(f"{name} has non-finite entries")
  return a


def _solve_body(m, b, ppos, pquat, tpos, tquat, qpos):
  """qpos of body b's joints (several, general case) by Gauss-Newton on the pose error,
  starting from the current qpos and from qpos0; keeps the best."""
  jadr, jnum = m.body_jntadr[b], m.body_jntnum[b]
  idx = []
  for j in range(jadr, jadr + jnum):
    a = m.jnt_qposadr[j]
    idx += list(range(a, a + _NQ[int(m.jnt_type[j])]))
  idx = np.array(idx)
  ball = [m.jnt_qposadr[j] for j in range(jadr, jadr + jnum) if m.jnt_type[j] == _BALL]

  def err(q):
    pos, quat = _body_fk(m, b, ppos, pquat, q)
    turn = rotation.quat_mul(rotation.conj(quat), tquat)
    return np.concatenate([pos - tpos, rotation.rotvec(turn)])

  best, best_e = None, np.inf
  for start in (qpos.copy(), m.qpos0.copy()):
    q = start.copy()
    q[idx] = start[idx]
    for _ in range(100):
      e = err(q)
      if np.linalg.norm(e) < 1e-14:
        break
      # Jacobian over the body's coordinates (balls as quaternions, renormalized by fk)
      J = np.empty((6, len(idx)))
      for c, k in enumerate(idx):
        dq = q.copy()
        dq[k] += 1e-7
        J[:, c] = (err(dq) - e) / 1e-7
      step = np.linalg.lstsq(J, -e, rcond=None)[0]
      q[idx] += step
      for a in ball:
        q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
      if np.linalg.norm(step) < 1e-13:
        break
    en = np.linalg.norm(err(q))
    if en < best_e:
      best, best_e = q, en
    if en < 1e-10:
      break
  return best[idx], idx


def eval_ik(m, d, body_pose, body_vel):
  """Inverse of eval_fk: d.qpos, d.qvel from world body poses (nbody, 7: pos, quat) and twists
  (nbody, 6: angular velocity, velocity of the body origin, world frame). One joint per body is
  solved in closed form; several joints on one body by a local Gauss-Newton fit (exact when the
  chain determines the pose uniquely). Leaves eval_fk's fields (xpos, cvel, ...) current."""
  body_pose = _check("body_pose", body_pose, m.nbody, 7)
  body_vel = _check("body_vel", body_vel, m.nbody, 6)
  qpos = np.array(d.qpos, dtype=np.float64)
  for b in range(1, m.nbody):
    jadr, jnum = m.body_jntadr[b], m.body_jntnum[b]
    if jnum == 0:
      continue
    p = m.body_parentid[b]
    ppos, pquat = body_pose[p, :3], body_pose[p, 3:] / np.linalg.norm(body_pose[p, 3:])
    tpos, tquat = body_pose[b, :3], body_pose[b, 3:] / np.linalg.norm(body_pose[b, 3:])
    jt = int(m.jnt_type[jadr])
    a = m.jnt_qposadr[jadr]
    if jnum == 1 and jt == _FREE:
      qpos[a:a + 3] = tpos
      qpos[a + 3:a + 7] = tquat
      continue
    fpos = ppos + _rotate(m.body_pos[b], pquat)
    fquat = rotation.quat_mul(pquat, m.body_quat[b])
    rel = rotation.quat_mul(rotation.conj(fquat), tquat)   # joint rotation in the body's frame
    if jnum == 1 and jt == _BALL:
      qpos[a:a + 4] = rel
    elif jnum == 1 and jt == _HINGE:
      ax = m.jnt_axis[jadr] / np.linalg.norm(m.jnt_axis[jadr])
      qpos[a] = m.qpos0[a] + 2.0 * np.arctan2(rel[1:] @ ax, rel[0])
    elif jnum == 1 and jt == _SLIDE:
      ax = m.jnt_axis[jadr] / np.linalg.norm(m.jnt_axis[jadr])
      qpos[a] = m.qpos0[a] + _rotate(tpos - fpos, rotation.conj(fquat)) @ ax
    else:
      vals, idx = _solve_body(m, b, ppos, pquat, tpos, tquat, qpos)
      qpos[idx] = vals
  d.qpos[:] = qpos
  # velocities: with the poses in place, cvel(b) - cvel(parent) = cdof(b's dofs) qvel(b's dofs)
  smooth.kinematics(m.struct, d.struct)
  smooth.com_pos(m.struct, d.struct)
  c = d.subtree_com[m.body_rootid]
  w = body_vel[:, :3]
  cvel = np.concatenate([w, body_vel[:, 3:] + np.cross(w, c - body_pose[:, :3])], axis=1)
  qvel = np.zeros(m.nv)
  for b in range(1, m.nbody):
    n = m.body_dofnum[b]
    if n == 0:
      continue
    adr = m.body_dofadr[b]
    rel = cvel[b] - cvel[m.body_parentid[b]]
    qvel[adr:adr + n] = np.linalg.lstsq(d.cdof[adr:adr + n].T, rel, rcond=None)[0]
  d.qvel[:] = qvel
  smooth.com_vel(m.struct, d.struct)
