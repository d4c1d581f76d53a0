"""Implicit and implicitfast integrators against MuJoCo: qDeriv (mjd_smooth_vel) and qpos/qvel
after one step, and 300-step rollouts on suite models and models with velocity-dependent forces."""
import os

import mujoco
import numpy as np
import pytest

import engine
from engine import interop, io

INTEGRATORS = {"implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
STEP_TOL = 1e-10
ROLLOUT_TOL = 1e-6

# velocity-dependent actuators, joint / dof / tendon damping (with polynomial terms and damping
# inherited from actuators), filter dynamics with actearly, a clamped force range, a ball joint
ACTUATED_XML = """
<mujoco>
  <option timestep="0.005"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="base" pos="0 0 1">
      <joint name="slide" type="slide" axis="1 0 0" damping="0.4"/>
      <geom type="box" size=".2 .1 .1" mass="2"/>
      <body name="arm" pos=".2 0 0">
        <joint name="hinge1" axis="0 1 0" damping="0.2 0.3 0.1"/>
        <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04"/>
        <body name="forearm" pos=".4 0 0">
          <joint name="ball" type="ball" damping="0.05"/>
          <geom type="ellipsoid" size=".3 .05 .08" pos=".3 0 0"/>
          <body name="hand" pos=".6 0 0">
            <joint name="hinge2" axis="0 0 1"/>
            <geom type="box" size=".05 .08 .02" pos=".05 0 0"/>
          </body>
        </body>
      </body>
    </body>
    <body name="pend" pos="1 0 1">
      <joint name="hinge3" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.5" size=".05"/>
      <body pos="0 0 -.5">
        <joint name="hinge4" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 .3 -.3" size=".04"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="ten" damping="0.3 0.2 0.05">
      <joint joint="hinge1" coef="1"/>
      <joint joint="hinge2" coef="-0.5"/>
    </fixed>
    <fixed name="ten2">
      <joint joint="hinge3" coef="1"/>
      <joint joint="hinge4" coef="0.7"/>
    </fixed>
  </tendon>
  <actuator>
    <position joint="slide" kp="20" kv="3" ctrlrange="-1 1"/>
    <velocity joint="hinge1" kv="2" ctrlrange="-1 1"/>
    <motor joint="hinge2" gear="2" ctrlrange="-1 1"/>
    <position tendon="ten" kp="5" kv="1.5" ctrlrange="-1 1"/>
    <velocity tendon="ten2" kv="0.8" ctrlrange="-1 1"/>
    <general joint="hinge3" dyntype="filter" dynprm="0.05" gaintype="affine" gainprm="2 0 -0.7"
             biastype="affine" biasprm="0 -1 -0.4" actearly="true" ctrlrange="-1 1"/>
    <general joint="hinge4" dyntype="integrator" gaintype="affine" gainprm="1 0 0.3"
             biastype="affine" biasprm="0 0 -0.5" ctrlrange="-1 1" actlimited="true"
             actrange="-2 2"/>
    <velocity joint="hinge4" kv="1" forcerange="-0.05 0.05" ctrlrange="-1 1"/>
    <motor joint="hinge1" gear="1.5" damping="0.25 0.1" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""

# standalone free bodies (local 6x6 solve in implicitfast, gyroscopic derivative) with offset
# and rotated inertia, damping on the free joint, and a free body carrying a chain
FREE_XML = """
<mujoco>
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="spinner" pos="0 0 1">
      <freejoint/>
      <inertial pos=".05 -.02 .03" quat="0.9 0.2 0.3 0.1" mass="1.5" diaginertia=".3 .2 .15"/>
      <geom type="box" size=".3 .1 .05"/>
    </body>
    <body name="damped" pos="1 0 1">
      <joint type="free" damping="0.2"/>
      <geom type="ellipsoid" size=".2 .1 .05" pos=".1 0 0"/>
    </body>
    <body name="tree" pos="2 0 1">
      <freejoint/>
      <geom type="box" size=".1 .1 .1"/>
      <body pos=".2 0 0">
        <joint axis="0 1 0" damping=".1"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

FLUID_XML = """
<mujoco>
  <option density="1000" viscosity="0.01" wind="0.3 -0.2 0.1"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body pos="0 0 1">
      <joint type="ball"/>
      <geom type="box" size=".2 .1 .05"/>
      <body pos=".3 0 0">
        <joint axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </body>
    <body pos="1 0 1">
      <freejoint/>
      <geom type="ellipsoid" size=".2 .1 .05"/>
    </body>
  </worldbody>
</mujoco>
"""


def _suite_model(name):
  """A dm_control suite model by name, as compiled by MuJoCo."""
  import dm_control.suite
  if name == "swimmer":
    from dm_control.suite import swimmer
    xml, assets = swimmer.get_model_and_assets(6)
    return mujoco.MjModel.from_xml_string(xml, assets)
  path = os.path.join(os.path.dirname(dm_control.suite.__file__), name + ".xml")
  return mujoco.MjModel.from_xml_path(path)


def _setup(mjm, integrator, seed=0, qvel_scale=1.0):
  """MuJoCo model/data with constraints off and a random state; our copies of both."""
  mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
  mjm.opt.integrator = INTEGRATORS[integrator]
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + 0.3 * rng.standard_normal(mjm.nq)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = qvel_scale * rng.standard_normal(mjm.nv)
  mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
  if mjm.na:
    mjd.act[:] = rng.uniform(-0.5, 0.5, mjm.na)
  m = interop.model_from_mujoco(mjm)
  d = io.make_data(m)
  interop.data_from_mujoco(mjd, d)
  return mjm, mjd, m, d, rng


def _one_step(mjm, integrator, seed=0, qvel_scale=1.0):
  """One step on both engines; returns (mjm, mjd, m, d)."""
  mjm, mjd, m, d, _ = _setup(mjm, integrator, seed, qvel_scale)
  mujoco.mj_step(mjm, mjd)
  engine.step(m, d)
  return mjm, mjd, m, d


def _check_step(mjm, mjd, d):
  """qDeriv, qpos and qvel after one step agree with MuJoCo."""
  scale = max(1.0, np.abs(mjd.qDeriv).max())
  np.testing.assert_allclose(d.qDeriv, mjd.qDeriv, rtol=0, atol=1e-12 * scale)
  np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=0, atol=STEP_TOL)
  np.testing.assert_allclose(d.qvel, mjd.qvel, rtol=0, atol=STEP_TOL)
  np.testing.assert_allclose(d.act, mjd.act, rtol=0, atol=STEP_TOL)


def _rollout(mjm, integrator, nstep=300, seed=1, qvel_scale=1.0):
  """Max |qpos| and |qvel| differences over an nstep rollout with random ctrl."""
  mjm, mjd, m, d, rng = _setup(mjm, integrator, seed, qvel_scale)
  err_q = err_v = 0.0
  for _ in range(nstep):
    ctrl = rng.uniform(-1, 1, mjm.nu)
    mjd.ctrl[:] = ctrl
    d.ctrl[:] = ctrl
    mujoco.mj_step(mjm, mjd)
    engine.step(m, d)
    err_q = max(err_q, np.abs(d.qpos - mjd.qpos).max())
    err_v = max(err_v, np.abs(d.qvel - mjd.qvel).max())
  return err_q, err_v


SUITE = ["cartpole", "acrobot", "pendulum", "reacher", "cheetah", "walker", "hopper", "humanoid",
         "swimmer"]
CUSTOM = {"actuated": ACTUATED_XML, "free": FREE_XML, "fluid": FLUID_XML}


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("name", SUITE + list(CUSTOM))
def test_one_step(name, integrator):
  mjm = (mujoco.MjModel.from_xml_string(CUSTOM[name]) if name in CUSTOM else _suite_model(name))
  mjm, mjd, m, d = _one_step(mjm, integrator, qvel_scale=3.0)
  _check_step(mjm, mjd, d)


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("name", SUITE + list(CUSTOM))
def test_rollout(name, integrator):
  mjm = (mujoco.MjModel.from_xml_string(CUSTOM[name]) if name in CUSTOM else _suite_model(name))
  err_q, err_v = _rollout(mjm, integrator)
  assert err_q <= ROLLOUT_TOL, (name, integrator, err_q, err_v)


def test_qderiv_matters():
  """On the damped actuated model, implicit moves measurably differently from explicit Euler, so
  the comparisons above would catch an integrator that ignored qDeriv."""
  mjm = mujoco.MjModel.from_xml_string(ACTUATED_XML)
  mjm, mjd, _, _, _ = _setup(mjm, "implicit", qvel_scale=3.0)
  mjd_e = mujoco.MjData(mjm)
  mjd_e.qpos[:], mjd_e.qvel[:], mjd_e.ctrl[:], mjd_e.act[:] = mjd.qpos, mjd.qvel, mjd.ctrl, mjd.act
  mujoco.mj_step(mjm, mjd)
  mjm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
  mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
  mujoco.mj_step(mjm, mjd_e)
  assert np.abs(mjd.qvel - mjd_e.qvel).max() > 1e4 * STEP_TOL
