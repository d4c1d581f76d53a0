"""A singular mass matrix (MuJoCo's own mjx test model general_dyntype.xml: four slide joints
on one body, the fourth along x+y): MuJoCo clamps the factor's non-positive pivots to
mjMINVAL with an mjWARN_INERTIA warning instead of dividing by zero. Ours must load, warn and
move as MuJoCo does, under every integrator that factors M or M - hD."""
import warnings

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import model_xml, models_and_data

_XML = model_xml("singular_inertia/general_dyntype")
_INERTIA = int(mujoco.mjtWarning.mjWARN_INERTIA)


def _both(integrator="Euler", damping=0.0):
  return models_and_data(_XML.format(integrator=integrator, damping=damping), quiet=True)


def test_forward_clamps_the_pivot_and_warns_as_mujoco():
  m, d, mjm, mjd = _both()
  d.ctrl[:] = mjd.ctrl[:] = 0.5
  mujoco.mj_forward(mjm, mjd)
  with pytest.warns(RuntimeWarning, match="inertia matrix is singular .* dof 0"):
    numjoco.forward(m, d)
  assert mjd.warning[_INERTIA].number == 1
  assert d.warning_number[_INERTIA] == mjd.warning[_INERTIA].number
  assert d.warning_lastinfo[_INERTIA] == mjd.warning[_INERTIA].lastinfo
  np.testing.assert_allclose(d.qLD, mjd.qLD, rtol=1e-12, atol=1e-15)
  np.testing.assert_allclose(d.qLDiagInv, mjd.qLDiagInv, rtol=1e-12)
  # qacc ~ 5e14 along the singular direction: the clamp, not a division by zero, sets it
  assert np.abs(mjd.qacc).max() > 1e14
  np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_rollout_without_force_along_the_singular_direction(integrator):
  """Only gravity (along slide3, independent of the others): the clamped pivots leave the motion
  finite, and every step warns as MuJoCo's does (damped Euler and the implicit integrators factor
  their modified inertia too)."""
  m, d, mjm, mjd = _both(integrator, damping=0.5)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for _ in range(20):
      mujoco.mj_step(mjm, mjd)
      numjoco.step(m, d)
      np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=1e-9, atol=1e-12)
      np.testing.assert_allclose(d.qvel, mjd.qvel, rtol=1e-9, atol=1e-12)
  assert mjd.warning[_INERTIA].number > 0
  assert d.warning_number[_INERTIA] == mjd.warning[_INERTIA].number
