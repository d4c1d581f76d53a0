"""d.energy (potential, kinetic) against MuJoCo's mj_energyPos/mj_energyVel, plus conservation:
a frictionless, undamped model keeps its total energy."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from tests.conformance.test_features import XML as FEATURES_XML
from tests.models import assert_close, forward_both, load_both, models_of

_ENERGY_FLAG = '<option timestep="0.004" gravity="0 0.5 -9.81"><flag constraint="disable" energy="enable"/>'


def _features():
  xml = FEATURES_XML.replace(
      '<option timestep="0.004" gravity="0 0.5 -9.81"><flag constraint="disable"/>', _ENERGY_FLAG)
  assert xml != FEATURES_XML
  return models_of(xml)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_energy_features(seed):
  """Joint springs (hinge with springref, ball, free), tendon spring with a dead band, gravity."""
  m, mjm = _features()
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * 0.4
  mjd.qpos[7:11] *= 1.3   # the ball quaternion left unnormalised, as MuJoCo allows
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  d = forward_both(m, mjm, mjd)
  assert abs(mjd.energy[0]) > 0.1 and mjd.energy[1] > 0.1
  assert_close(d.energy, mjd.energy, "energy", rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["humanoid", "cheetah"])
@pytest.mark.parametrize("integrator", [0, 1, 3])
def test_energy_step(name, integrator):
  """After mj_step (Euler, RK4, implicitfast) on suite models. RK4's inner stages compute the
  energy too (mj_forwardSkip skips only the sensors), so after its step d.energy is the last
  stage's, not the step's start."""
  m, mjm = load_both(name)
  mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.ENERGY)
  mjm.opt.integrator = integrator
  m.opt.integrator = integrator
  mjd = mujoco.MjData(mjm)
  mjd.qvel[:] = np.random.default_rng(0).normal(size=mjm.nv)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  mujoco.mj_step(mjm, mjd)
  numjoco.step(m, d)
  assert abs(mjd.energy[0]) > 0 and mjd.energy[1] > 0
  assert_close(d.energy, mjd.energy, "energy", rtol=1e-9, atol=1e-12)


def test_energy_off_is_zero():
  """cartpole.xml enables energy; with the flag cleared both entries are zero, as in MuJoCo."""
  m, _ = load_both("cartpole")
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  assert d.energy[0] != 0.0
  m.opt.enableflags = m.opt.enableflags & ~int(numjoco.mjtEnableBit.ENERGY)
  d.energy[:] = 5.0
  d.qvel[:] = 1.0
  numjoco.forward(m, d)
  assert np.all(d.energy == 0.0)


@pytest.mark.parametrize("enabled", [True, False])
def test_energy_inverse(enabled):
  """mj_inverse computes the energy when it is enabled and, unlike mj_forward, leaves it as it
  was when it is not."""
  m, mjm = load_both("cheetah")
  if not enabled:
    mjm.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    m.opt.enableflags = m.opt.enableflags & ~int(numjoco.mjtEnableBit.ENERGY)
  else:
    mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.ENERGY)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(1)
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * 0.1
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  mjd.energy[:] = [3.0, 4.0]
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.energy[:] = [3.0, 4.0]
  mujoco.mj_inverse(mjm, mjd)
  numjoco.inverse(m, d)
  assert (mjd.energy[1] != 4.0) == enabled
  assert_close(d.energy, mjd.energy, "energy", rtol=1e-10, atol=1e-12)


def test_energy_conserved():
  """A frictionless double pendulum under RK4 keeps kinetic + potential energy."""
  xml = """<mujoco><option integrator="RK4" timestep="0.001"><flag energy="enable"/></option>
    <worldbody><body pos="0 0 2"><joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body pos="0.5 0 0"><joint type="hinge" axis="0 1 0" stiffness="4"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0.2" size="0.04"/></body></body>
    </worldbody></mujoco>"""
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  d.qvel[:] = [2.0, -3.0]
  numjoco.forward(m, d)
  e0 = d.energy.sum()
  drift = 0.0
  for _ in range(20):
    numjoco.step(m, d, 100)
    numjoco.forward(m, d)
    drift = max(drift, abs(d.energy.sum() - e0))
  assert d.energy[1] > 0 and drift < 1e-6 * max(1.0, abs(e0))
