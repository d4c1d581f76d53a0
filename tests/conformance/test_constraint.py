"""Conformance of the constraint rows (make_constraint, project_constraint,
reference_constraint, constraint_b) against MuJoCo, row by row.

MuJoCo runs mj_forward; we copy its state and its contacts (our collision driver is tested
elsewhere), run our smooth pipeline and the constraint stages, and compare every efc_* field,
the dense Jacobian, contact_mu and contact_efc_address. Every model is compiled by ours."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco import engine
from numjoco.engine import constraint as cn
from numjoco.engine import interop
from tests.models import load_both, model_xml

EFC_FIELDS = ["type", "id", "pos", "margin", "frictionloss", "diagA", "KBIP", "D", "R", "vel",
              "aref", "b"]
TOL = 1e-8

EQUALITY_XML = model_xml("conformance/constraint/equality")

CONNECT_WELD = """
    <connect body1="b4" body2="free" anchor="0 0.1 0"/>
    <connect site1="s1" site2="s2"/>
    <connect body1="b3" anchor="0.2 0 0"/>
    <weld body1="free" body2="b2" torquescale="0.5" relpose="0.1 0 0 0.9 0.1 0.2 0.3"
          anchor="0 0.05 0"/>
    <weld site1="s2" site2="s1" solref="-500 -20"/>
    <weld body1="b4" solimp="0.5 0.99 0.1 0.4 1"/>
"""

CONTACT_XML = model_xml("conformance/constraint/contact")

_D = mujoco.mjtDisableBit
_E = mujoco.mjtEnableBit


def _edit_ours(m, mjm):
  """Copy the options `_edit` may change from MuJoCo's model into ours."""
  for k in ("cone", "impratio", "enableflags", "disableflags", "jacobian", "o_margin"):
    setattr(m.opt, k, getattr(mjm.opt, k))
  for k in ("o_solref", "o_solimp", "o_friction"):
    getattr(m.opt, k)[:] = getattr(mjm.opt, k)


def _edit(mjm, edit):
  """Apply one option variant to a MuJoCo model."""
  o = mjm.opt
  if edit == "pyramidal":
    o.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
  elif edit == "pyramidal_impratio1":
    o.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    o.impratio = 1.0
  elif edit == "override":
    o.enableflags |= int(_E.mjENBL_OVERRIDE)
    o.o_solref[:] = [0.05, 0.5]
    o.o_solimp[:] = [0.7, 0.9, 0.01, 0.5, 2]
    o.o_margin = 0.01
    o.o_friction[:] = [0.6, 0.6, 0.02, 0.001, 0.001]
  elif edit == "diagexact":
    o.enableflags |= int(_E.mjENBL_DIAGEXACT)
  elif edit == "diagexact_pyramidal":
    o.enableflags |= int(_E.mjENBL_DIAGEXACT)
    o.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
  elif edit == "norefsafe":
    o.disableflags |= int(_D.mjDSBL_REFSAFE)
  elif edit == "sparse":
    o.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
  elif edit != "none":
    o.disableflags |= int(getattr(_D, "mjDSBL_" + edit.upper()))


def _run_ours(m, mjm, mjd, contacts=None):
  """Our Data after the smooth pipeline and the constraint stages, from MuJoCo's state and
  contacts (of `contacts` when given); the outputs MuJoCo already wrote into the copied
  contacts are poisoned first."""
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  interop.contacts_from_mujoco(mjd if contacts is None else contacts, d)
  # collision leaves mu = 0; make_constraint sets it for frictional contacts
  d.contact_mu[:] = np.where(d.contact_dim > 1, np.nan, 0.0)
  d.contact_efc_address[:] = -7
  for f in EFC_FIELDS:
    getattr(d, "efc_" + f)[...] = -12345
  d.efc_J[...] = np.nan
  cn.make_constraint(m.struct, d.struct)
  cn.project_constraint(m.struct, d.struct)
  cn.reference_constraint(m.struct, d.struct)
  cn.constraint_b(m.struct, d.struct)
  return d


def _errors(d, mjm, mjd):
  """Largest relative-or-absolute error of every compared field (counts must agree)."""
  for k in ("ne", "nf", "nl", "nefc"):
    assert getattr(d, k) == getattr(mjd, k), f"{k}: {getattr(d, k)} != {getattr(mjd, k)}"
  n = mjd.nefc
  err = {}
  for f in EFC_FIELDS:
    a = getattr(d, "efc_" + f)[:n]
    b = np.asarray(getattr(mjd, "efc_" + f))[:n].reshape(a.shape)
    err[f] = float(np.max(np.abs(a - b) / (1 + np.abs(b)), initial=0.0))
  J = interop.efc_J_dense(mjm, mjd)
  err["J"] = float(np.max(np.abs(interop.efc_J_to_dense(d) - J), initial=0.0))
  nc = mjd.ncon
  err["contact_mu"] = float(np.max(np.abs(d.contact_mu[:nc] - mjd.contact.mu), initial=0.0))
  err["contact_efc_address"] = float(np.max(
      np.abs(d.contact_efc_address[:nc] - mjd.contact.efc_address), initial=0.0))
  return err


def _assert_match(d, mjm, mjd):
  """Every compared field within TOL of MuJoCo's."""
  err = _errors(d, mjm, mjd)
  bad = {k: v for k, v in err.items() if not v <= TOL}
  assert not bad, f"fields off: {bad}"


def _random_state(mjm, mjd, seed, scale=0.5):
  """Random pose (some limits violated), velocity and applied force."""
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  mjd.qfrc_applied[:] = rng.normal(size=mjm.nv)


@pytest.mark.parametrize("edit", ["none", "equality", "frictionloss", "limit", "constraint",
                                  "norefsafe", "sparse", "diagexact"])
@pytest.mark.parametrize("seed", [0, 1])
def test_equality_friction_limit_rows(edit, seed):
  """Connect/weld (body and site), joint/tendon couplings, dof and tendon friction loss,
  hinge/slide/ball and tendon limits, with flags that remove or change rows."""
  xml = EQUALITY_XML.replace("EQUALITIES", CONNECT_WELD)
  mjm = mujoco.MjModel.from_xml_string(xml)
  _edit(mjm, edit)
  m = numjoco.load_model(xml)
  _edit_ours(m, mjm)
  mjd = mujoco.MjData(mjm)
  _random_state(mjm, mjd, seed)
  mujoco.mj_forward(mjm, mjd)
  if edit == "none":
    assert mjd.ne > 20 and mjd.nf == 3 and mjd.nl >= 2
  _assert_match(_run_ours(m, mjm, mjd), mjm, mjd)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scalar_rows_with_our_compiler(seed):
  """The same scene without connect/weld, compiled by our MJCF compiler."""
  xml = EQUALITY_XML.replace("EQUALITIES", "")
  mjm = mujoco.MjModel.from_xml_string(xml)
  m = numjoco.load_model(xml)
  mjd = mujoco.MjData(mjm)
  _random_state(mjm, mjd, seed)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.nl >= 1
  _assert_match(_run_ours(m, mjm, mjd), mjm, mjd)


@pytest.mark.parametrize("edit", ["none", "pyramidal", "pyramidal_impratio1", "override",
                                  "diagexact", "diagexact_pyramidal", "norefsafe", "contact",
                                  "sparse"])
def test_contact_rows(edit):
  """Contacts of condim 1/3/4/6, elliptic and pyramidal cones, impratio, direct solref,
  solreffriction, margin/gap, the override flag."""
  mjm = mujoco.MjModel.from_xml_string(CONTACT_XML)
  _edit(mjm, edit)
  m = numjoco.load_model(CONTACT_XML)
  m.opt.cone, m.opt.impratio = mjm.opt.cone, mjm.opt.impratio
  m.opt.enableflags, m.opt.disableflags, m.opt.jacobian = (
      mjm.opt.enableflags, mjm.opt.disableflags, mjm.opt.jacobian)
  m.opt.o_solref, m.opt.o_solimp, m.opt.o_margin = (mjm.opt.o_solref, mjm.opt.o_solimp,
                                                    mjm.opt.o_margin)
  mjd = mujoco.MjData(mjm)
  mjd.qvel[:] = np.random.default_rng(0).normal(size=mjm.nv) * 0.3
  mujoco.mj_forward(mjm, mjd)
  contacts = None
  if edit == "contact":  # MuJoCo then finds no contacts: give ours some to ignore
    mjm0 = mujoco.MjModel.from_xml_string(CONTACT_XML)
    contacts = mujoco.MjData(mjm0)
    contacts.qvel[:] = mjd.qvel
    mujoco.mj_forward(mjm0, contacts)
  else:
    assert mjd.ncon >= 10 and set(mjd.contact.dim) == {1, 3, 4, 6}
  d = _run_ours(m, mjm, mjd, contacts)
  if edit == "contact":
    assert d.ncon >= 10 and d.nefc == 0
    return
  _assert_match(d, mjm, mjd)


@pytest.mark.parametrize("name", ["walker", "hopper", "humanoid", "cheetah", "humanoid_CMU"])
def test_suite_model_in_contact(name):
  """dm_control suite models after MuJoCo has let them fall onto the floor (humanoid_CMU, nv=62,
  is where MuJoCo picks its sparse Jacobian)."""
  m, mjm = load_both(name, disable_constraint=False)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(1)
  mjd.ctrl[:] = rng.uniform(-1, 1, size=mjm.nu)
  for _ in range(300):
    mujoco.mj_step(mjm, mjd)
    if mjd.ncon >= 2:
      break
  mjd.qvel[:] += rng.normal(size=mjm.nv) * 0.2
  mujoco.mj_forward(mjm, mjd)
  assert mjd.ncon >= 1
  d = _run_ours(m, mjm, mjd)
  d.act[:] = mjd.act
  _assert_match(d, mjm, mjd)


def test_comparison_can_fail():
  """A wrong impratio in our model changes R and contact_mu, and the comparison sees it."""
  mjm = mujoco.MjModel.from_xml_string(CONTACT_XML)
  m = numjoco.load_model(CONTACT_XML)
  m.opt.impratio = 2.0
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  err = _errors(_run_ours(m, mjm, mjd), mjm, mjd)
  assert err["R"] > 1e-3 and err["contact_mu"] > 1e-3


def test_row_overflow_clears_rows_and_warns():
  """More rows than njmax: no rows at all and one CNSTRFULL warning, as MuJoCo's failed
  arena allocation gives."""
  xml = CONTACT_XML.replace("<worldbody>", '<size njmax="20"/><worldbody>', 1)
  mjm = mujoco.MjModel.from_xml_string(xml)
  m = numjoco.load_model(xml)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.nefc > 20
  d = _run_ours(m, mjm, mjd)
  assert (d.nefc, d.ne, d.nf, d.nl) == (0, 0, 0, 0)
  # one overflow in _run_ours's numjoco.forward, one in its explicit make_constraint
  assert d.warning_number[int(engine.types.mjtWarning.CNSTRFULL)] == 2
  assert (d.contact_efc_address[:mjd.ncon] == -1).all()


def test_mixed_solref_falls_back_to_default(tmp_path, monkeypatch):
  """A solref mixing the standard and direct formats is replaced by MuJoCo's default."""
  monkeypatch.chdir(tmp_path)  # MuJoCo's warning writes MUJOCO_LOG.TXT into the cwd
  xml = """<mujoco><worldbody><body><joint name="j" limited="true" range="-0.1 0.1"
    solreflimit="0.05 -3"/><geom size=".1"/></body></worldbody></mujoco>"""
  mjm = mujoco.MjModel.from_xml_string(xml)
  m = numjoco.load_model(xml)
  mjd = mujoco.MjData(mjm)
  mjd.qpos[0] = 0.3
  mjd.qvel[0] = 1.0
  mujoco.mj_forward(mjm, mjd)
  assert mjd.nl == 1
  _assert_match(_run_ours(m, mjm, mjd), mjm, mjd)


def test_assign_helpers_follow_override():
  """Contact parameter helpers for the collision driver: model values, or opt.o_* under the
  override flag (friction clamped to mjMINMU either way)."""
  import numba
  m = numjoco.load_model(CONTACT_XML)

  @numba.njit
  def assign(ms, out):
    cn.assign_ref(ms, out[0:2], ms.geom_solref[1])
    cn.assign_imp(ms, out[2:7], ms.geom_solimp[1])
    f = out[7:12]
    src = out[12:17]
    cn.assign_friction(ms, f, src)
    out[17] = cn.assign_margin(ms, 0.25)

  out = np.zeros(18)
  out[12:17] = [0.5, 0.0, 0.01, 0.0, 0.0]
  assign(m.struct, out)
  np.testing.assert_array_equal(out[0:2], m.geom_solref[1])
  np.testing.assert_array_equal(out[2:7], m.geom_solimp[1])
  np.testing.assert_array_equal(out[7:12], [0.5, 1e-5, 0.01, 1e-5, 1e-5])
  assert out[17] == 0.25
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.OVERRIDE)
  m.opt.o_solref, m.opt.o_margin = [0.3, 0.7], 0.125
  m.opt.o_friction = [0.9, 0.8, 0.7, 0.6, 0.5]
  assign(m.struct, out)
  np.testing.assert_array_equal(out[0:2], [0.3, 0.7])
  np.testing.assert_array_equal(out[2:7], m.opt.o_solimp)
  np.testing.assert_array_equal(out[7:12], [0.9, 0.8, 0.7, 0.6, 0.5])
  assert out[17] == 0.125
