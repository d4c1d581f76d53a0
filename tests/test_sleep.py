"""Sleeping trees (`<flag sleep="enable"/>`, engine/sleep.py) against MuJoCo: the sleep
state of every tree step by step (tree_asleep, counting and cycles included), the state, the
contacts and the sensors along rollouts of MuJoCo's own sleep models; waking by contact, by a
written qpos, by an applied force, by disabling the flag; sleep="init"."""
import os
import warnings

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import models_and_data

_DIR = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")
_SLEEP = "test/engine/testdata/sleep/"
# (model, steps): each covers its trees falling asleep, and the wakes MuJoCo shows in that span
ROLLOUTS = [
    (_SLEEP + "contact.xml", 600),        # 5 trees: sleep at step 35, 4 wakes by contact
    (_SLEEP + "contactpair.xml", 400),    # an explicit <pair>
    (_SLEEP + "equality.xml", 300),       # equalities tie islands
    (_SLEEP + "init.xml", 300),           # sleep="init" trees, woken by contact
    (_SLEEP + "init_island.xml", 300),
    (_SLEEP + "init_island_fail.xml", 500),   # init fails (a warning): all awake, sleep later
    (_SLEEP + "mocap.xml", 300),          # a mocap body keeps the tree awake
    (_SLEEP + "sensor.xml", 400),         # sleeping sensors keep their values
    (_SLEEP + "smooth.xml", 900),         # smooth dynamics only (no contacts)
    (_SLEEP + "tendon.xml", 300),         # a two-tree tendon limit wakes the other tree
    (_SLEEP + "tendon2.xml", 300),
    ("model/sleep/dominos.xml", 700),     # 96 trees, islands asleep and woken in a chain
    ("model/sleep/humanoid.xml", 200),    # sleep="init" humanoid
]
TOL = 1e-8
# equality.xml: an impact near step 144 amplifies a 6e-14 difference by ~37x a step for five
# steps (qvel 6e-6, qacc 1e-4 relative, measured), decaying back to 1e-14 by step 261; the
# sleep states stay equal throughout
LOOSE = {_SLEEP + "equality.xml": 1e3}
# mocap.xml: the mocap body touching the tree keeps it awake (MuJoCo never puts it to sleep)
NEVER_SLEEPS = {_SLEEP + "mocap.xml"}


def _load(path):
  return models_and_data(os.path.join(_DIR, path), quiet=True)


def _n(x):
  return int(np.asarray(x).ravel()[0])


def _awake_dofs(mjd):
  return np.asarray(mjd.dof_awake_ind[:_n(mjd.nv_awake)])


def _check(m, d, mjm, mjd, what, loose=1.0):
  np.testing.assert_array_equal(d.tree_asleep, mjd.tree_asleep, err_msg=f"{what}: tree_asleep")
  np.testing.assert_array_equal(d.body_awake, mjd.body_awake, err_msg=f"{what}: body_awake")
  assert _n(d.nv_awake) == _n(mjd.nv_awake), what
  np.testing.assert_array_equal(d.dof_awake_ind[:_n(d.nv_awake)], _awake_dofs(mjd),
                                err_msg=f"{what}: dof_awake_ind")
  scale = max(1.0, np.abs(mjd.qvel).max())
  np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=0,
                             atol=loose * TOL * max(1.0, np.abs(mjd.qpos).max()),
                             err_msg=f"{what}: qpos")
  np.testing.assert_allclose(d.qvel, mjd.qvel, rtol=0, atol=loose * TOL * scale,
                             err_msg=f"{what}: qvel")
  assert d.ncon == mjd.ncon, (what, d.ncon, mjd.ncon)
  assert d.nefc == mjd.nefc, (what, d.nefc, mjd.nefc)
  awake = _awake_dofs(mjd)
  acc = max(1.0, np.abs(mjd.qacc).max())
  np.testing.assert_allclose(d.qacc[awake], mjd.qacc[awake], rtol=0, atol=loose * 1e-6 * acc,
                             err_msg=f"{what}: qacc of awake dofs")
  if mjm.nsensordata:
    s = max(1.0, np.abs(mjd.sensordata).max())
    np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=0, atol=1e-6 * s,
                               err_msg=f"{what}: sensordata")


@pytest.mark.parametrize("path,nstep", ROLLOUTS, ids=[p for p, _ in ROLLOUTS])
def test_sleep_rollout_as_mujoco(path, nstep):
  m, d, mjm, mjd = _load(path)
  assert mjm.opt.enableflags & mujoco.mjtEnableBit.mjENBL_SLEEP
  np.testing.assert_array_equal(d.tree_asleep, mjd.tree_asleep, err_msg="after make_data")
  slept = woke = 0
  asleep_seen = int((mjd.tree_asleep >= 0).sum())   # sleep="init" trees
  prev = mjd.tree_asleep.copy()
  for s in range(nstep):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    _check(m, d, mjm, mjd, f"{path} step {s + 1}", LOOSE.get(path, 1.0))
    slept += int(((prev < 0) & (mjd.tree_asleep >= 0)).sum())
    woke += int(((prev >= 0) & (mjd.tree_asleep < 0)).sum())
    prev = mjd.tree_asleep.copy()
  # the rollout exercised sleeping (and for the contact models waking): else it tests nothing
  if path in NEVER_SLEEPS:
    assert slept == 0 and (mjd.tree_asleep < 0).all(), path
  else:
    assert slept + asleep_seen > 0, path


def test_sleep_rollouts_cover_wakes():
  """The rollouts above see MuJoCo wake trees (contact, tendon, init) as well as put them to
  sleep: counted here on MuJoCo alone so the comparison cannot pass on a model that never
  changes state."""
  wakes = 0
  for path, nstep in ROLLOUTS:
    mjm = mujoco.MjModel.from_xml_path(os.path.join(_DIR, path))
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      mjd = mujoco.MjData(mjm)
    prev = mjd.tree_asleep.copy()
    for _ in range(nstep):
      mujoco.mj_step(mjm, mjd)
      wakes += int(((prev >= 0) & (mjd.tree_asleep < 0)).sum())
      prev = mjd.tree_asleep.copy()
  assert wakes >= 20, wakes


def _settle(path, nstep):
  m, d, mjm, mjd = _load(path)
  for _ in range(nstep):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert (mjd.tree_asleep >= 0).any()
  return m, d, mjm, mjd


def _run(m, d, mjm, mjd, nstep, what):
  for s in range(nstep):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    _check(m, d, mjm, mjd, f"{what} step {s + 1}")


def test_wake_by_qpos_write():
  """Writing a sleeping tree's qpos wakes it (and its island) at the next forward."""
  m, d, mjm, mjd = _settle(_SLEEP + "contact.xml", 200)
  t = int(np.nonzero(mjd.tree_asleep >= 0)[0][0])
  j = int(np.nonzero(mjm.jnt_bodyid == mjm.tree_bodyadr[t])[0][0])
  a = mjm.jnt_qposadr[j]
  for x in (mjd, d):
    x.qpos[a + 2] += 0.05   # lift the body
  _run(m, d, mjm, mjd, 60, "qpos write")
  assert mjd.tree_asleep[t] < 0 or (mjd.tree_asleep >= 0).sum() < mjm.ntree


@pytest.mark.parametrize("field", ["xfrc_applied", "qfrc_applied"])
def test_wake_by_applied_force(field):
  m, d, mjm, mjd = _settle(_SLEEP + "contact.xml", 200)
  t = int(np.nonzero(mjd.tree_asleep >= 0)[0][0])
  for x in (mjd, d):
    if field == "xfrc_applied":
      x.xfrc_applied[mjm.tree_bodyadr[t], 2] = 30.0
    else:
      x.qfrc_applied[mjm.tree_dofadr[t] + 2] = 30.0
  mujoco.mj_step(mjm, mjd)
  numjoco.step(m, d)
  assert mjd.tree_asleep[t] < 0
  _check(m, d, mjm, mjd, field)
  _run(m, d, mjm, mjd, 40, field)


def test_disable_flag_wakes_all():
  m, d, mjm, mjd = _settle(_SLEEP + "contact.xml", 200)
  mjm.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
  m.opt.enableflags = int(m.opt.enableflags) & ~int(numjoco.mjtEnableBit.SLEEP)
  _run(m, d, mjm, mjd, 30, "sleep disabled")
  assert (d.tree_asleep < 0).all()


def test_viewer_perturbation_wakes():
  """The viewer's mouse force (xfrc_perturb, ours only) acts as xfrc_applied does in
  MuJoCo's simulate: the grabbed sleeping body wakes and moves."""
  m, d, mjm, mjd = _settle(_SLEEP + "contact.xml", 200)
  t = int(np.nonzero(d.tree_asleep >= 0)[0][0])
  b = int(m.tree_bodyadr[t])
  z0 = d.xpos[b, 2]
  numjoco.forward(m, d)
  d.pert_select = b
  d.pert_localpos[:] = 0.0
  numjoco.init_perturb(m, d)
  d.pert_active = 1   # translate: the spring pulls the body to the reference, 0.3 higher
  d.pert_refselpos[2] += 0.3
  for _ in range(50):
    numjoco.step(m, d)
  assert d.tree_asleep[t] < 0 and d.xpos[b, 2] > z0 + 1e-2, (d.tree_asleep, d.xpos[b, 2], z0)


def test_init_fail_warns():
  path = os.path.join(_DIR, _SLEEP + "init_island_fail.xml")
  m = numjoco.load_model(path)
  with pytest.warns(UserWarning, match="marked as sleep='init' but only 0 could be slept"):
    d = numjoco.make_data(m)
  mjd = mujoco.MjData(mujoco.MjModel.from_xml_path(path))
  np.testing.assert_array_equal(d.tree_asleep, mjd.tree_asleep)


def test_sleep_policy_errors():
  with pytest.raises(ValueError, match="only allowed for movable root bodies"):
    numjoco.load_model(
        '<mujoco><worldbody><body><joint/><geom size=".1"/><body sleep="never">'
        '<joint/><geom size=".1"/></body></body></worldbody></mujoco>')
  with pytest.raises(ValueError, match="invalid value"):
    numjoco.load_model(
        '<mujoco><worldbody><body sleep="sometimes"><freejoint/><geom size=".1"/></body>'
        '</worldbody></mujoco>')
