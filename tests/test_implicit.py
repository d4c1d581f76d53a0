"""Implicit and implicitfast integrators against MuJoCo: qDeriv (mjd_smooth_vel) and qpos/qvel
after one step, and 300-step rollouts on suite models and models with velocity-dependent forces."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop, io
from tests.models import suite_mjmodel

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
  numjoco.step(m, d)
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
    numjoco.step(m, d)
    err_q = max(err_q, np.abs(d.qpos - mjd.qpos).max())
    err_v = max(err_v, np.abs(d.qvel - mjd.qvel).max())
  return err_q, err_v


SUITE = ["cartpole", "acrobot", "pendulum", "reacher", "cheetah", "walker", "hopper", "humanoid",
         "swimmer"]
CUSTOM = {"actuated": ACTUATED_XML, "free": FREE_XML, "fluid": FLUID_XML}


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("name", SUITE + list(CUSTOM))
def test_one_step(name, integrator):
  mjm = (mujoco.MjModel.from_xml_string(CUSTOM[name]) if name in CUSTOM else suite_mjmodel(name))
  mjm, mjd, m, d = _one_step(mjm, integrator, qvel_scale=3.0)
  _check_step(mjm, mjd, d)


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("name", SUITE + list(CUSTOM))
def test_rollout(name, integrator):
  mjm = (mujoco.MjModel.from_xml_string(CUSTOM[name]) if name in CUSTOM else suite_mjmodel(name))
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


# ------------------------------------------------------------------------------------------------
# actuators whose force is clamped contribute no velocity derivative (MuJoCo)

DATA = os.path.join(os.path.dirname(__file__), "data")


def _mj_model(path_or_xml):
  """MuJoCo's model from an MJCF file path or string."""
  if path_or_xml.lstrip().startswith("<"):
    return mujoco.MjModel.from_xml_string(path_or_xml)
  return mujoco.MjModel.from_xml_path(path_or_xml)


def _clamp_step(mjm, integrator, qvel, ctrl):
  """One step from qpos0 with the given qvel and ctrl on both engines; (mjd, d, mjd0)."""
  mjm.opt.integrator = INTEGRATORS[integrator]
  m = interop.model_from_mujoco(mjm)
  mjd = mujoco.MjData(mjm)
  mjd.qvel[:] = qvel
  mjd.ctrl[:] = ctrl
  d = io.make_data(m)
  interop.data_from_mujoco(mjd, d)
  mjd0 = mujoco.MjData(mjm)
  mjd0.qvel[:], mjd0.ctrl[:] = qvel, ctrl
  mujoco.mj_forward(mjm, mjd0)
  mujoco.mj_step(mjm, mjd)
  numjoco.step(m, d)
  return mjd, d, mjd0


# joint_force_clamp.xml: a motor and a damper (kv=10) on a hinge with actuatorfrcrange -.4 .4;
# (ctrl, qvel) with the summed force inside the range, and outside it on either side
JOINT_CLAMP_STATES = [((0.2, 0.5), 0.01), ((0.0, 1.0), 0.03), ((0.2, 0.5), 1.0),
                      ((1.0, 1.0), -1.0), ((0.0, 1.0), 0.05), ((-0.3, 0.2), -0.1)]


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("state", JOINT_CLAMP_STATES)
def test_joint_actfrcrange_derivative(integrator, state):
  mjm = _mj_model(os.path.join(DATA, "joint_force_clamp.xml"))
  ctrl, qvel = state
  mjd, d, mjd0 = _clamp_step(mjm, integrator, [qvel], ctrl)
  _check_step(mjm, mjd, d)
  # the states do reach both sides of the clamp, and the clamp changes qDeriv
  lo, hi = mjm.jnt_actfrcrange[0]
  clamped = not lo < mjd0.qfrc_actuator[0] < hi
  damper = -10 * ctrl[1]
  assert abs(mjd.qDeriv[0] - (-0.01 + (0.0 if clamped else damper))) < 1e-12


# fixed-tendon part of tendon_force_clamp.xml (its spatial tendons are loaded by the test below):
# two limited tendons, one with two motors, and a motor on a hinge with forcerange; velocity
# actuators make the derivative nonzero
TENDON_CLAMP_XML = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body>
      <joint name="joint0" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05 0.5" fromto="0 0 0 0.5 0 0"/>
      <body pos="0.5 0 0">
        <joint name="joint1" type="hinge" axis="0 1 0" actuatorfrcrange="-0.5 0.5"/>
        <geom type="capsule" size="0.05 0.5" fromto="0 0 0 0.5 0 0"/>
        <body pos="0.5 0 0">
          <joint name="joint2" type="hinge" axis="0 1 0"/>
          <geom type="capsule" size="0.05 0.5" fromto="0 0 0 0.5 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="fixed0" actuatorfrclimited="true" actuatorfrcrange="-1 1">
      <joint joint="joint0" coef=".1"/>
      <joint joint="joint1" coef=".2"/>
      <joint joint="joint2" coef=".3"/>
    </fixed>
    <fixed name="fixed1" actuatorfrclimited="true" actuatorfrcrange="0 1">
      <joint joint="joint0" coef=".1"/>
      <joint joint="joint2" coef=".3"/>
    </fixed>
  </tendon>
  <actuator>
    <velocity tendon="fixed0" kv="20" ctrlrange="-1 1"/>
    <motor tendon="fixed1" ctrlrange="-1 1"/>
    <velocity tendon="fixed1" kv="5" ctrlrange="-1 1"/>
    <velocity joint="joint2" kv="3" forcerange="-.2 .2" ctrlrange="-1 1"/>
    <velocity joint="joint1" kv="2" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("seed", range(8))
def test_tendon_actfrcrange_derivative(integrator, seed):
  mjm = _mj_model(TENDON_CLAMP_XML)
  rng = np.random.default_rng(seed)
  qvel = rng.uniform(-3, 3, 3) * (0.05 if seed % 2 else 1.0)
  ctrl = rng.uniform(-1, 1, mjm.nu)
  mjd, d, _ = _clamp_step(mjm, integrator, qvel, ctrl)
  _check_step(mjm, mjd, d)


def test_tendon_actfrcrange_states_cover_clamps():
  """The seeds above put each tendon total and the joint force inside and outside its clamp."""
  mjm = _mj_model(TENDON_CLAMP_XML)
  seen = set()
  for seed in range(8):
    rng = np.random.default_rng(seed)
    mjd = mujoco.MjData(mjm)
    mjd.qvel[:] = rng.uniform(-3, 3, 3) * (0.05 if seed % 2 else 1.0)
    mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_forward(mjm, mjd)
    f = mjd.actuator_force
    for t, total in (("fixed0", f[0]), ("fixed1", f[1] + f[2])):
      lo, hi = mjm.tendon_actfrcrange[mjm.tendon(t).id]
      seen.add((t, lo < total < hi))
    seen.add(("joint1", -0.5 < mjd.qfrc_actuator[1] < 0.5))
  assert len(seen) == 6, seen


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_tendon_force_clamp_file(integrator):
  """MuJoCo's tendon_force_clamp.xml (spatial tendons) with motors made velocity dependent."""
  try:
    numjoco.load_model(os.path.join(DATA, "tendon_force_clamp.xml"))
  except Exception as e:  # spatial tendons arrive with another issue
    pytest.skip(f"model does not load yet: {e}")
  mjm = _mj_model(os.path.join(DATA, "tendon_force_clamp.xml"))
  for seed in range(4):
    rng = np.random.default_rng(seed)
    mjm.actuator_gaintype[:] = mujoco.mjtGain.mjGAIN_AFFINE
    mjm.actuator_gainprm[:, 2] = rng.uniform(-5, -1, mjm.nu)
    mjd, d, _ = _clamp_step(mjm, integrator, rng.uniform(-3, 3, mjm.nv),
                            rng.uniform(-1, 1, mjm.nu))
    _check_step(mjm, mjd, d)


TENDON_EDGE_XML = """
<mujoco>
  <worldbody>
    <body><joint name="j0" axis="0 1 0"/><geom size=".1" mass="1"/></body>
  </worldbody>
  <tendon>
    <fixed name="t" actuatorfrclimited="true" actuatorfrcrange="-2 1">
      <joint joint="j0" coef="1"/>
    </fixed>
    <fixed name="t0" actuatorfrclimited="true" actuatorfrcrange="0 1">
      <joint joint="j0" coef="1"/>
    </fixed>
  </tendon>
  <actuator>
    <motor tendon="t"/>
    <motor tendon="t"/>
    <velocity tendon="t" kv="1"/>
    <velocity tendon="t0" kv="2"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("ctrl", [(0.5, 0.5 - 2**-53, 0, 0), (0.5, 0.5 - 1e-11, 0, 0),
                                  (0.5, 0.5 - 1e-9, 0, 0), (-1, -1 + 1e-11, 0, 0),
                                  (-1, -1 + 1e-8, 0, 0), (1.41559415, 1.26060962, 0, 0),
                                  (0.2, 0.3, 0, 0)])
def test_tendon_actfrcrange_edges(integrator, ctrl):
  """Totals on, near and just inside a tendon's bound; a zero total at a zero bound (t0)."""
  mjm = _mj_model(TENDON_EDGE_XML)
  mjd, d, _ = _clamp_step(mjm, integrator, [0.0], ctrl)
  _check_step(mjm, mjd, d)


# ------------------------------------------------------------------------------------------------
# the ellipsoid fluid model's velocity derivative (mjd_ellipsoidFluid)

ELLIPSOID_FLUID_XML = """
<mujoco>
  <option density="{density}" viscosity="{viscosity}" wind="{wind}"/>
  <default><geom contype="0" conaffinity="0" fluidshape="ellipsoid"/></default>
  <worldbody>
    <body pos="0 0 1">
      <joint type="ball"/>
      <geom type="box" size=".2 .1 .05" pos=".1 0 0"/>
      <geom type="capsule" size=".02 .1" pos="0 .1 0" fluidcoef=".4 .3 1.2 .9 1.1"/>
      <body pos=".3 0 0">
        <joint axis="0 1 0" damping="0.1"/>
        <joint type="slide" axis="1 0 0"/>
        <geom type="cylinder" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </body>
    <body pos="1 0 1">
      <freejoint/>
      <geom type="ellipsoid" size=".2 .1 .05" euler="10 20 30"/>
    </body>
    <body pos="2 0 1">
      <freejoint/>
      <geom type="sphere" size=".1" pos=".05 0 0"/>
      <geom type="box" size=".003 .002 .0001" pos="0 .1 0"/>
      <body pos="0 0 -.2">
        <joint axis="1 0 0"/>
        <geom type="ellipsoid" size=".01 .03 .002" fluidshape="none"/>
        <geom type="ellipsoid" size=".01 .03 .002"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

FLUID_OPTIONS = [(1000, 0.01, "0.3 -0.2 0.1"), (1.2, 1.8e-5, "0 0 1"), (1.2, 0, "0 0 0"),
                 (0, 0.5, "1 0 0")]


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("option", range(len(FLUID_OPTIONS)))
@pytest.mark.parametrize("seed", range(3))
def test_ellipsoid_fluid_derivative(integrator, option, seed):
  density, viscosity, wind = FLUID_OPTIONS[option]
  xml = ELLIPSOID_FLUID_XML.format(density=density, viscosity=viscosity, wind=wind)
  mjm, mjd, m, d = _one_step(mujoco.MjModel.from_xml_string(xml), integrator, seed=seed,
                             qvel_scale=3.0)
  _check_step(mjm, mjd, d)


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("seed", range(4))
def test_tumbling_thin_object(integrator, seed):
  """MuJoCo's thin tumbling plates (sizes down to 1e-4: products of sizes below mjMINVAL)."""
  mjm = mujoco.MjModel.from_xml_path(os.path.join(DATA, "tumbling_thin_object_ellipsoid.xml"))
  mjm, mjd, m, d = _one_step(mjm, integrator, seed=seed, qvel_scale=2.0)
  _check_step(mjm, mjd, d)


# free joints whose tree has no other dof but welded descendants: MuJoCo gives them the free-body
# 6x6 solve with the whole rigid assembly's gyroscopic derivative (composite inertia); the
# Aug-2026 source required a childless body. A box with an offset welded box, a massless root
# carrying two welded plates, a welded chain with free-joint damping, inertia-box fluid.
WELDED_FREE_XML = """
<mujoco>
  <option density="{density}" viscosity="{viscosity}" wind="0.2 0 -0.1"/>
  <worldbody>
    <body pos="0 0 1" euler="10 -20 30">
      <freejoint/>
      <geom type="box" size=".1 .05 .02" mass="1"/>
      <body pos=".2 .05 0" euler="10 20 30">
        <geom type="box" size=".05 .1 .01" mass=".7"/>
      </body>
    </body>
    <body pos="1 0 1">
      <freejoint/>
      <body>
        <geom type="box" size=".025 .01 .001" pos=".025 0 0" euler="20 0 0" mass="1e-2"/>
      </body>
      <body>
        <geom type="box" size=".025 .01 .001" pos="-.025 0 0" euler="-19 0 0" mass="1e-2"/>
      </body>
    </body>
    <body pos="0 1 1">
      <joint type="free" damping="0.3"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body pos=".3 0 0" euler="0 40 0">
        <geom type="capsule" fromto="0 0 0 .2 .1 0" size=".03"/>
        <body pos=".2 .1 0">
          <geom type="sphere" size=".06" pos=".05 0 .02"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("fluid", [(0, 0), (1.2, 1.8e-5), (500, 0.1)])
@pytest.mark.parametrize("seed", range(3))
def test_free_body_with_welded_children(integrator, fluid, seed):
  xml = WELDED_FREE_XML.format(density=fluid[0], viscosity=fluid[1])
  mjm, mjd, m, d = _one_step(mujoco.MjModel.from_xml_string(xml), integrator, seed=seed,
                             qvel_scale=3.0)
  _check_step(mjm, mjd, d)


def test_free_body_with_welded_children_matters():
  """Under implicitfast the welded assemblies' step is not the symmetric solve's: MuJoCo's dv/h
  differs from its qacc (nothing else in these scenes depends on qvel), so a solve without the
  composite gyroscopic block fails the test above."""
  mjm, mjd, _, _, _ = _setup(mujoco.MjModel.from_xml_string(
      WELDED_FREE_XML.format(density=0, viscosity=0)), "implicitfast", 0, 3.0)
  qvel = mjd.qvel.copy()
  mujoco.mj_forward(mjm, mjd)
  qacc = mjd.qacc.copy()
  mujoco.mj_step(mjm, mjd)
  dv = (mjd.qvel - qvel) / mjm.opt.timestep
  for j in range(3):
    rot = slice(6 * j + 3, 6 * j + 6)
    assert np.abs(dv[rot] - qacc[rot]).max() > 1e-3 * np.abs(qacc[rot]).max(), j


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_ellipsoid_fluid_rollout(integrator):
  xml = ELLIPSOID_FLUID_XML.format(density=1000, viscosity=0.01, wind="0.3 -0.2 0.1")
  err_q, err_v = _rollout(mujoco.MjModel.from_xml_string(xml), integrator)
  assert err_q <= ROLLOUT_TOL, (integrator, err_q, err_v)


def test_ellipsoid_fluid_derivative_matters():
  """The fluid derivative is a large part of qDeriv in these scenes: leaving it out would fail."""
  xml = ELLIPSOID_FLUID_XML.format(density=1000, viscosity=0.01, wind="0.3 -0.2 0.1")
  mjm, mjd, _, _, _ = _setup(mujoco.MjModel.from_xml_string(xml), "implicitfast", 0, 3.0)
  mujoco.mj_step(mjm, mjd)
  damping = np.zeros(mjm.nD)
  damping[mjm.D_rowadr + mjm.D_diag] = -mjm.dof_damping
  assert np.abs(mjd.qDeriv - damping).max() > 1.0
