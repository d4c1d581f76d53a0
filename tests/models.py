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


def suite_mjmodel(name):
  """MuJoCo's compiled model of a dm_control suite model."""
  import mujoco
  src, assets = suite_source(name)
  return (mujoco.MjModel.from_xml_string(src, assets) if assets
          else mujoco.MjModel.from_xml_path(src))


def models_of(source, quiet=False, assets=None):
  """(ours, MuJoCo's) models of an MJCF string (with its `assets`: {file name: bytes}) or file
  path; `quiet` silences our compiler's warnings (attributes that change only the drawing,
  ...)."""
  import warnings

  import mujoco
  import numjoco
  with warnings.catch_warnings():
    if quiet:
      warnings.simplefilter("ignore")
    m = numjoco.load_model(source, assets=assets) if assets else numjoco.load_model(source)
  if assets:
    return m, mujoco.MjModel.from_xml_string(source, assets)
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
MODELS = os.path.join(ASSETS, "models")                 # the tests' own models (its README)


def model_xml(name, **fields):
  """The MJCF text of tests/assets/models/`name`.xml ("implicit/actuated"); with `fields`, its
  {placeholders} filled in (str.format)."""
  with open(os.path.join(MODELS, name + ".xml"), encoding="utf-8") as f:
    text = f.read()
  return text.format(**fields) if fields else text


def write_xml(folder, name, xml):
  """Write the MJCF text `xml` to the file `name` in `folder` (a pathlib.Path); its path, a
  str."""
  path = folder / name
  path.write_text(xml)
  return str(path)


def models_named(name, quiet=True):
  """(ours, MuJoCo's) models of a dm_control suite model ("humanoid") or of a file under
  tests/assets/mujoco_models (MuJoCo's own models, "model/car/car.xml") or tests/assets."""
  if "/" in name or name.endswith(".xml"):
    path = os.path.join(MUJOCO_MODELS, name)
    return models_of(path if os.path.exists(path) else os.path.join(ASSETS, name), quiet)
  src, assets = suite_source(name)
  return models_of(src, quiet, assets)


def load_both(name, disable_constraint=True):
  """(ours, mujoco's) compiled models of a suite model, constraints disabled on both."""
  import mujoco
  import numjoco
  m, mjm = models_named(name, quiet=False)
  if disable_constraint:
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags = m.opt.disableflags | int(numjoco.mjtDisableBit.CONSTRAINT)
  return m, mjm


def quat_adrs(mjm):
  """qpos addresses of every quaternion of a MuJoCo model: each ball joint's and each free
  joint's (after its 3 position numbers)."""
  import mujoco
  adrs = []
  for j in range(mjm.njnt):
    if mjm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
      adrs.append(mjm.jnt_qposadr[j] + 3)
    elif mjm.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
      adrs.append(mjm.jnt_qposadr[j])
  return adrs


def arm_chain(h1="", in_b3=""):
  """MJCF of a three-link arm hanging from (0, 0, 1), indented for a worldbody: body b1 on
  hinge h1 and b2 on hinge h2 (y axis, capsules 0.3 long of the default geom class), then b3
  on slide s3 (x axis) with a small box; `h1` adds attributes to joint h1, `in_b3` is MJCF put
  inside b3 after its box."""
  return f"""    <body name="b1" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.05"{h1}/>
      <geom fromto="0 0 0 0.3 0 0"/>
      <body name="b2" pos="0.3 0 0">
        <joint name="h2" type="hinge" axis="0 1 0" damping="0.05"/>
        <geom fromto="0 0 0 0.3 0 0"/>
        <body name="b3" pos="0.3 0 0">
          <joint name="s3" type="slide" axis="1 0 0" damping="0.5"/>
          <geom type="box" size="0.04 0.03 0.03"/>
{in_b3}
        </body>
      </body>
    </body>
"""


def random_pos_vel(mjm, mjd, rng, scale):
  """Draw from `rng` a random qpos (qpos0 plus normal noise times `scale`, quaternions then
  normalised) and a standard-normal qvel into mjd."""
  import mujoco
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv)


def random_state(mjm, mjd, seed, scale=0.3):
  """Put a random but valid state (normalised quaternions) and random controls into mjd."""
  rng = np.random.default_rng(seed)
  random_pos_vel(mjm, mjd, rng, scale)
  lo, hi = mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0))
  mjd.ctrl[:] = rng.uniform(-1, 1, size=mjm.nu)
  mjd.act[:] = rng.uniform(0, 1, size=mjm.na)
  mjd.qfrc_applied[:] = rng.normal(size=mjm.nv) * 0.1
  mjd.xfrc_applied[1:] = rng.normal(size=(mjm.nbody - 1, 6)) * 0.1
  return rng


def forward_both(m, mjm, mjd):
  """Our Data with mjd's state (interop.data_from_mujoco); numjoco.forward and mj_forward run.
  Returns our Data."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  return d


def inverse_both(m, mjm, mjd):
  """Our Data with mjd's state and qacc; numjoco.inverse and mj_inverse run. Returns our
  Data."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.qacc[:] = mjd.qacc
  numjoco.inverse(m, d)
  mujoco.mj_inverse(mjm, mjd)
  return d


def pair_pose(mjm, mjd, rng, plane, top=0.15):
  """Reset mjd and pose a pair near touching: free body B (qpos[7:14]) 0.3 above free body A
  with an offset up to 0.12 per axis, both turned at random; with `plane`, the one free body
  at a height in [-0.02, top] over the plane, turned at random. Runs mj_forward."""
  import mujoco
  mujoco.mj_resetData(mjm, mjd)
  if not plane:
    mjd.qpos[3:7] = rng.normal(size=4)
    mjd.qpos[0:3] = [0, 0, 0.3]
    mjd.qpos[7:10] = [0, 0, 0.3] + rng.uniform(-0.12, 0.12, 3)
    mjd.qpos[10:14] = rng.normal(size=4)
  else:
    mjd.qpos[0:3] = [0, 0, rng.uniform(-0.02, top)]
    mjd.qpos[3:7] = rng.normal(size=4)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mujoco.mj_forward(mjm, mjd)


def free_pose_forward(m, d, mjm, mjd, rng, half, height):
  """Put the first free joint (qpos[0:7]) of mjd at x, y uniform in (-half, half), z uniform in
  `height` (lo, hi), turned at random; run mj_forward, copy qpos into our Data d and run
  numjoco.forward."""
  import mujoco

  import numjoco
  mjd.qpos[0:3] = [rng.uniform(-half, half), rng.uniform(-half, half), rng.uniform(*height)]
  mjd.qpos[3:7] = rng.normal(size=4)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mujoco.mj_forward(mjm, mjd)
  d.qpos[:] = mjd.qpos
  numjoco.forward(m, d)


def assert_mjcf_error(xml, match, where):
  """Compiling the MJCF string `xml` raises MjcfError matching `match`, its message naming
  `where` (line and element, such as ":2: <hfield")."""
  import pytest

  from numjoco.engine.mjcf import MjcfError, compile_model
  with pytest.raises(MjcfError, match=match) as e:
    compile_model(xml)
  assert where in str(e.value)


def terrain_pose(mjm, mjd, rng):
  """Reset mjd and put its free body over a height field at random: x, y within (0.7, 0.56)
  of the centre, 0 to 0.35 high, turned at random. Runs mj_forward."""
  import mujoco
  mujoco.mj_resetData(mjm, mjd)
  xy = rng.uniform(-0.7, 0.7, 2) * [1.0, 0.8]
  mjd.qpos[0:3] = [xy[0], xy[1], rng.uniform(0.0, 0.35)]
  mjd.qpos[3:7] = rng.normal(size=4)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mujoco.mj_forward(mjm, mjd)


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


def teacher_forced(m, mjm, nstep, every=1, seed=0, mjd=None, ctrl=(-1.0, 1.0),
                   before_step=None):
  """MuJoCo steps `nstep` times from `mjd` (a new MjData by default), with random controls
  uniform in `ctrl` = (low, high) (None: the controls stay) and `before_step(mjd, i)` called
  before each step; at every `every`-th step its state goes into our Data and both run forward.
  Yields (step, our Data, MuJoCo's MjData)."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  mjd = mujoco.MjData(mjm) if mjd is None else mjd
  d = numjoco.make_data(m)
  rng = np.random.default_rng(seed)
  for i in range(nstep):
    if ctrl is not None and mjm.nu:
      mjd.ctrl[:] = rng.uniform(ctrl[0], ctrl[1], mjm.nu)
    if before_step is not None:
      before_step(mjd, i)
    mujoco.mj_step(mjm, mjd)
    if i % every:
      continue
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    yield i, d, mjd


def assert_teacher_forced(m, mjm, nstep=200, tol=1e-5, seed=0, contacts=True):
  """Teacher-forced rollout: MuJoCo steps (random controls in each actuator's ctrlrange, or
  [-1, 1]); at every step its state goes into ours, both run forward, and the contact lists
  (count, geom pairs, distances to 1e-8) and qacc (`tol` of its scale) must agree. Returns
  the worst relative qacc error."""
  import warnings
  lo, hi = (mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0)))
  free = ~mjm.actuator_ctrllimited.astype(bool) if mjm.nu else np.zeros(0, bool)
  lo, hi = np.where(free, -1.0, lo), np.where(free, 1.0, hi)
  worst = 0.0
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for i, d, mjd in teacher_forced(m, mjm, nstep, seed=seed, ctrl=(lo, hi)):
      if contacts:
        assert d.ncon == mjd.ncon, f"step {i}: ncon {d.ncon} != {mjd.ncon}"
        np.testing.assert_array_equal(d.contact_geom1[:d.ncon], mjd.contact.geom1,
                                      err_msg=f"step {i}: geom1")
        np.testing.assert_array_equal(d.contact_geom2[:d.ncon], mjd.contact.geom2,
                                      err_msg=f"step {i}: geom2")
        np.testing.assert_allclose(d.contact_dist[:d.ncon], mjd.contact.dist, rtol=0,
                                   atol=1e-8, err_msg=f"step {i}: dist")
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
