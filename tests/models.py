"""Shared test fixtures: the dm_control suite models the issues name, loaded in both engines."""
import os

import numpy as np

SUITE_MODELS = ["cartpole", "acrobot", "pendulum", "point_mass", "reacher", "swimmer", "fish",
                "cheetah", "walker", "hopper", "humanoid", "humanoid_CMU"]


def suite_source(name):
  """(xml path or string, assets dict or None) of a dm_control suite model."""
  from dm_control import suite
  if name == "swimmer":
    from dm_control.suite import swimmer
    xml, assets = swimmer.get_model_and_assets(6)
    return xml, assets
  return os.path.join(os.path.dirname(suite.__file__), name + ".xml"), None


def load_both(name, disable_constraint=True):
  """(ours, mujoco's) compiled models of a suite model, constraints disabled on both."""
  import mujoco
  import engine
  src, assets = suite_source(name)
  if assets:
    mjm = mujoco.MjModel.from_xml_string(src, assets)
    m = engine.load_model(src, assets=assets)
  else:
    mjm = mujoco.MjModel.from_xml_path(src)
    m = engine.load_model(src)
  if disable_constraint:
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags = m.opt.disableflags | int(engine.mjtDisableBit.CONSTRAINT)
  return m, mjm


def random_state(mjm, mjd, seed, scale=0.3):
  """Put a random but valid state (normalised quaternions) and random controls into mjd."""
  import mujoco
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  lo, hi = mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0))
  mjd.ctrl[:] = rng.uniform(-1, 1, size=mjm.nu)
  mjd.act[:] = rng.uniform(0, 1, size=mjm.na)
  mjd.qfrc_applied[:] = rng.normal(size=mjm.nv) * 0.1
  mjd.xfrc_applied[1:] = rng.normal(size=(mjm.nbody - 1, 6)) * 0.1
  return rng


def assert_close(ours, theirs, name, rtol=1e-9, atol=1e-9):
  """Relative agreement, absolute near zero, with the field name in the message."""
  ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
  assert ours.shape == theirs.shape, f"{name}: shape {ours.shape} != {theirs.shape}"
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=name)
