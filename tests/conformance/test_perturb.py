"""Mouse perturbation against MuJoCo's mjv_initPerturb / mjv_applyPerturbForce /
mjv_applyPerturbPose, and its use inside `step` (a separate buffer added to xfrc_applied)."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from tests.models import models_of, random_pos_vel

XML = """<mujoco>
  <option timestep="0.002"/>
  <worldbody><geom type="plane" size="3 3 .1"/>
    <body name="free" pos="0 0 1" euler="10 20 30"><freejoint/>
      <geom type="box" size=".1 .2 .3" pos=".05 0 0"/>
      <body name="child" pos="0 .3 0"><joint type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 .4 0" size=".05"/></body></body>
    <body name="arm" pos="1 0 1"><joint type="hinge" axis="0 1 0" damping=".1"/>
      <geom type="capsule" fromto="0 0 0 .5 0 0" size=".05"/>
      <body pos=".5 0 0"><joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04"/></body></body>
    <body name="mocap" mocap="true" pos="-1 0 .5"><geom type="sphere" size=".1" contype="0"/></body>
  </worldbody></mujoco>"""


@pytest.fixture(scope="module")
def models():
  return models_of(XML)


def _both(models, seed):
  m, mjm = models
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  random_pos_vel(mjm, mjd, rng, 0.2)
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  return m, mjm, d, mjd, rng


def _mj_perturb(mjm, mjd, body, localpos, active):
  pert = mujoco.MjvPerturb()
  mujoco.mjv_defaultPerturb(pert)
  pert.select = body
  pert.localpos[:] = localpos
  scn = mujoco.MjvScene(mjm, maxgeom=100)
  cam = mujoco.MjvCamera()
  mujoco.mjv_updateScene(mjm, mjd, mujoco.MjvOption(), pert, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
  mujoco.mjv_initPerturb(mjm, mjd, scn, pert)
  pert.active = active
  return pert


def _our_perturb(m, d, body, localpos, active):
  d.pert_select[0] = body
  d.pert_localpos[:] = localpos
  numjoco.init_perturb(m, d)
  d.pert_active[0] = active


@pytest.mark.parametrize("body", ["free", "child", "arm"])
@pytest.mark.parametrize("active", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_force_law(models, body, active, seed):
  """Same reference (moved away from the body), same wrench as mjv_applyPerturbForce."""
  m, mjm, d, mjd, rng = _both(models, seed)
  b = numjoco.name2id(m, "body", body)
  localpos = rng.normal(size=3) * 0.1
  pert = _mj_perturb(mjm, mjd, b, localpos, active)
  _our_perturb(m, d, b, localpos, active)
  np.testing.assert_allclose(d.pert_localmass[0], pert.localmass, rtol=1e-10)
  np.testing.assert_allclose(d.pert_refselpos, pert.refselpos, rtol=1e-12, atol=1e-14)
  np.testing.assert_allclose(d.pert_refquat, pert.refquat, rtol=1e-12, atol=1e-14)
  # drag: move the reference point and turn the reference orientation
  shift, turn = rng.normal(size=3) * 0.3, rng.normal(size=4) * 0.3
  pert.refselpos[:] = pert.refselpos + shift
  q = pert.refquat + turn
  pert.refquat[:] = q / np.linalg.norm(q)
  d.pert_refselpos[:] = pert.refselpos
  d.pert_refquat[:] = pert.refquat
  mjd.xfrc_applied[:] = 0
  mujoco.mjv_applyPerturbForce(mjm, mjd, pert)
  numjoco.apply_perturb_force(m, d)
  assert np.abs(mjd.xfrc_applied[b]).max() > 1e-3
  np.testing.assert_allclose(d.xfrc_perturb, mjd.xfrc_applied, rtol=1e-9, atol=1e-10)
  assert np.all(d.xfrc_applied == 0)  # the user's buffer is never written


@pytest.mark.parametrize("body", ["free", "child", "mocap"])
def test_pose_paused(models, body):
  """While paused a drag moves free bodies (or the free root) and mocap bodies kinematically."""
  m, mjm, d, mjd, rng = _both(models, 3)
  b = numjoco.name2id(m, "body", body)
  pert = _mj_perturb(mjm, mjd, b, np.zeros(3), 1)
  _our_perturb(m, d, b, np.zeros(3), 1)
  pert.refpos[:] = pert.refpos + [0.2, -0.1, 0.3]
  d.pert_refpos[:] = pert.refpos
  mujoco.mjv_applyPerturbPose(mjm, mjd, pert, 1)
  numjoco.apply_perturb_pose(m, d, True)
  np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=1e-12, atol=1e-14)
  np.testing.assert_allclose(d.mocap_pos, mjd.mocap_pos, rtol=1e-12, atol=1e-14)
  np.testing.assert_allclose(d.mocap_quat, mjd.mocap_quat, rtol=1e-12, atol=1e-14)
  moved = mjd.qpos if body != "mocap" else mjd.mocap_pos
  assert not np.allclose(moved, (mujoco.MjData(mjm).qpos if body != "mocap" else [[-1, 0, .5]]))


def test_step_applies_spring_every_substep(models):
  """MuJoCo's simulate loop (apply force from the last step's kinematics, then mj_step) against
  ours inside one step(m, d, n) call; the user's xfrc_applied on another body is kept."""
  m, mjm, d, mjd, rng = _both(models, 4)
  b = numjoco.name2id(m, "body", "arm")
  other = numjoco.name2id(m, "body", "free")
  user = np.array([0.5, -0.2, 1.0, 0.01, 0.02, -0.03])
  pert = _mj_perturb(mjm, mjd, b, [0.3, 0, 0], 1)
  _our_perturb(m, d, b, [0.3, 0, 0], 1)
  pert.refselpos[:] = pert.refselpos + [0, 0, 0.4]
  d.pert_refselpos[:] = pert.refselpos
  d.xfrc_applied[other] = user
  for _ in range(50):
    mjd.xfrc_applied[:] = 0
    mjd.xfrc_applied[other] = user
    mujoco.mjv_applyPerturbForce(mjm, mjd, pert)
    frc = mjd.xfrc_applied[b].copy()
    mujoco.mj_step(mjm, mjd)
  numjoco.step(m, d, 50)
  np.testing.assert_allclose(d.xfrc_perturb[b], frc, rtol=1e-6, atol=1e-8)
  np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=1e-7, atol=1e-9)
  np.testing.assert_array_equal(d.xfrc_applied[other], user)
  assert np.all(d.xfrc_applied[b] == 0)
  # release: the buffer empties at the next step, the user's force stays
  d.pert_active[0] = 0
  numjoco.step(m, d, 1)
  assert np.all(d.xfrc_perturb == 0)
  np.testing.assert_array_equal(d.xfrc_applied[other], user)


def test_drag_pulls_body_towards_reference(models):
  """Analytic sanity: a hinged arm dragged upwards rises towards the reference point."""
  m, _, d, _, _ = _both(models, 5)
  b = numjoco.name2id(m, "body", "arm")
  d.qvel[:] = 0
  numjoco.forward(m, d)
  _our_perturb(m, d, b, [0.4, 0, 0], 1)
  start = d.xpos[b] + d.xmat[b].reshape(3, 3) @ [0.4, 0, 0]
  d.pert_refselpos[:] = start + [0, 0, 0.3]
  numjoco.step(m, d, 500)
  numjoco.forward(m, d)
  end = d.xpos[b] + d.xmat[b].reshape(3, 3) @ [0.4, 0, 0]
  assert end[2] > start[2] + 0.1
