"""Divergence: NaN or inf injected mid-run into qpos, qvel, ctrl, xfrc_applied, a body mass or the
timestep is found by MuJoCo's checks (mj_step's mj_checkPos, mj_checkVel, mj_checkAcc;
mj_fwdActuation's control check) within one step, under MuJoCo's warning and index, and Data is
reset as MuJoCo resets it. Every case runs in both engines from the same state and compares the
warning counters and the state after each step.

What MuJoCo finds where (and so do we):
- qpos, qvel: BADQPOS / BADQVEL at the next step, with the index; Data reset, and the step
  finished from the reset state.
- ctrl: BADCTRL with the control's index, every step; no reset: the step takes every control as
  zero and d.ctrl keeps the bad value. An inf control on a limited actuator is clamped to its
  range first, and nothing is found.
- xfrc_applied: only through the acceleration it produces: BADQACC (at the first bad dof), reset.
- a NaN or inf body mass: BADQACC, reset; the mass is still bad, so the step integrates a NaN qacc
  from the reset state, and every later step finds BADQPOS, resets, then BADQACC, resets again.
- an inf timestep: nothing during the step that integrates with it (MuJoCo has no check after
  the integration); the next step finds BADQPOS (time is inf by then). A NaN timestep is found
  by the qacc check of its first step when something in forward reads the timestep: here the
  contacts' time constant, mju_max(solref[0], 2 timestep), is NaN.
- a NaN qvel of a sleeping dof: mj_checkVel skips sleeping dofs; BADQACC finds it.
"""
import warnings

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import model_xml

NWARNING = 7
MJ_NAMES = [mujoco.mjtWarning(i).name for i in range(NWARNING)]
STATE = ("qpos", "qvel", "act", "qacc", "ctrl", "xfrc_applied")
SETTLE = 50      # steps before the injection (the box rests on the floor by then)


def _qpos(m, d, v):
  d.qpos[8] = v              # the slide (after the free joint's 7 and the hinge's 1)


def _qvel(m, d, v):
  d.qvel[6] = v              # the hinge


def _ctrl(m, d, v):
  d.ctrl[1] = v              # the slide's motor: no ctrlrange


def _ctrl_limited(m, d, v):
  d.ctrl[0] = v              # the hinge's motor: ctrlrange -1 1


def _xfrc(m, d, v):
  d.xfrc_applied[2, 1] = v   # a torque on the upper arm


def _mass(m, d, v):
  m.body_mass[2] = v         # the upper arm


def _timestep(m, d, v):
  m.opt.timestep = v


# site -> {value: (the step after the injection that finds it, MuJoCo's warning, index)}
EXPECTED = {
    _qpos: {np.nan: (0, "mjWARN_BADQPOS", 8), np.inf: (0, "mjWARN_BADQPOS", 8)},
    _qvel: {np.nan: (0, "mjWARN_BADQVEL", 6), np.inf: (0, "mjWARN_BADQVEL", 6)},
    _ctrl: {np.nan: (0, "mjWARN_BADCTRL", 1), np.inf: (0, "mjWARN_BADCTRL", 1)},
    _ctrl_limited: {np.nan: (0, "mjWARN_BADCTRL", 0), np.inf: None},
    _xfrc: {np.nan: (0, "mjWARN_BADQACC", 0), np.inf: (0, "mjWARN_BADQACC", 0)},
    _mass: {np.nan: (0, "mjWARN_BADQACC", 0), np.inf: (0, "mjWARN_BADQACC", 0)},
    # NaN: the contacts' time constant max(solref[0], 2 timestep) is NaN (mju_max), so is qacc
    _timestep: {np.nan: (0, "mjWARN_BADQACC", 0), np.inf: (1, "mjWARN_BADQPOS", 0)},
}
CASES = [pytest.param(site, v, id=f"{site.__name__[1:]}-{v}")
         for site, vals in EXPECTED.items() for v in vals]


def _pair(integrator="Euler"):
  """Both engines at the same state: MuJoCo's after SETTLE steps, copied into ours."""
  xml = model_xml("divergence/scene", integrator=integrator)
  m, mjm = numjoco.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, SETTLE)
  d.time = mjd.time
  for f in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
    getattr(d, f)[:] = getattr(mjd, f)
  return m, d, mjm, mjd


def _warnings(mjd):
  return (np.array([mjd.warning[i].number for i in range(NWARNING)]),
          np.array([mjd.warning[i].lastinfo for i in range(NWARNING)]))


def _compare(d, mjd, where, tol=1e-7):
  """Our warning counters and state equal MuJoCo's (NaN where MuJoCo has NaN)."""
  number, lastinfo = _warnings(mjd)
  np.testing.assert_array_equal(d.warning_number, number, err_msg=f"warning numbers, {where}")
  np.testing.assert_array_equal(d.warning_lastinfo, lastinfo, err_msg=f"warning info, {where}")
  np.testing.assert_equal(d.time, mjd.time, err_msg=f"time, {where}")
  for f in STATE:
    np.testing.assert_allclose(getattr(d, f), getattr(mjd, f), rtol=tol, atol=tol,
                               equal_nan=True, err_msg=f"{f}, {where}")


def _step_both(m, d, mjm, mjd):
  """One step in each engine; our RuntimeWarnings' texts."""
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert numjoco.step(m, d) == 1
  mujoco.mj_step(mjm, mjd)
  return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _first_found(mjd):
  """(warning name, index) of the warnings MuJoCo counted, besides none."""
  number, lastinfo = _warnings(mjd)
  return [(MJ_NAMES[i], int(lastinfo[i])) for i in range(NWARNING) if number[i]]


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
@pytest.mark.parametrize("site, value", CASES)
def test_injection_found_within_one_step_as_mujoco(site, value, integrator):
  """The same bad value injected into both engines at the same state: after each of the next 3
  steps the warning counters (name and index) and the state equal MuJoCo's, including the reset
  state; the first step that finds it is the expected one, and our RuntimeWarning names it."""
  m, d, mjm, mjd = _pair(integrator)
  site(m, d, value)
  site(mjm, mjd, value)
  expected = EXPECTED[site][value]
  for k in range(3):
    texts = _step_both(m, d, mjm, mjd)
    _compare(d, mjd, f"step {k} after the injection")
    if expected is None:
      assert _first_found(mjd) == [] and texts == []
      continue
    step, name, index = expected
    if k < step:
      assert _first_found(mjd) == [] and texts == [], "found before MuJoCo finds it"
    elif k == step:
      assert _first_found(mjd) == [(name, index)]
      where = "qpos index" if name == "mjWARN_BADQPOS" else "ctrl" if "CTRL" in name else "dof"
      assert any(t.startswith(f"{name} at {where} {index}, time ") for t in texts), texts
    elif name == "mjWARN_BADCTRL":
      assert texts == [], "a bad control is warned of once (mj_warning prints the first)"


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_bad_timestep_without_contacts_is_found_by_the_next_step(value):
  """Without contacts nothing in forward reads the timestep: the step integrates with it and
  leaves a bad qpos, which the next step's qpos check finds, in both engines."""
  m, d, mjm, mjd = _pair()
  m.opt.disableflags |= int(numjoco.mjtDisableBit.CONTACT)
  mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
  _timestep(m, d, value)
  _timestep(mjm, mjd, value)
  assert _step_both(m, d, mjm, mjd) == []
  _compare(d, mjd, "the step that integrates with it")
  assert _first_found(mjd) == [] and not np.isfinite(d.qpos).all()
  texts = _step_both(m, d, mjm, mjd)
  _compare(d, mjd, "the next step")
  assert _first_found(mjd) == [("mjWARN_BADQPOS", 0)]
  assert any(t.startswith("mjWARN_BADQPOS at qpos index 0, time ") for t in texts), texts


def test_reset_state_is_mujocos_and_the_call_ends_there():
  """A divergence inside a many-step call: the call ends with the step that found it (finished
  from the reset state, as mj_step does), and Data equals MuJoCo's after its one mj_step."""
  m, d, mjm, mjd = _pair()
  _qvel(m, d, np.nan)
  _qvel(mjm, mjd, np.nan)
  with pytest.warns(RuntimeWarning, match="mjWARN_BADQVEL at dof 6, time 0.1: .*state reset"):
    assert numjoco.step(m, d, 100) == 1
  mujoco.mj_step(mjm, mjd)
  _compare(d, mjd, "after the call", tol=1e-9)
  assert d.time == m.opt.timestep


def test_without_autoreset_the_bad_state_is_kept_as_in_mujoco():
  """Under the AUTORESET disable flag MuJoCo counts each finding, resets nothing and steps on
  with the bad value: so do we, and the warning says the state was kept."""
  m, d, mjm, mjd = _pair()
  m.opt.disableflags |= int(numjoco.mjtDisableBit.AUTORESET)
  mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
  _qvel(m, d, np.nan)
  _qvel(mjm, mjd, np.nan)
  for k in range(2):
    texts = _step_both(m, d, mjm, mjd)
    _compare(d, mjd, f"step {k}")
    assert any("mjWARN_BADQ" in t and "autoreset disabled" in t for t in texts), texts
  assert d.warning_number[int(numjoco.mjtWarning.BADQVEL)] >= 2
  assert np.isnan(d.qvel).any()


def test_sleeping_dof_is_left_to_the_acceleration_check():
  """A NaN qvel of a sleeping dof: mj_checkVel checks awake dofs only; the qacc check finds it.
  Both engines step from reset until the box sleeps, then take the injection alike."""
  xml = model_xml("divergence/sleeping")
  m, mjm = numjoco.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for _ in range(3000):
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    if mjd.nv_awake < mjm.nv:
      break
  assert mjd.nv_awake == 6 and d.nv_awake == 6 and list(d.dof_awake_ind[:6]) == list(range(6, 12))
  d.qvel[0] = mjd.qvel[0] = np.nan
  _step_both(m, d, mjm, mjd)
  assert _first_found(mjd) == [("mjWARN_BADQACC", 0)]
  _compare(d, mjd, "the step after the injection", tol=1e-6)


def test_comparison_can_fail():
  """The comparison sees a difference: ours injected, MuJoCo's not."""
  m, d, mjm, mjd = _pair()
  _xfrc(m, d, np.nan)
  _step_both(m, d, mjm, mjd)
  with pytest.raises(AssertionError):
    _compare(d, mjd, "one engine injected")
