"""One pipeline stage of ours against MuJoCo's same stage, on MuJoCo's inputs
(tests/conformance/test_stages.py).

`run_stage` puts a random state into MuJoCo, runs mj_forward (every stage's inputs are then
MuJoCo's: a stage's inputs are the outputs of the stages before it, which later stages do not
change), copies every field both Data hold into ours, fills the stage's outputs in ours with
NaN (integers with `SENTINEL`), runs exactly one stage of ours and the same stage of MuJoCo's,
and compares the outputs. An output our stage did not write stays NaN and fails the
comparison, so a stage that does nothing fails. The output lists follow mjdata.h's comments
and MuJoCo's computation chapter (which stage computes which field)."""
import collections
import warnings

import numpy as np

SENTINEL = -987654321          # an integer output our stage did not write
RTOL = ATOL = 1e-9

# `enable`: enable bits (mjtEnableBit names) the stage needs to do anything
Stage = collections.namedtuple("Stage", "ours mujoco outputs enable", defaults=((),))


def _stages():
  """{name: Stage}: our unit (called on (Model, Data)), MuJoCo's function (on (MjModel,
  MjData)) and the Data fields the stage computes."""
  import mujoco

  from numjoco.engine import actuation, constraint, forward, passive
  from numjoco.engine.collision import driver as collision_driver
  from numjoco.engine import sensor, smooth

  def ours(fn):
    return lambda m, d: fn(m.struct, d.struct)

  def sensors(fn, stage):
    return Stage(ours(fn), getattr(mujoco, stage[0]), (("sensordata", stage[1]),))

  contact = tuple("contact_" + f for f in _CONTACT)
  return {
      "kinematics": Stage(ours(smooth.kinematics), mujoco.mj_kinematics, (
          "xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos",
          "geom_xmat", "site_xpos", "site_xmat")),
      "com_pos": Stage(ours(smooth.com_pos), mujoco.mj_comPos, ("subtree_com", "cinert", "cdof")),
      "camlight": Stage(ours(smooth.camlight), mujoco.mj_camlight, (
          "cam_xpos", "cam_xmat", "light_xpos", "light_xdir")),
      "tendon": Stage(ours(smooth.tendon), mujoco.mj_tendon, (
          "ten_length", "ten_J", "ten_wrapadr", "ten_wrapnum", "wrap_obj", "wrap_xpos")),
      # our crb adds the tendon armature to M as mj_makeM does after mj_crb
      "crb": Stage(ours(smooth.crb), mujoco.mj_makeM, ("crb", "M")),
      "factor_m": Stage(ours(smooth.factor_m), mujoco.mj_factorM, ("qLD", "qLDiagInv")),
      "collision": Stage(ours(collision_driver.collision), mujoco.mj_collision,
                         ("ncon",) + contact),
      "make_constraint": Stage(ours(constraint.make_constraint), mujoco.mj_makeConstraint, (
          "ne", "nf", "nl", "nefc", "efc_type", "efc_id", "efc_J", "efc_pos", "efc_margin",
          "efc_frictionloss", "efc_diagA", "efc_KBIP", "efc_D", "efc_R", "contact_efc_address")),
      "transmission": Stage(ours(smooth.transmission), mujoco.mj_transmission, (
          "actuator_length", "actuator_moment")),
      "com_vel": Stage(ours(smooth.com_vel), mujoco.mj_comVel, ("cvel", "cdof_dot")),
      "passive": Stage(ours(passive.passive), mujoco.mj_passive, (
          "qfrc_spring", "qfrc_damper", "qfrc_gravcomp", "qfrc_fluid", "qfrc_passive")),
      # under DIAGEXACT: diag(J M^-1 J') and the impedance from it
      "project_constraint": Stage(ours(constraint.project_constraint),
                                  mujoco.mj_projectConstraint,
                                  ("efc_diagA", "efc_KBIP", "efc_D", "efc_R"), ("DIAGEXACT",)),
      "reference_constraint": Stage(ours(constraint.reference_constraint),
                                    mujoco.mj_referenceConstraint, ("efc_vel", "efc_aref")),
      "rne": Stage(lambda m, d: smooth.rne(m.struct, d.struct, False, d.qfrc_bias),
                   lambda mjm, mjd: mujoco.mj_rne(mjm, mjd, 0, mjd.qfrc_bias), ("qfrc_bias",)),
      "fwd_velocity": Stage(ours(forward.fwd_velocity), mujoco.mj_fwdVelocity, (
          "ten_velocity", "actuator_velocity", "cvel", "cdof_dot", "qfrc_spring", "qfrc_damper",
          "qfrc_gravcomp", "qfrc_fluid", "qfrc_passive", "efc_vel", "efc_aref", "qfrc_bias")),
      "fwd_actuation": Stage(ours(actuation.fwd_actuation), mujoco.mj_fwdActuation, (
          "actuator_force", "qfrc_actuator", "act_dot")),
      "fwd_acceleration": Stage(ours(forward.fwd_acceleration), mujoco.mj_fwdAcceleration, (
          "qfrc_smooth", "qacc_smooth")),
      "fwd_constraint": Stage(ours(forward.fwd_constraint), mujoco.mj_fwdConstraint, (
          "efc_b", "efc_force", "efc_state", "qfrc_constraint", "qacc")),
      "sensor_pos": sensors(sensor.sensor_pos, ("mj_sensorPos", 1)),
      "sensor_vel": sensors(sensor.sensor_vel, ("mj_sensorVel", 2)),
      "sensor_acc": sensors(sensor.sensor_acc, ("mj_sensorAcc", 3)),
      "rne_post_constraint": Stage(ours(sensor.rne_post_constraint), mujoco.mj_rnePostConstraint,
                                   ("cacc", "cfrc_int", "cfrc_ext")),
  }


_CONTACT = ("dist", "pos", "frame", "includemargin", "friction", "solref", "solreffriction",
            "solimp", "mu", "H", "dim", "geom", "flex", "elem", "vert", "exclude")
STAGES = None


def stage(name):
  """The Stage called `name` (the table is built on first use: it imports the engine)."""
  global STAGES
  if STAGES is None:
    STAGES = _stages()
  return STAGES[name]


def _theirs(mjd, name):
  """MuJoCo's value of our Data field `name` (contact_* from its contact struct), or None."""
  if name.startswith("contact_"):
    return np.asarray(getattr(mjd.contact, name[8:]))
  if name in ("ne", "nf", "nl", "nefc", "ncon"):
    return np.array([getattr(mjd, name)])
  v = getattr(mjd, name, None)
  return None if v is None else np.asarray(v)


def copy_data(mjm, mjd, d):
  """Every field of our Data that MuJoCo's MjData holds, from mjd: whole when the sizes agree,
  the leading rows of our preallocated contact and constraint arrays, efc_J through its dense
  form (MuJoCo stores it dense or sparse)."""
  from numjoco.engine import interop
  for name, ours in d._arrays.items():
    theirs = _theirs(mjd, name)
    if theirs is None or name.startswith("efc_J"):
      continue
    if theirs.size == ours.size:
      ours[...] = theirs.reshape(ours.shape)
    elif ours.ndim and theirs.size % max(1, int(np.prod(ours.shape[1:]))) == 0:
      rows = theirs.reshape((-1,) + ours.shape[1:])
      if len(rows) <= len(ours):
        ours[:len(rows)] = rows
  interop.efc_J_from_dense(d, interop.efc_J_dense(mjm, mjd))
  d.time = mjd.time


# sparse outputs: their row structure; compared as dense matrices (the engines may keep
# different explicit zeros), the structure only checked to be written
SPARSE = {"efc_J": ("efc_J_rownnz", "efc_J_rowadr", "efc_J_colind"),
          "actuator_moment": ("moment_rownnz", "moment_rowadr", "moment_colind")}


def _dense(vals, rownnz, rowadr, colind, nrow, ncol):
  """A CSR matrix (MuJoCo's rownnz/rowadr/colind layout) as a dense (nrow, ncol) array."""
  out = np.zeros((nrow, ncol))
  for i in range(nrow):
    a, n = rowadr[i], rownnz[i]
    out[i, colind[a:a + n]] = vals[a:a + n]
  return out


def _sparse_rows(d, mjm, mjd, name):
  """(ours, MuJoCo's) dense matrices of the sparse output `name`."""
  from numjoco.engine import interop
  index = [d._arrays[f] for f in SPARSE[name]]
  nrow = mjd.nefc if name == "efc_J" else mjm.nu
  for f, a in zip(SPARSE[name], index):
    assert not (a[:nrow] == SENTINEL).any(), f"{f} left unwritten by the stage"
  ours = _dense(d._arrays[name], *index, nrow, mjm.nv)
  if name == "efc_J":
    return ours, interop.efc_J_dense(mjm, mjd)
  return ours, _dense(mjd.actuator_moment, mjd.moment_rownnz, mjd.moment_rowadr,
                      mjd.moment_colind, nrow, mjm.nv)


def _rows(m, d, mjm, mjd, name):
  """(ours, MuJoCo's) arrays of output `name` over the entries the stage defines (the used
  contacts, constraint rows, wrap points and actuator moments; a sensor stage's entries)."""
  if isinstance(name, tuple):   # ("sensordata", stage): that stage's sensors
    keep = np.concatenate([np.arange(a, a + n) for a, n, s in zip(
        mjm.sensor_adr, mjm.sensor_dim, mjm.sensor_needstage) if s == name[1]] or [[]]).astype(int)
    return d.sensordata[keep], mjd.sensordata[keep]
  if name in SPARSE:
    return _sparse_rows(d, mjm, mjd, name)
  ours, theirs = d._arrays[name], _theirs(mjd, name)
  if name.startswith("wrap_"):   # 2 nwrap points (obj: 1 entry, xpos: 3), the first used
    width = ours.size // (2 * mjm.nwrap)
    n = width * int(np.sum(mjd.ten_wrapnum))
    return ours.reshape(-1)[:n], theirs.reshape(-1)[:n]
  rows = {"contact": mjd.ncon, "efc": mjd.nefc}
  for prefix, n in rows.items():
    if name.startswith(prefix):
      return ours[:n], theirs.reshape((-1,) + ours.shape[1:])[:n]
  return ours, theirs.reshape(ours.shape)


def _fill(d, names):
  """NaN (integers: SENTINEL) into the outputs `names` of our Data."""
  for name in names:
    if isinstance(name, tuple):
      d.sensordata[...] = np.nan
      continue
    for f in (name,) + SPARSE.get(name, ()):
      a = d._arrays[f]
      a[...] = np.nan if a.dtype.kind == "f" else SENTINEL


def run_stage(name, m, d, mjm, mjd, seed, steps=150, rtol=RTOL, atol=ATOL, ours=None):
  """A random state (tests.models.random_state), `steps` MuJoCo steps from it (bodies fall
  into contact, the warmstart is a step's) and mj_forward; MuJoCo's Data into ours; NaN into
  the outputs of stage `name`; our stage and MuJoCo's; every output compared (none left NaN
  or SENTINEL, `rtol`/`atol`). `ours` replaces our stage (to check that a wrong stage
  fails). Returns the number of array entries compared (> 0: the state
  exercises the stage)."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  from tests.models import random_state
  st = stage(name)
  for bit in st.enable:
    mjm.opt.enableflags |= int(getattr(mujoco.mjtEnableBit, "mjENBL_" + bit))
    m.opt.enableflags = m.opt.enableflags | int(getattr(numjoco.mjtEnableBit, bit))
  random_state(mjm, mjd, seed)
  for _ in range(steps):
    mujoco.mj_step(mjm, mjd)
  mujoco.mj_forward(mjm, mjd)
  interop.data_from_mujoco(mjd, d)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    numjoco.forward(m, d)   # our fields MuJoCo does not have (work buffers) as our pipeline's
  copy_data(mjm, mjd, d)
  _fill(d, st.outputs)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    (ours or st.ours)(m, d)
  st.mujoco(mjm, mjd)
  count = 0
  for out in st.outputs:
    ours, theirs = _rows(m, d, mjm, mjd, out)
    what = f"{name}: {out}"
    if ours.dtype.kind == "f":
      assert not np.isnan(ours).any(), f"{what} left NaN: the stage did not compute it"
    else:
      assert not (ours == SENTINEL).any(), f"{what} left unwritten by the stage"
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=what)
    if out not in ("ncon", "ne", "nf", "nl", "nefc"):
      count += ours.size
  return count
