"""MuJoCo's `discrete` integrator (engine/discrete.py): the constraint solve in the effective
metric Mhat = M + h D + h^2 K and the implicit constraint rows, compared with the installed
MuJoCo field by field (no source of this integrator was available: the rules were measured
on it, so these comparisons are the specification)."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import models_named

_DISCRETE = 4

# a chain with every backbone term (linear and polynomial joint damping and stiffness, armature,
# a slide) and actuators whose slopes stabilise (position servo), mix (affine gain times ctrl)
# and destabilise (a positive length bias, clamped out of the metric)
CHAIN = """<mujoco><option integrator="discrete" timestep="0.01"><flag contact="disable"/></option>
<worldbody>
<body><joint name="a" type="hinge" axis="0 1 0" stiffness="50" damping="3" springref="0.2" armature="0.1"/>
<geom type="capsule" fromto="0 0 0 0.3 0 -1" size=".05" mass="1"/>
 <body pos="0.3 0 -1"><joint name="b" type="hinge" axis="1 0 0" stiffness="20 5 3" damping="1 2 0.5"/>
 <geom type="capsule" fromto="0 0 0 0 0.2 -1" size=".05" mass="1"/>
  <body pos="0 0.2 -1"><joint name="c" type="slide" axis="0 0 1" stiffness="10" damping="2"/>
  <geom type="box" size=".1 .2 .3" mass="2"/></body>
 </body></body></worldbody>
<actuator><position joint="a" kp="30" kv="4"/>
<general joint="b" gainprm="5 -3 2" biasprm="1 -7 -2" gaintype="affine" biastype="affine"/>
<general joint="c" gainprm="-5" biasprm="0 5 -1" biastype="affine"/></actuator></mujoco>"""

# a capsule on a hinge and a slide above a plane: a joint limit, a friction loss row, contacts
# and a joint equality to a second body; solref/solimp set per case
CONTACT = """<mujoco><option integrator="discrete" timestep="0.01" cone="{cone}"/>
<default><geom solref="{solref}" solimp="{solimp}"/></default>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 0.3"><joint name="h" type="hinge" axis="0 1 0" damping="{damping}" armature="0.05"
  range="-0.5 0.5" solreflimit="{solref}" solimplimit="{solimp}" frictionloss="0.3"/>
<joint type="slide" axis="0 0 1" damping="{damping}"/>
<geom type="capsule" fromto="0 0 0 0.5 0 -0.3" size=".05" mass="1"/></body>
<body pos="1 0 1"><joint name="h2" type="hinge" axis="0 1 0" damping="2"/><geom type="sphere" size=".1" mass="1"/></body>
</worldbody><equality><joint joint1="h" joint2="h2" solref="{solref}" solimp="{solimp}"/></equality>
</mujoco>"""

# two standalone free boxes spinning with asymmetric inertia, one resting on the floor
FREE = """<mujoco><option integrator="discrete" timestep="0.01" solver="{solver}"><flag island="{island}"/></option>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 0.29"><freejoint/><geom type="box" size=".1 .2 .3" mass="1"/></body>
<body pos="2 0 1"><freejoint/><geom type="box" size=".1 .2 .3" mass="1"/></body></worldbody></mujoco>"""


def _both(xml, tmp_path):
  path = os.path.join(tmp_path, "model.xml")
  with open(path, "w") as f:
    f.write(xml)
  return numjoco.load_model(path), mujoco.MjModel.from_xml_string(xml)


def _close(ours, theirs, name, rtol=1e-9, atol=1e-9):
  np.testing.assert_allclose(np.asarray(ours, float), np.asarray(theirs, float), rtol=rtol,
                             atol=atol, err_msg=name)


def test_parse_discrete(tmp_path):
  m, mjm = _both(CHAIN, tmp_path)
  assert m.opt.integrator == int(mujoco.mjtIntegrator.mjINT_DISCRETE) == _DISCRETE
  assert numjoco.mjtIntegrator.DISCRETE == _DISCRETE


@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
def test_smooth_metric(tmp_path, solver):
  """qacc_smooth = Mhat^-1 (qfrc_smooth - h K qvel): joint terms in the backbone; actuator slopes
  clamped to the stabilising sign, and left out of the metric under PGS."""
  m, mjm = _both(CHAIN.replace('timestep="0.01"', f'timestep="0.01" solver="{solver}"'), tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(0)
  for _ in range(3):
    mjd.qpos[:] = rng.normal(size=3) * 0.5
    mjd.qvel[:] = rng.normal(size=3)
    mjd.ctrl[:] = rng.normal(size=3)
    d.qpos[:], d.qvel[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    _close(d.qfrc_smooth, mjd.qfrc_smooth, "qfrc_smooth")
    _close(d.qacc_smooth, mjd.qacc_smooth, "qacc_smooth")
    _close(d.qacc, mjd.qacc, "qacc")


def test_step_is_the_step_map(tmp_path):
  """qvel advances by h qacc and qpos by h qvel+, with no further implicit solve."""
  m, mjm = _both(CHAIN, tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  mjd.qpos[:] = [0.3, -0.2, 0.1]
  mjd.qvel[:] = [1.0, -2.0, 0.5]
  mjd.ctrl[:] = [0.2, -0.4, 0.3]
  d.qpos[:], d.qvel[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
  for _ in range(50):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  _close(d.qpos, mjd.qpos, "qpos", rtol=1e-8, atol=1e-10)
  _close(d.qvel, mjd.qvel, "qvel", rtol=1e-8, atol=1e-10)


_ROWS = [("0.02 1", "0.9 0.95 0.001"),      # as authored
         ("0.005 1", "0.9 0.95 0.001"),     # stiffer than the step: replaced
         ("0.015 0.5", "0.9 0.95 0.001"),   # replaced, damping ratio kept
         ("0.0102 1", "0.9 0.9 0.001"),     # between h and h / sqrt(dmax): replaced
         ("-1000 -10", "0.9 0.95 0.001"),   # direct stiffness and damping
         ("-100000 -10", "0.9 0.95 0.001"),  # direct and stiff: never replaced
         ("0.02 1", "0.9999 0.9999 0.001"),   # impedance capped at MAXIMP
         ("0.003 1", "0.9998 0.9998 0.001"),  # replaced, damping held by the cap
         ("0.003 2", "0.99 0.9998 0.5"),      # replaced at a mid-width impedance
         ("0.005 1", "0.99 0.99 0.001")]


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("damping", ["0", "5"])
@pytest.mark.parametrize("solref,solimp", _ROWS)
def test_constraint_rows(tmp_path, cone, damping, solref, solimp):
  """KBIP, R, D and aref of limit, friction-loss, equality and contact rows, and the solved
  qacc and forces."""
  xml = CONTACT.format(cone=cone, solref=solref, solimp=solimp, damping=damping)
  m, mjm = _both(xml, tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for qpos, qvel in (([0.52, -0.004, 0.1], [0.3, -0.5, 0.2]), ([0.3, -0.02, 0.1], [-1, -2, 1])):
    mjd.qpos[:] = qpos
    mjd.qvel[:] = qvel
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    n = mjd.nefc
    assert d.nefc == n and n > 4
    _close(d.efc_type[:n], mjd.efc_type, "efc_type")
    _close(d.efc_KBIP[:n], mjd.efc_KBIP, "efc_KBIP")
    _close(d.efc_R[:n], mjd.efc_R, "efc_R")
    _close(d.efc_D[:n], mjd.efc_D, "efc_D")
    _close(d.efc_aref[:n], mjd.efc_aref, "efc_aref")
    _close(d.qacc, mjd.qacc, "qacc", rtol=1e-7, atol=1e-7)
    _close(d.efc_force[:n], mjd.efc_force, "efc_force", rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
@pytest.mark.parametrize("island", ["enable", "disable"])
def test_free_bodies(tmp_path, solver, island):
  """A standalone free body no constraint touches gets the exact gyroscopic solve; one resting
  on the floor keeps the symmetric metric."""
  m, mjm = _both(FREE.format(solver=solver, island=island), tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  mjd.qvel[:] = [0.1, 0.2, -0.3, 5, -3, 8] * 2
  d.qvel[:] = mjd.qvel
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  assert d.nefc == mjd.nefc > 0
  tol = 1e-9 if solver == "Newton" else 1e-4
  _close(d.qacc_smooth, mjd.qacc_smooth, "qacc_smooth")
  _close(d.qacc[6:], mjd.qacc[6:], "qacc of the flying box")
  _close(d.qacc[:6], mjd.qacc[:6], "qacc of the resting box", rtol=tol, atol=tol)
  for _ in range(20):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  _close(d.qvel[6:], mjd.qvel[6:], "qvel of the flying box", rtol=1e-9, atol=1e-9)


def _teacher_forced(m, mjm, nstep, seed, ctrl_scale=1.0):
  """Worst relative qacc difference along MuJoCo's trajectory with random controls, our state
  reset to MuJoCo's before every forward."""
  rng = np.random.default_rng(seed)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * 0.1
  worst = 0.0
  for _ in range(nstep):
    if mjm.nu:
      c = rng.uniform(-1, 1, mjm.nu) * ctrl_scale
      lo, hi = mjm.actuator_ctrlrange.T
      mjd.ctrl[:] = np.where(mjm.actuator_ctrllimited > 0, lo + (c + 1) / 2 * (hi - lo), c)
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.act, mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    d.time = mjd.time
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    assert d.ncon == mjd.ncon
    scale = 1.0 + np.abs(mjd.qacc)
    worst = max(worst, float(np.max(np.abs(d.qacc - mjd.qacc) / scale)))
    _close(d.qacc_smooth, mjd.qacc_smooth, "qacc_smooth", rtol=1e-7, atol=1e-7)
    mujoco.mj_step(mjm, mjd)
  return worst


# suite models with contacts, limits, tendons (coupled metric: swimmer's and finger's), and
# position and velocity servos
@pytest.mark.parametrize("name", ["cartpole", "acrobot", "reacher", "cheetah", "walker", "hopper",
                                  "humanoid", "swimmer", "finger", "manipulator"])
def test_suite_teacher_forced(name):
  """Forward under discrete along MuJoCo's trajectory: qacc within the contact tests' tolerance."""
  m, mjm = models_named(name)
  mjm.opt.integrator = _DISCRETE
  m.opt.integrator = _DISCRETE
  assert _teacher_forced(m, mjm, 150, 0) < 1e-6


def test_rollout_matches(tmp_path):
  """A free-running rollout (no teacher forcing) of the contact scene stays with MuJoCo's."""
  xml = CONTACT.format(cone="elliptic", solref="0.005 1", solimp="0.9 0.95 0.001", damping="5")
  m, mjm = _both(xml, tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  mjd.qvel[:] = [3.0, -1.0, 0.5]
  d.qvel[:] = mjd.qvel
  for _ in range(200):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  _close(d.qpos, mjd.qpos, "qpos", rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("which", ["chain", "contact", "free"])
def test_inverse(tmp_path, which):
  """mj_inverse inverts the step map: MuJoCo's qfrc_inverse and constraint forces, which reproduce
  the applied and actuator forces forward used (and FWDINV's statistics near 0)."""
  xml = {"chain": CHAIN,
         "contact": CONTACT.format(cone="elliptic", solref="0.005 1", solimp="0.9 0.95 0.001",
                                   damping="5"),
         "free": FREE.format(solver="Newton", island="enable")}[which]
  m, mjm = _both(xml, tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(3)
  if which == "free":
    mjd.qvel[:] = [0.1, 0.2, -0.3, 5, -3, 8] * 2
  else:
    mjd.qpos[:] = [0.3, -0.02, 0.1][:mjm.nq]
    mjd.qvel[:] = rng.normal(size=mjm.nv)
  mjd.ctrl[:] = rng.normal(size=mjm.nu)
  d.qpos[:], d.qvel[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  expected = mjd.qfrc_applied + mjd.qfrc_actuator
  mujoco.mj_inverse(mjm, mjd)
  numjoco.inverse(m, d)
  _close(mjd.qfrc_inverse, expected, "MuJoCo's own consistency", rtol=1e-7, atol=1e-7)
  _close(d.qfrc_inverse, mjd.qfrc_inverse, "qfrc_inverse", rtol=1e-7, atol=1e-7)
  _close(d.efc_force[:d.nefc], mjd.efc_force[:mjd.nefc], "efc_force", rtol=1e-7, atol=1e-7)
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.FWDINV)
  numjoco.step(m, d)
  assert np.all(np.asarray(d.solver_fwdinv) < 1e-6)


# couplings: a spatial tendon with a spring, damper and deadband joins two trees, a position
# servo drives it, a velocity servo a joint; the boxes touch the floor (the solve is one system)
COUPLED = """<mujoco><option integrator="discrete" timestep="0.005" solver="{solver}"/>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 0.5"><joint name="a" type="hinge" axis="0 1 0" damping="0.5"/>
 <geom type="capsule" fromto="0 0 0 0.3 0 -0.45" size=".05"/><site name="s1" pos="0.3 0 -0.45"/></body>
<body pos="0.8 0 0.5"><joint name="b" type="slide" axis="1 0 0"/><joint name="c" type="hinge" axis="0 1 0"/>
 <geom type="box" size=".1 .1 .1" pos="0 0 -0.405"/><site name="s2" pos="0 0 -0.3"/></body>
<body pos="-1 0 0.3"><freejoint/><geom type="ellipsoid" size=".1 .15 .2" fluidshape="ellipsoid"/></body>
</worldbody>
<tendon><spatial name="t" stiffness="300" damping="4" springlength="0.2 0.25"><site site="s1"/><site site="s2"/></spatial></tendon>
<actuator><position tendon="t" kp="200" dampratio="1"/><velocity joint="c" kv="3"/></actuator>
</mujoco>"""


@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
@pytest.mark.parametrize("fluid", ["", 'density="1000" viscosity="0.5"'])
def test_couplings(tmp_path, solver, fluid):
  """Tendon and actuator terms are couplings of the metric (left out under PGS), fluid drag
  blocks join the backbone: qacc_smooth, qacc and a rollout as MuJoCo's."""
  xml = COUPLED.format(solver=solver).replace('timestep="0.005"', f'timestep="0.005" {fluid}')
  m, mjm = _both(xml, tmp_path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(5)
  # CG stops on its tolerance on a different path: MuJoCo solves the coupled trees as islands, we
  # as one system (measured: within 2e-4)
  tol = {"Newton": 1e-7, "CG": 1e-3, "PGS": 1e-4}[solver]
  for _ in range(60):
    mjd.ctrl[:] = rng.uniform(-1, 1, 2) * [0.5, 2]
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.act, mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    _close(d.qacc_smooth, mjd.qacc_smooth, "qacc_smooth", rtol=1e-8, atol=1e-8)
    _close(d.qacc, mjd.qacc, "qacc", rtol=tol, atol=tol)
    mujoco.mj_step(mjm, mjd)
  assert mjd.ncon > 0
  # switched back at run time (the viewer's Physics panel): no coupling left behind
  mjm.opt.integrator = m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
  d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.act, mjd.ctrl
  d.qacc_warmstart[:] = mjd.qacc_warmstart
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  assert d.discrete_coupled[0] == 0
  _close(d.qacc, mjd.qacc, "qacc after switching to implicitfast", rtol=tol, atol=tol)


# MuJoCo's own models (tests/assets/mujoco_models) under the discrete integrator: forward at
# random states as tests/test_mujoco_models.py; the differences left, measured, not understood
# or not modelled yet (the forward xfails of test_mujoco_models are left out: they differ under
# every integrator)
_DISCRETE_KNOWN = {
    "test/engine/testdata/actuation/activation.xml": ("a muscle on a tendon: 3e-5 relative (the "
                                                      "muscle's length slope is not in our metric)"),
    "test/engine/testdata/actuation/orientation.xml": ("SO3 orientation servos: their stiffness "
                                                       "is not in our metric"),
}


def _mujoco_models():
  from tests.test_mujoco_models import MODELS, _FORWARD_KNOWN
  out = []
  for p in MODELS:
    if p in _FORWARD_KNOWN:
      continue
    marks = [pytest.mark.xfail(reason=_DISCRETE_KNOWN[p], strict=True)] if p in _DISCRETE_KNOWN else []
    out.append(pytest.param(p, id=p, marks=marks))
  return out


@pytest.mark.slow   # a sweep over every model of MODELS.txt
@pytest.mark.parametrize("path", _mujoco_models())
def test_mujoco_models_discrete(path):
  from tests.models import assert_forward_as_mujoco, random_state
  from tests.test_mujoco_models import _DIR, _load
  m = _load(path)
  mjm = mujoco.MjModel.from_xml_path(os.path.join(_DIR, path))
  mjm.opt.integrator = m.opt.integrator = _DISCRETE
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  for seed in range(2):
    random_state(mjm, mjd, seed, scale=0.05)
    assert_forward_as_mujoco(m, d, mjm, mjd, f"{path} seed {seed}", ncon=True,
                             fields=("qpos", "qvel", "ctrl", "act", "qfrc_applied",
                                     "xfrc_applied", "mocap_pos", "mocap_quat", "plastic"))
