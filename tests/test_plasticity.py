"""MuJoCo 4's ideal elasto-plastic springs (joint and tendon `springyield`) and actuator group
disabling (`option/actuatorgroupdisable`), against the installed MuJoCo 4.0.

Plasticity: compiled fields (nplastic, jnt_/tendon_springyield, jnt_/tendon_plasticadr,
key_plastic), d.plastic after reset and keyframe reset, 300-step rollouts with random controls
that push every plastic spring past its yield (Euler, implicitfast, RK4), the spring-disable
flag, and the errors 4.0 gives. Group disabling: opt.disableactuator from MJCF, forces, held
activations and rollouts of MuJoCo's actuator_group_disable.xml test model.
"""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.mjcf import MjcfError
from tests.models import assert_close, model_xml, models_of

_MIRROR = "/work/.mirror/google-deepmind+mujoco/repo"

PLASTIC = model_xml("plasticity/plastic")

_FIELDS = ("jnt_springyield", "jnt_plasticadr", "tendon_springyield", "tendon_plasticadr",
           "tendon_lengthspring", "qpos_spring", "key_plastic")


def _xml(integrator="Euler", angle="degree", flags=""):
  deg = angle == "degree"
  return PLASTIC.format(integrator=integrator, angle=angle, flags=flags,
                        yield_hinge=3 if deg else np.deg2rad(3),
                        yield_ball=4 if deg else np.deg2rad(4),
                        springref=20 if deg else np.deg2rad(20))


@pytest.mark.parametrize("angle", ["degree", "radian"])
def test_compiled_fields(angle):
  """nplastic and the plastic fields equal MuJoCo 4.0's: angles converted per compiler/angle,
  4 entries per ball joint, 2 per tendon after the joints', the keyframes' plastic vectors
  (unit ball quaternions; the measured tendon's length filled in as 4.0 does)."""
  m, mjm = models_of(_xml(angle=angle))
  assert m.nplastic == mjm.nplastic == 12
  for f in _FIELDS:
    assert_close(getattr(m, f), getattr(mjm, f), f, 1e-12, 1e-12)
  assert m.nkey == 2


def test_defaults_and_units():
  """springyield from default classes (joint and tendon), converted from degrees for hinge and
  ball joints only (a fixed tendon's yield is not, even over hinges); a zero yield is elastic
  (jnt_plasticadr -1), as 4.0 compiles them. A NaN yield, which MuJoCo compiles as elastic, is
  refused with its element, as NaN is in every attribute the simulation reads."""
  xml = """<mujoco><default><tendon springyield="0.3"/><joint springyield="2" springref="3"/>
    </default><worldbody>
    <body><joint name="c" type="slide"/><geom size=".1"/></body>
    <body pos="1 0 0"><joint name="h"/><geom size=".1"/></body>
    <body pos="2 0 0"><joint type="ball"/><geom size=".1"/></body>
    <body pos="3 0 0"><joint springyield="0"/><joint springyield="{}" axis="1 0 0"/>
      <geom size=".1"/></body>
    </worldbody><tendon><fixed><joint joint="c" coef="2"/><joint joint="h" coef="1"/></fixed>
    <fixed springyield="10"><joint joint="h" coef="1"/></fixed></tendon>
    <keyframe><key/></keyframe></mujoco>"""
  with pytest.raises(MjcfError, match=r"<string>:6: <joint>: attribute 'springyield': 'nan'"):
    numjoco.load_model(xml.format("nan"))
  m, mjm = models_of(xml.format("0"))
  assert m.nplastic == mjm.nplastic == 10
  for f in _FIELDS:
    assert_close(getattr(m, f), getattr(mjm, f), f, 1e-12, 1e-12)


def test_reset_plastic():
  """d.plastic after make_data, after reset_data with a changed qpos_spring/lengthspring and
  after a keyframe reset equals mj_resetData's / mj_resetDataKeyframe's."""
  m, mjm = models_of(_xml())
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  assert_close(d.plastic, mjd.plastic, "plastic at make_data", 1e-12, 1e-12)
  for mm in (m, mjm):
    mm.qpos_spring[0] = 0.4
    mm.qpos_spring[2:6] = [0.0, 1.0, 0.0, 0.0]
    mm.tendon_lengthspring[1] = [0.0, 0.7]
  d.plastic[:] = 5.0
  numjoco.reset_data(m, d)
  mujoco.mj_resetData(mjm, mjd)
  assert_close(d.plastic, mjd.plastic, "plastic at reset", 1e-12, 1e-12)
  numjoco.reset_data(m, d, "bent")
  mujoco.mj_resetDataKeyframe(mjm, mjd, 1)
  assert_close(d.plastic, mjd.plastic, "plastic at keyframe reset", 1e-12, 1e-12)
  assert_close(d.qpos, mjd.qpos, "qpos at keyframe reset", 1e-12, 1e-12)


def _rollout(m, mjm, steps, seed):
  """Random piecewise-constant controls beyond the ranges; our and MuJoCo's histories."""
  rng = np.random.default_rng(seed)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
  keys = ("qpos", "qvel", "plastic", "qfrc_spring", "energy")
  ours, theirs = {k: [] for k in keys}, {k: [] for k in keys}
  for s in range(steps):
    if s % 25 == 0:
      ctrl = rng.uniform(lo, hi)
    d.ctrl[:] = ctrl
    mjd.ctrl[:] = ctrl
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    for k in keys:
      ours[k].append(np.array(getattr(d, k)))
      theirs[k].append(np.array(getattr(mjd, k)))
  return ({k: np.array(v) for k, v in ours.items()},
          {k: np.array(v) for k, v in theirs.items()})


def _yields(plastic, adr, n):
  """Steps at which plastic[adr:adr+n] moved."""
  p = plastic[:, adr:adr + n]
  return int(np.count_nonzero(np.any(np.diff(p, axis=0) != 0, axis=1)))


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_rollout(integrator):
  """300 steps of random controls: qpos, qvel, d.plastic follow MuJoCo 4.0's to 1e-10 (relative
  to each field's scale), qfrc_spring and the spring energy too; every plastic spring (hinge,
  slide, ball, fixed tendon, both spatial tendons) yields repeatedly, and the slack tendon's
  lower bound stays 0 while its upper bound moves."""
  m, mjm = models_of(_xml(integrator))
  ours, theirs = _rollout(m, mjm, 300, seed=7)
  keys = ("qpos", "qvel", "plastic", "qfrc_spring", "energy")
  for k in keys:
    a, b = ours[k], theirs[k]
    scale = max(1.0, np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * scale, err_msg=k)
  p = theirs["plastic"]
  for name, adr, n in (("hinge", 0, 1), ("slide", 1, 1), ("ball", 2, 4), ("fixed", 6, 2),
                       ("slack", 8, 2), ("measured", 10, 2)):
    assert _yields(p, adr, n) >= 3, f"{name} never yielded (or too rarely)"
  assert np.all(p[:, 8] == 0.0) and np.ptp(p[:, 9]) > 0.01


def test_slack_tendon_both_ways():
  """A slack fixed tendon (springlength "0 L") driven into tension and into compression: in
  tension only L moves; in compression (negative length) both bounds shift, as 4.0 does. A
  second tendon (range -0.1 0.1) shifts both bounds either way."""
  xml = """<mujoco><option gravity="0 0 0"/><worldbody>
    <body><joint name="s" type="slide" damping="0.5"/><geom size=".1" mass="1"/></body>
    </worldbody><tendon>
    <fixed stiffness="30" springyield="0.01" springlength="0 0.2"><joint joint="s" coef="1"/></fixed>
    <fixed stiffness="10" springyield="0.02" springlength="-0.1 0.1"><joint joint="s" coef="1"/>
    </fixed></tendon>
    <actuator><position joint="s" kp="400" kv="40"/></actuator></mujoco>"""
  m, mjm = models_of(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  hist, ref = [], []
  for s in range(600):
    u = 0.4 if (s // 150) % 2 == 0 else -0.4
    d.ctrl[:] = mjd.ctrl[:] = u
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    hist.append(np.concatenate([d.qpos, d.plastic]))
    ref.append(np.concatenate([mjd.qpos, mjd.plastic]))
  hist, ref = np.array(hist), np.array(ref)
  np.testing.assert_allclose(hist, ref, rtol=1e-10, atol=1e-10)
  assert ref[:, 0].min() < -0.1 and ref[:, 0].max() > 0.3   # both directions, past the yields
  assert ref[:, 1].min() < -0.05   # compression moved the slack tendon's lower bound


def test_spring_disabled_holds_plastic():
  """With the spring flag disabled there are no spring forces and d.plastic stays put, as in
  4.0; damping still acts."""
  m, mjm = models_of(_xml(flags='spring="disable"'))
  ours, theirs = _rollout(m, mjm, 100, seed=2)
  for k in ("qpos", "qvel", "plastic"):
    np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-10, err_msg=k)
  assert np.all(theirs["plastic"] == theirs["plastic"][0])


def test_runtime_zero_yield_is_full_slip():
  """jnt_springyield = 0 at run time on a plastic joint: the reference follows qpos every step,
  so the hinge's spring force vanishes after the first step (4.0's documented rule)."""
  m, mjm = models_of(_xml())
  m.jnt_springyield[0] = 0.0
  mjm.jnt_springyield[0] = 0.0
  ours, theirs = _rollout(m, mjm, 50, seed=4)
  for k in ("qpos", "qvel", "plastic"):
    np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-10, err_msg=k)
  assert_close(theirs["plastic"][:, 0], theirs["qpos"][:, 0], "hinge reference = qpos")


_BODY = '<body name="b"><joint {joint}/><geom size="0.1"/><site name="s"/></body>'
BAD = [
    (_BODY.format(joint='name="j" springyield="-1"'), "", "joint",
     "springyield cannot be negative in joint"),
    (_BODY.format(joint='name="j" type="free" springyield="1"'), "", "joint",
     "springyield should not be defined in free joint"),
    (_BODY.format(joint='name="j" type="slide"'),
     '<tendon><fixed name="t" springyield="-0.5"><joint joint="j" coef="1"/></fixed></tendon>',
     "fixed", "springyield cannot be negative in tendon"),
    ('<body name="b"><freejoint springyield="1"/><geom size="0.1"/></body>', "", "freejoint",
     "springyield"),
    (_BODY.format(joint='name="j" springyield="1"'),
     '<keyframe><key name="k" plastic="1 2"/></keyframe>', "key", "invalid plastic size"),
    (_BODY.format(joint='name="j"'), '<keyframe><key name="k" plastic="1"/></keyframe>', "key",
     "invalid plastic size"),
]


@pytest.mark.parametrize("body,extra,tag,msg", BAD)
def test_bad_attributes(body, extra, tag, msg):
  """Each is rejected by MuJoCo 4.0 too; ours names the element and its line."""
  xml = f"<mujoco>\n<worldbody>\n{body}\n</worldbody>\n{extra}\n</mujoco>"
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError) as e:
    numjoco.load_model(xml)
  text = str(e.value)
  line = xml[:xml.index("<" + tag)].count("\n") + 1
  assert msg in text and f":{line}: <{tag}" in text, text


def test_default_class_free_joint_error():
  """A springyield from a default class reaches a free joint: an error in 4.0 and here; the
  <freejoint> element takes no defaults and compiles."""
  xml = ('<mujoco><default><joint springyield="1"/></default><worldbody>'
         '<body><freejoint/><geom size=".1"/></body>{}</worldbody></mujoco>')
  m, mjm = models_of(xml.format(""))
  assert m.nplastic == mjm.nplastic == 0
  bad = xml.format('<body><joint type="free"/><geom size=".1"/></body>')
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(bad)
  with pytest.raises(MjcfError, match="free joint"):
    numjoco.load_model(bad)


# ---------------------------------------------------------------- actuator group disabling

GROUPS = model_xml("plasticity/groups")


@pytest.mark.parametrize("option,bits", [("", 0), ('actuatorgroupdisable="1"', 2),
                                         ('actuatorgroupdisable="2 3 4"', 28),
                                         ('actuatorgroupdisable="0 30 1 1"', (1 << 30) | 3)])
def test_disableactuator_compiled(option, bits):
  """opt.disableactuator is the bitmask of the listed groups, as 4.0 compiles it."""
  m, mjm = models_of(GROUPS.format(integrator="Euler", option=option))
  assert m.opt.disableactuator == mjm.opt.disableactuator == bits


@pytest.mark.parametrize("value,msg", [("-1", "must be non-negative"),
                                       ("31", "cannot exceed 30"), ("a", "non-numeric")])
def test_disableactuator_errors(value, msg):
  xml = GROUPS.format(integrator="Euler", option=f'actuatorgroupdisable="{value}"')
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=msg) as e:
    numjoco.load_model(xml)
  assert "<option>" in str(e.value)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
@pytest.mark.parametrize("mask", [0, 2, 28, 4 | 8 | 16 | 2])
def test_disabled_groups_rollout(integrator, mask):
  """Disabled groups (set at run time through m.opt.disableactuator) give no force, hold their
  activations while act_dot is still computed; actuator-inherited damping still acts, a
  disabled actuator's forcerange still clamps its zero (4.0). 150 steps with random controls
  follow MuJoCo's."""
  m, mjm = models_of(GROUPS.format(integrator=integrator, option=""))
  m.opt.disableactuator = mask
  mjm.opt.disableactuator = mask
  rng = np.random.default_rng(mask)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  d.act[:] = mjd.act[:] = [0.1, 0.2, 0.3]
  for s in range(150):
    if s % 15 == 0:
      ctrl = rng.uniform(-1, 1, m.nu)
    d.ctrl[:] = mjd.ctrl[:] = ctrl
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    for k in ("qpos", "qvel", "act", "act_dot", "actuator_force", "qfrc_actuator",
              "qfrc_damper", "sensordata"):
      assert_close(getattr(d, k), getattr(mjd, k), f"{k} at step {s}", 1e-10, 1e-10)
  if mask & 4:
    assert np.all(mjd.act[:1] == 0.1)   # the intvelocity's setpoint is held


def _group_disable_model():
  import subprocess
  path = "test/engine/testdata/actuation/actuator_group_disable.xml"
  if not os.path.isdir(_MIRROR):
    pytest.skip("MuJoCo source mirror not present")
  xml = subprocess.run(["git", "-C", _MIRROR, "show", f"HEAD:{path}"], check=True,
                       capture_output=True, text=True).stdout
  # the two objects (parallel cylinders side by side) do not collide with each other here: on
  # their curved sides EPA stops on a different face of its polytope than 4.0's (same depth,
  # normals 5e-3 rad apart at step 87, teacher-forced), a collision issue apart from
  # actuation; they still hit the floor and the arm
  assert 'priority="1"/>' in xml
  return xml.replace('priority="1"/>', 'priority="1" contype="2"/>')


def test_actuator_group_disable_model():
  """MuJoCo's own actuator_group_disable.xml (groups 1 and 2 off, contacts on): compiled mask,
  then 300 steps with random controls on all six actuators, switching the disabled set at run
  time halfway, follow MuJoCo 4.0's."""
  m, mjm = models_of(_group_disable_model())
  assert m.opt.disableactuator == mjm.opt.disableactuator == 6
  rng = np.random.default_rng(11)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
  for s in range(300):
    if s == 150:
      m.opt.disableactuator = mjm.opt.disableactuator = 1 | 4   # torque and velocity off
    if s % 20 == 0:
      ctrl = rng.uniform(lo, hi)
    d.ctrl[:] = mjd.ctrl[:] = ctrl
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
  for k in ("qpos", "qvel", "act", "actuator_force"):
    scale = max(1.0, np.abs(getattr(mjd, k)).max())
    np.testing.assert_allclose(getattr(d, k), getattr(mjd, k), rtol=1e-8, atol=1e-8 * scale,
                               err_msg=k)
