"""Conformance of inverse dynamics (numjoco.inverse) against mujoco.mj_inverse, and the
forward -> inverse round trip (MuJoCo's FWDINV check).

States are random (qpos, qvel, qacc, applied forces); both engines run their full inverse
pipeline, including collision, so contacts, limits and equality rows are compared too."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from tests.conformance.test_constraint import CONNECT_WELD, CONTACT_XML, EQUALITY_XML
from tests.models import assert_close, inverse_both, load_both, random_state

TOL = 1e-8


def _inverse_both(m, mjm, mjd, seed):
  """Random qacc into mjd, then mj_inverse and numjoco.inverse from the same state."""
  rng = np.random.default_rng(seed + 100)
  mjd.qacc[:] = rng.normal(size=mjm.nv) * 3
  return inverse_both(m, mjm, mjd)


def _assert_inverse_match(d, mjd):
  assert d.nefc == mjd.nefc, f"nefc {d.nefc} != {mjd.nefc}"
  n = mjd.nefc
  assert_close(d.efc_state[:n], mjd.efc_state, "efc_state", rtol=0, atol=0)
  assert_close(d.efc_force[:n], mjd.efc_force, "efc_force", rtol=TOL, atol=TOL)
  assert_close(d.qfrc_constraint, mjd.qfrc_constraint, "qfrc_constraint", rtol=TOL, atol=TOL)
  assert_close(d.qfrc_inverse, mjd.qfrc_inverse, "qfrc_inverse", rtol=TOL, atol=TOL)
  assert_close(d.sensordata, mjd.sensordata, "sensordata", rtol=TOL, atol=TOL)


# root coordinate and value that put the model into the floor (many contacts)
GROUNDED = {"humanoid": (2, 0.25), "cheetah": (1, -0.3), "walker": (0, -0.5)}


@pytest.mark.parametrize("name", ["humanoid", "cheetah", "walker"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("grounded", [False, True])
def test_suite_models(name, seed, grounded):
  """Suite models with their limits at random states, and lowered into the floor (contacts)."""
  m, mjm = load_both(name, disable_constraint=False)
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, seed)
  if grounded:
    i, v = GROUNDED[name]
    mjd.qpos[i] = v
  d = _inverse_both(m, mjm, mjd, seed)
  assert mjd.ncon >= 4 or not grounded
  _assert_inverse_match(d, mjd)


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contacts_in_both_cones(cone, seed):
  """Contacts of condim 1, 3, 4, 6; random qacc puts elliptic rows in every state."""
  mjm = mujoco.MjModel.from_xml_string(CONTACT_XML)
  m = numjoco.load_model(CONTACT_XML)
  if cone == "pyramidal":
    mjm.opt.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    m.opt.cone = int(numjoco.mjtCone.PYRAMIDAL)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * 0.005
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * 0.3
  d = _inverse_both(m, mjm, mjd, seed)
  assert mjd.ncon >= 6
  _assert_inverse_match(d, mjd)
  states = set(np.asarray(mjd.efc_state).tolist())
  assert int(mujoco.mjtConstraintState.mjCNSTRSTATE_QUADRATIC) in states
  if cone == "elliptic":
    assert int(mujoco.mjtConstraintState.mjCNSTRSTATE_CONE) in states


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equality_limits_friction_loss(seed):
  """Connect, weld, joint and tendon equalities, joint/tendon/ball limits, friction loss."""
  xml = EQUALITY_XML.replace("EQUALITIES", CONNECT_WELD)
  mjm = mujoco.MjModel.from_xml_string(xml)
  m = numjoco.load_model(xml)
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, seed, scale=0.5)
  d = _inverse_both(m, mjm, mjd, seed)
  assert mjd.ne > 0 and mjd.nf > 0 and mjd.nl > 0
  _assert_inverse_match(d, mjd)


@pytest.mark.parametrize("integrator", ["EULER", "IMPLICIT", "IMPLICITFAST"])
def test_invdiscrete(integrator):
  """INVDISCRETE: qacc is the integrator's discrete-time one (damping in walker's joints)."""
  m, mjm = load_both("walker", disable_constraint=False)
  mjm.opt.integrator = int(getattr(mujoco.mjtIntegrator, "mjINT_" + integrator))
  mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
  m.opt.integrator = int(getattr(numjoco.mjtIntegrator, integrator))
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.INVDISCRETE)
  assert mjm.dof_damping.max() > 0
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, 3)
  d = _inverse_both(m, mjm, mjd, 3)
  _assert_inverse_match(d, mjd)
  assert_close(d.qacc, mjd.qacc, "qacc restored", rtol=0, atol=0)


def test_invdiscrete_rk4_is_refused():
  m, _ = load_both("cheetah")
  m.opt.integrator = int(numjoco.mjtIntegrator.RK4)
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.INVDISCRETE)
  with pytest.raises(ValueError, match="RK4"):
    numjoco.inverse(m, numjoco.make_data(m))


def test_comparison_can_fail():
  """A perturbed qacc changes qfrc_inverse beyond the tolerance."""
  m, mjm = load_both("cheetah", disable_constraint=False)
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, 0)
  d = _inverse_both(m, mjm, mjd, 0)
  d.qacc[0] += 1e-3
  numjoco.inverse(m, d)
  assert not np.allclose(d.qfrc_inverse, mjd.qfrc_inverse, rtol=TOL, atol=TOL)


def _tight(m):
  m.opt.tolerance = 1e-15
  m.opt.iterations = 200
  m.opt.ls_tolerance = 1e-12


@pytest.mark.parametrize("which", ["humanoid", "cheetah", "equality", "contact"])
def test_forward_inverse_round_trip(which):
  """forward then inverse gives back qfrc_applied + qfrc_actuator + J'xfrc_applied within 1e-8
  relative to the constraint force (the solver's residual; MuJoCo's own solver_fwdinv from
  mj_step with FWDINV is held to the same bound), and compare_fwd_inv reports it."""
  if which in ("humanoid", "cheetah"):
    m, mjm = load_both(which, disable_constraint=False)
  else:
    xml = (EQUALITY_XML.replace("EQUALITIES", CONNECT_WELD) if which == "equality"
           else CONTACT_XML)
    mjm = mujoco.MjModel.from_xml_string(xml)
    m = numjoco.load_model(xml)
  _tight(m)
  _tight(mjm)
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, 5, scale=0.1 if which == "contact" else 0.3)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.act[:] = mjd.act
  numjoco.forward(m, d)
  assert d.nefc > 0
  # J' xfrc_applied and MuJoCo's own forward/inverse residual at the same state
  mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_FWDINV)
  mujoco.mj_forward(mjm, mjd)
  jx = np.zeros(mjm.nv)
  for b in range(1, mjm.nbody):
    mujoco.mj_applyFT(mjm, mjd, mjd.xfrc_applied[b, :3], mjd.xfrc_applied[b, 3:],
                      mjd.xipos[b], b, jx)
  expected = d.qfrc_applied + d.qfrc_actuator + jx
  scale = 1.0 + np.abs(d.qfrc_constraint).max()
  mujoco.mj_step(mjm, mjd)
  assert mjd.solver_fwdinv[1] < TOL * scale, mjd.solver_fwdinv
  fwd_qc = d.qfrc_constraint.copy()
  stats = numjoco.compare_fwd_inv(m, d)
  assert_close(d.qfrc_constraint, fwd_qc, "forward results kept", rtol=0, atol=0)
  assert stats[0] < TOL * scale and stats[1] < TOL * scale, (stats, scale)
  numjoco.inverse(m, d)
  assert_close(d.qfrc_inverse, expected, "qfrc_inverse vs applied", rtol=0, atol=TOL * scale)


@pytest.mark.parametrize("which", ["contact", "unconstrained"])
def test_step_fwdinv_flag(which):
  """Under FWDINV, step fills solver_fwdinv as mj_step does: zero without constraint rows,
  within the solver's residual (and of MuJoCo's order) with them."""
  if which == "contact":
    mjm = mujoco.MjModel.from_xml_string(CONTACT_XML)
    m = numjoco.load_model(CONTACT_XML)
  else:
    m, mjm = load_both("cheetah")
  _tight(m)
  _tight(mjm)
  mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_FWDINV)
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.FWDINV)
  mjd = mujoco.MjData(mjm)
  random_state(mjm, mjd, 5, scale=0.1)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.solver_fwdinv[:] = -1
  numjoco.step(m, d)
  mujoco.mj_step(mjm, mjd)
  if which == "unconstrained":
    assert_close(d.solver_fwdinv, [0, 0], "solver_fwdinv", rtol=0, atol=0)
    assert_close(mjd.solver_fwdinv, [0, 0], "mujoco solver_fwdinv", rtol=0, atol=0)
    return
  scale = 1.0 + np.abs(d.qfrc_constraint).max()
  assert 0 < d.solver_fwdinv[1] < TOL * scale, d.solver_fwdinv
  assert d.solver_fwdinv[0] < TOL * scale
  assert mjd.solver_fwdinv[1] < 10 * max(d.solver_fwdinv[1], 1e-12 * scale)
