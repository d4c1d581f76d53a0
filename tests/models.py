"""Shared test fixtures: models loaded in both engines (an MJCF string or file, the dm_control
suite models), and the comparisons of compiled models and forward results with MuJoCo's."""
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


def models_of(source, quiet=False):
  """(ours, MuJoCo's) models of an MJCF string or file path; `quiet` silences our compiler's
  warnings (attributes that change only the drawing, ...)."""
  import warnings

  import mujoco
  import numjoco
  with warnings.catch_warnings():
    if quiet:
      warnings.simplefilter("ignore")
    m = numjoco.load_model(source)
  text = isinstance(source, str) and source.lstrip().startswith("<")
  return m, (mujoco.MjModel.from_xml_string(source) if text
             else mujoco.MjModel.from_xml_path(os.fspath(source)))


def models_and_data(source, quiet=False):
  """(ours, our Data, MuJoCo's, its MjData) of an MJCF string or file path."""
  import mujoco
  import numjoco
  m, mjm = models_of(source, quiet)
  return m, numjoco.make_data(m), mjm, mujoco.MjData(mjm)


ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
MUJOCO_MODELS = os.path.join(ASSETS, "mujoco_models")   # MuJoCo's own models (its README)


def models_named(name, quiet=True):
  """(ours, MuJoCo's) models of a dm_control suite model ("humanoid") or of a file under
  tests/assets/mujoco_models (MuJoCo's own models, "model/car/car.xml") or tests/assets."""
  import warnings

  import mujoco
  import numjoco
  if "/" in name or name.endswith(".xml"):
    path = os.path.join(MUJOCO_MODELS, name)
    return models_of(path if os.path.exists(path) else os.path.join(ASSETS, name), quiet)
  src, assets = suite_source(name)
  if not assets:
    return models_of(src, quiet)
  with warnings.catch_warnings():
    if quiet:
      warnings.simplefilter("ignore")
    m = numjoco.load_model(src, assets=assets)
  return m, mujoco.MjModel.from_xml_string(src, assets)


def load_both(name, disable_constraint=True):
  """(ours, mujoco's) compiled models of a suite model, constraints disabled on both."""
  import mujoco
  import numjoco
  m, mjm = models_named(name, quiet=False)
  if disable_constraint:
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags = m.opt.disableflags | int(numjoco.mjtDisableBit.CONSTRAINT)
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




# Compile-time constants computed by another module (they need the dynamics at qpos0): left
# out of compile_model's comparison, compared on the loaded model.
SETCONST_SKIPPED = {
    "dof_invweight0", "body_invweight0", "tendon_invweight0", "actuator_acc0",
    "actuator_length0", "tendon_length0", "dof_M0", "cam_poscom0", "cam_pos0", "cam_mat0",
    "light_poscom0", "light_pos0", "light_dir0", "actuator_lengthrange", "tendon_lengthspring",
    "dof_length",   # from the body sizes at qpos0 (mj_setConst)
}


def reference_fields(mjm):
  """(sizes, {field: numpy array}) of every MODEL_TABLE field of a MjModel, in our sizes and
  shapes (no Numba kernels needed)."""
  from numjoco.engine import types as t
  sizes = {k: int(getattr(mjm, k, -1)) for k in t.MODEL_SIZES}
  # MuJoCo grows an arena (nconmax = njmax = -1); we preallocate (types.contact_capacity)
  sizes.update(t.contact_capacity(sizes, mjm.nconmax, mjm.njmax, mjm.opt.ccd_iterations,
                                  t.efc_row_nnz_of(mjm)))
  out = {}
  for name, dtype, shape in t.MODEL_TABLE:
    v = getattr(mjm.opt, name[4:]) if name.startswith("opt_") else getattr(mjm, name, None)
    if v is not None:
      out[name] = np.array(v, dtype).reshape(t.resolve_shape(shape, sizes))
  return sizes, out


def assert_compiles_as_mujoco(path, skip=()):
  """Compile `path` in both engines; every field equal (tests.test_mjcf_compile.assert_same)
  except `skip`. Returns (ours, mjm) with
  ours = compile_model's (sizes, arrays, names)."""
  import warnings

  import mujoco

  from numjoco.engine.mjcf import compile_model
  from tests.test_mjcf_compile import assert_same
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # e.g. ignored attributes are warned about
    ours = compile_model(path)
  mjm = mujoco.MjModel.from_xml_path(path)
  assert_same(ours, mjm, tuple(skip))
  return ours, mjm


def assert_forward_as_mujoco(m, d, mjm, mjd, what, ncon=False,
                             fields=("qpos", "qvel", "ctrl", "act", "qfrc_applied",
                                     "xfrc_applied")):
  """Copy mjd's state `fields` into d, run both forwards, compare the contact count (with
  `ncon`), qacc (1e-6 of its scale) and sensordata (1e-6)."""
  import warnings

  import mujoco

  import numjoco
  mujoco.mj_forward(mjm, mjd)
  for f in fields:
    getattr(d, f)[:] = getattr(mjd, f)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    numjoco.forward(m, d)
  if ncon:
    assert d.ncon == mjd.ncon, f"{what}: ncon"
  scale = 1.0 + np.abs(mjd.qacc).max(initial=0.0)
  np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0, atol=1e-6 * scale,
                             err_msg=f"{what}: qacc")
  np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-6, atol=1e-6,
                             err_msg=f"{what}: sensordata")


def assert_teacher_forced(m, mjm, nstep=200, tol=1e-5, seed=0, contacts=True):
  """Teacher-forced rollout: MuJoCo steps (random controls in each actuator's ctrlrange, or
  [-1, 1]); at every step its state goes into ours, both run forward, and the contact lists
  (count, geom pairs, distances to 1e-8) and qacc (`tol` of its scale) must agree. Returns
  the worst relative qacc error."""
  import warnings

  import mujoco

  import numjoco
  from numjoco.engine import interop
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(seed)
  lo, hi = (mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0)))
  free = ~mjm.actuator_ctrllimited.astype(bool) if mjm.nu else np.zeros(0, bool)
  lo, hi = np.where(free, -1.0, lo), np.where(free, 1.0, hi)
  worst = 0.0
  for i in range(nstep):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(lo, hi)
    mujoco.mj_step(mjm, mjd)
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      numjoco.forward(m, d)
    if contacts:
      assert d.ncon == mjd.ncon, f"step {i}: ncon {d.ncon} != {mjd.ncon}"
      np.testing.assert_array_equal(d.contact_geom1[:d.ncon], mjd.contact.geom1,
                                    err_msg=f"step {i}: geom1")
      np.testing.assert_array_equal(d.contact_geom2[:d.ncon], mjd.contact.geom2,
                                    err_msg=f"step {i}: geom2")
      np.testing.assert_allclose(d.contact_dist[:d.ncon], mjd.contact.dist, rtol=0, atol=1e-8,
                                 err_msg=f"step {i}: dist")
    scale = 1.0 + np.abs(mjd.qacc).max(initial=0.0)
    err = float(np.abs(d.qacc - mjd.qacc).max(initial=0.0) / scale)
    assert err <= tol, f"step {i}: qacc differs by {err:.3g} of its scale"
    worst = max(worst, err)
  return worst


def load_flex_model(source, assets=None):
  """A Model as numjoco.load_model builds it, also of the flex features the engine does not
  simulate yet (tests of the compiler and of the stages it has)."""
  from numjoco.engine import api, preview
  return api.build_model(preview.Compiled(source, assets, simulated=False))
