"""Conformance of transmissions and actuator types with MuJoCo: site (with and without
refsite, 6D gear), slider-crank, ball/free joints with joint and jointinparent, and tendon
transmissions (actuator_length, the sparse actuator_moment as a dense matrix, nJmom,
actuator_length0); cylinder and muscle actuators (actuator_force, act_dot, qfrc_actuator), the
compile-time muscle lengthrange, and short rollouts under Euler, implicitfast and RK4."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from tests.models import assert_close, model_xml, models_of

ASSETS = os.path.join(os.path.dirname(__file__), "..", "assets", "tendon")

XML = model_xml("conformance/actuator/features")
ADHESION = model_xml("conformance/actuator/adhesion")


def _load(name):
  if name == "features":
    return models_of(XML)
  if name.startswith("adhesion"):
    return models_of(ADHESION.replace("CONE", name.split("_")[1]))
  return models_of(os.path.join(ASSETS, name + ".xml"))


def _dense_moment(nu, nv, rownnz, rowadr, colind, moment):
  out = np.zeros((nu, nv))
  for i in range(nu):
    for k in range(rowadr[i], rowadr[i] + rownnz[i]):
      out[i, colind[k]] += moment[k]
  return out


TRN_MODELS = ["sites", "refsite", "refsite_free", "slider_crank", "arm26", "features",
              "adhesion_pyramidal", "adhesion_elliptic"]


@pytest.mark.parametrize("name", TRN_MODELS)
def test_transmission(name):
  """nJmom, actuator_length0, then actuator_length and the moment matrix at random poses."""
  m, mjm = _load(name)
  assert m.nJmom == mjm.nJmom
  assert_close(m.actuator_length0, mjm.actuator_length0, "actuator_length0")
  assert_close(m.actuator_acc0, mjm.actuator_acc0, "actuator_acc0", 1e-8, 1e-8)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(5)
  for trial in range(20):
    scale = 0.002 if name.startswith("adhesion") else 0.5   # keep the contacts
    mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_fwdPosition(mjm, mjd)
    interop.data_from_mujoco(mjd, d)
    numjoco.forward(m, d)
    if name.startswith("adhesion"):
      assert mjd.ncon >= 5, "the adhesion bodies lost their contacts"
    assert_close(d.actuator_length, mjd.actuator_length, f"actuator_length #{trial}")
    ours = _dense_moment(m.nu, m.nv, d.moment_rownnz, d.moment_rowadr, d.moment_colind,
                         d.actuator_moment)
    theirs = _dense_moment(mjm.nu, mjm.nv, mjd.moment_rownnz, mjd.moment_rowadr,
                           mjd.moment_colind, mjd.actuator_moment)
    assert_close(ours, theirs, f"actuator_moment #{trial}")


@pytest.mark.parametrize("name", ["arm26", "features"])
def test_compiled_actuators(name):
  """Shortcut expansion (types, prm, limits) and the compile-time lengthrange."""
  m, mjm = _load(name)
  for f in ("actuator_trntype", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
            "actuator_trnid", "actuator_dynprm", "actuator_gainprm", "actuator_biasprm",
            "actuator_ctrllimited", "actuator_actlimited", "actuator_ctrlrange",
            "actuator_actnum"):
    assert_close(getattr(m, f), getattr(mjm, f), f)
  # the range comes from a simulation with the constraint solver; MuJoCo's steady state is
  # reached to ~1e-9 of the range by both engines
  assert_close(m.actuator_lengthrange, mjm.actuator_lengthrange, "actuator_lengthrange",
               1e-6, 1e-7)


@pytest.mark.parametrize("name", ["arm26", "features", "slider_crank", "adhesion_pyramidal",
                                  "adhesion_elliptic"])
def test_actuation(name):
  """actuator_force, act_dot, qfrc_actuator and qacc at random states and controls."""
  m, mjm = _load(name)
  m.actuator_lengthrange = mjm.actuator_lengthrange   # isolate from test_compiled_actuators
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(11)
  for trial in range(10):
    scale = 0.002 if name.startswith("adhesion") else 0.3
    mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mjd.qvel[:] = rng.normal(size=mjm.nv) * (0.01 if name.startswith("adhesion") else 1)
    mjd.ctrl[:] = rng.uniform(-0.2, 1.2, size=mjm.nu)
    mjd.act[:] = rng.uniform(0, 1, size=mjm.na)
    mujoco.mj_forward(mjm, mjd)
    interop.data_from_mujoco(mjd, d)
    d.act[:] = mjd.act
    numjoco.forward(m, d)
    for f in ("actuator_velocity", "actuator_force", "act_dot", "qfrc_actuator"):
      assert_close(getattr(d, f), getattr(mjd, f), f"{f} #{trial}", 1e-9, 1e-9)
    assert_close(d.qacc, mjd.qacc, f"qacc #{trial}", 1e-6, 1e-6)


@pytest.mark.parametrize("integrator", [0, 1, 3])
@pytest.mark.parametrize("name", ["arm26", "features"])
def test_rollout(name, integrator):
  """300 steps with smooth controls: qpos and act follow MuJoCo's (Euler, RK4, implicitfast)."""
  m, mjm = _load(name)
  m.actuator_lengthrange = mjm.actuator_lengthrange
  mjm.opt.integrator = integrator
  m.opt.integrator = integrator
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  for i in range(300):
    mjd.ctrl[:] = 0.5 + 0.5 * np.sin(0.03 * i + np.arange(mjm.nu))
    d.ctrl[:] = mjd.ctrl
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert_close(d.qpos, mjd.qpos, "qpos", 1e-6, 1e-6)
  assert_close(d.act, mjd.act, "act", 1e-6, 1e-6)


def test_lengthrange_error_matches_mujoco():
  """arm26 with its side sites x0, x1 moved: MuJoCo's length-range simulation does not settle
  for actuator 1; ours fails the same way, with the same lengths in the message."""
  xml = open(os.path.join(ASSETS, "arm26.xml")).read()
  xml = xml.replace('name="x0" pos="0.106066 -0.106066 0"', 'name="x0" pos="0 -0.15 0"')
  xml = xml.replace('name="x1" pos="0.606066 -0.106066 0"', 'name="x1" pos="0.5 -0.15 0"')
  with pytest.raises(ValueError) as theirs:
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(ValueError) as ours:
    numjoco.load_model(xml)
  assert "did not converge in actuator 1" in str(ours.value)
  assert "eval (0.218496, 0.535486)" in str(theirs.value)
  assert "eval (0.218496, 0.535486)" in str(ours.value)
