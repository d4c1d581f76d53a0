"""Newton-style articulation helpers: eval_fk against MuJoCo's kinematics, eval_ik as its
inverse (round trip on every joint type), joint_q_start / joint_qd_start against MuJoCo's
addresses."""
import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import load_both, models_of, quat_adrs

JOINTS_XML = """
<mujoco>
  <worldbody>
    <body name="free" pos="0 0 1"><freejoint/><geom size=".1"/>
      <body name="ball" pos=".2 0 0"><joint type="ball" pos=".05 0 0"/><geom size=".05"/>
        <body name="hinge" pos="0 .2 0" quat="0.9 0.1 0.2 0.3">
          <joint type="hinge" axis="1 1 0" pos="0 0 .1" ref="20"/><geom size=".05"/>
          <body name="slide" pos="0 0 .2"><joint type="slide" axis="0 1 1" ref=".1"/>
            <geom size=".05"/></body>
        </body>
      </body>
    </body>
    <body name="planar" pos="1 0 .5">
      <joint name="rx" type="slide" axis="1 0 0"/><joint name="rz" type="slide" axis="0 0 1"/>
      <joint name="ry" type="hinge" axis="0 1 0" pos="0 0 .1"/><geom size=".1"/>
      <body name="hip" pos="0 0 -.2">
        <joint type="hinge" axis="1 0 0"/><joint type="hinge" axis="0 0 1"/>
        <joint type="hinge" axis="0 1 0"/><geom size=".05"/>
        <body name="weld" pos="0 0 -.2"><geom size=".05"/></body>
      </body>
    </body>
    <body name="b2" pos="-1 0 .5"><joint type="ball"/><geom size=".1"/>
      <body pos="0 0 -.2"><joint type="hinge" axis="0 1 0"/><joint type="slide" axis="1 0 0"/>
        <geom size=".05"/></body>
    </body>
  </worldbody>
</mujoco>
"""


def _random(mjm, seed):
  rng = np.random.default_rng(seed)
  mjd = mujoco.MjData(mjm)
  mjd.qpos[:] = mjm.qpos0 + rng.uniform(-0.8, 0.8, size=mjm.nq)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  return mjd


def _quat_sign(mjm, q):
  """qpos with every free/ball quaternion on the w >= 0 hemisphere."""
  q = np.array(q)
  for a in quat_adrs(mjm):
    if q[a] < 0:
      q[a:a + 4] *= -1
  return q


def _fk(seed):
  """(m, mjm, mjd, d, pose, vel): JOINTS_XML at the random state `_random(mjm, seed)`, our
  Data at it and eval_fk's poses and twists."""
  m, mjm = models_of(JOINTS_XML)
  mjd = _random(mjm, seed)
  d = numjoco.make_data(m)
  d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
  pose, vel = numjoco.eval_fk(m, d)
  return m, mjm, mjd, d, pose, vel


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eval_fk_matches_mujoco(seed):
  """Poses are MuJoCo's xpos/xquat; twists are cvel moved to the body origin."""
  m, mjm, mjd, d, pose, vel = _fk(seed)
  mujoco.mj_kinematics(mjm, mjd)
  mujoco.mj_comPos(mjm, mjd)
  mujoco.mj_comVel(mjm, mjd)
  np.testing.assert_allclose(pose[:, :3], mjd.xpos, atol=1e-12)
  np.testing.assert_allclose(pose[:, 3:], mjd.xquat, atol=1e-12)
  np.testing.assert_allclose(d.xmat, mjd.xmat, atol=1e-12)
  np.testing.assert_allclose(d.cvel, mjd.cvel, atol=1e-12)
  # the twist in MuJoCo's own terms: mj_objectVelocity (world frame, at the body origin)
  for b in range(mjm.nbody):
    v = np.zeros(6)
    mujoco.mj_objectVelocity(mjm, mjd, mujoco.mjtObj.mjOBJ_XBODY, b, v, 0)
    np.testing.assert_allclose(vel[b], v, atol=1e-12)


def test_twist_is_the_time_derivative_of_the_pose():
  """Finite difference of the pose along qvel gives the twist (analytic definition)."""
  m, mjm, mjd, d, pose0, vel = _fk(4)
  h = 1e-7
  q = mjd.qpos.copy()
  mujoco.mj_integratePos(mjm, q, mjd.qvel, h)
  d.qpos[:] = q
  pose1, _ = numjoco.eval_fk(m, d)
  np.testing.assert_allclose((pose1[:, :3] - pose0[:, :3]) / h, vel[:, 3:], atol=1e-5)
  for b in range(1, mjm.nbody):
    dq = np.zeros(3)
    mujoco.mju_subQuat(dq, pose1[b, 3:], pose0[b, 3:])   # body-frame rotation vector
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, pose0[b, 3:])
    np.testing.assert_allclose(R.reshape(3, 3) @ dq / h, vel[b, :3], atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_round_trip_every_joint_type(seed):
  """qpos, qvel -> eval_fk -> eval_ik (from qpos0, zero qvel) -> the same qpos, qvel."""
  m, mjm, mjd, d, pose, vel = _fk(seed)
  d2 = numjoco.make_data(m)
  numjoco.eval_ik(m, d2, pose, vel)
  np.testing.assert_allclose(_quat_sign(mjm, d2.qpos), _quat_sign(mjm, mjd.qpos), atol=1e-9)
  np.testing.assert_allclose(d2.qvel, mjd.qvel, atol=1e-9)
  pose2, vel2 = numjoco.eval_fk(m, d2)
  np.testing.assert_allclose(pose2[:, :3], pose[:, :3], atol=1e-9)
  np.testing.assert_allclose(vel2, vel, atol=1e-9)


@pytest.mark.parametrize("name", ["humanoid", "cheetah"])
def test_round_trip_suite_models(name):
  """Humanoid (free root, three-hinge hips) and cheetah (slide-slide-hinge root)."""
  m, mjm = load_both(name)
  mjd = _random(mjm, 7)
  mjd.qpos[:] = mjm.qpos0 + (mjd.qpos - mjm.qpos0) * 0.5
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  d = numjoco.make_data(m)
  d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
  pose, vel = numjoco.eval_fk(m, d)
  d2 = numjoco.make_data(m)
  numjoco.eval_ik(m, d2, pose, vel)
  np.testing.assert_allclose(_quat_sign(mjm, d2.qpos), _quat_sign(mjm, mjd.qpos), atol=1e-9)
  np.testing.assert_allclose(d2.qvel, mjd.qvel, atol=1e-9)


def test_joint_starts_match_mujoco():
  m, mjm = models_of(JOINTS_XML)
  qs, qds = numjoco.joint_q_start(m), numjoco.joint_qd_start(m)
  assert qs.shape == (mjm.njnt + 1,) and qds.shape == (mjm.njnt + 1,)
  np.testing.assert_array_equal(qs[:-1], mjm.jnt_qposadr)
  np.testing.assert_array_equal(qds[:-1], mjm.jnt_dofadr)
  nq = {0: 7, 1: 4, 2: 1, 3: 1}
  nv = {0: 6, 1: 3, 2: 1, 3: 1}
  np.testing.assert_array_equal(np.diff(qs), [nq[t] for t in mjm.jnt_type])
  np.testing.assert_array_equal(np.diff(qds), [nv[t] for t in mjm.jnt_type])


def test_bad_shapes_are_refused():
  m, _ = models_of(JOINTS_XML)
  d = numjoco.make_data(m)
  pose, vel = numjoco.eval_fk(m, d)
  with pytest.raises(ValueError, match="body_pose"):
    numjoco.eval_ik(m, d, pose[1:], vel)
  with pytest.raises(ValueError, match="body_vel"):
    numjoco.eval_ik(m, d, pose, vel[:, :3])
  bad = pose.copy()
  bad[1, 0] = np.nan
  with pytest.raises(ValueError, match="non-finite"):
    numjoco.eval_ik(m, d, bad, vel)
