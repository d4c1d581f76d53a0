"""Conformance of the smooth pipeline against MuJoCo, field by field, after `forward`.

Models are compiled by our MJCF compiler (numjoco.load_model), not copied from MuJoCo, so these
tests also cover compile-time constants that only show up in the dynamics (dof_M0, invweights,
acc0 ...)."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from tests.models import SUITE_MODELS, assert_close, forward_both, load_both, random_state

SMOOTH_FIELDS = [
    "xpos", "xquat", "xmat", "xipos", "xiquat", "ximat", "xanchor", "xaxis", "geom_xpos",
    "geom_xmat", "site_xpos", "site_xmat", "cam_xpos", "cam_xmat", "light_xpos", "light_xdir",
    "subtree_com", "cinert", "cdof", "crb", "M", "qLD", "qLDiagInv", "ten_length", "ten_J",
    "actuator_length", "actuator_moment", "moment_rownnz", "moment_rowadr", "moment_colind",
    "ten_velocity", "actuator_velocity", "cvel", "cdof_dot", "qfrc_bias", "qfrc_spring",
    "qfrc_damper", "qfrc_gravcomp", "qfrc_fluid", "qfrc_passive", "actuator_force", "act_dot",
    "qfrc_actuator", "qfrc_smooth", "qacc_smooth", "qacc",
]

CONST_FIELDS = ["dof_M0", "dof_invweight0", "body_invweight0", "tendon_length0",
                "tendon_invweight0", "actuator_length0", "actuator_acc0", "cam_pos0", "cam_poscom0",
                "cam_mat0", "light_pos0", "light_poscom0", "light_dir0", "body_subtreemass",
                "actuator_biasprm", "jnt_actuatorid", "tendon_actuatorid", "ten_J_rownnz",
                "ten_J_rowadr", "ten_J_colind"]


@pytest.fixture(scope="module", params=SUITE_MODELS)
def models(request):
  return load_both(request.param)


def test_compile_constants(models):
  """Constants MuJoCo's mj_setConst computes from the dynamics at qpos0 agree."""
  m, mjm = models
  for f in CONST_FIELDS:
    assert_close(getattr(m, f), getattr(mjm, f), f)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_fields(models, seed):
  """Every smooth field agrees with MuJoCo's after forward from a random state."""
  m, mjm = models
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, seed)
  d = forward_both(m, mjm, mjd)
  for f in SMOOTH_FIELDS:
    assert_close(getattr(d, f), getattr(mjd, f), f)


def test_forward_detects_a_wrong_state(models):
  """The comparison above can fail: a perturbed qvel gives different cvel."""
  m, mjm = models
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, 0)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.qvel[-1] += 0.1
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert not np.allclose(d.cvel, mjd.cvel, rtol=1e-9, atol=1e-9)
