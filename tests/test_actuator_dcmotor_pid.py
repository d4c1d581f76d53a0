"""MuJoCo's multi-input actuators against the installed MuJoCo: the `pid` servo (slew
limit, integral with imax anti-windup, feedforward, every input subset), the `dcmotor` (every
input mode, thermal, LuGre, current state, saturation, cogging, nominal point), the SO3
transmission with its `orientation` servo (expmap and quat charts, ball joint and site with
refsite, the integrator variant, the norm clamp), and the older `mujoco.pid` actuator plugin
(P, PD, PID with imax, slewmax, filter/filterexact/integrator dynamics, actearly, implicit
instances with their own config).

For each scene: compiled actuator fields and sizes (nu, nactuator, nout, na, nJmom), then a
200-step rollout with random piecewise-constant controls whose qpos, qvel, act and
actuator_force follow MuJoCo's; bad attributes are errors naming the element's line.
"""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.mjcf import MjcfError
from numjoco.engine import types as t
from tests.models import arm_chain, assert_close, models_of

_ARM = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>{extension}
  <default><geom type="capsule" size="0.03"/></default>
  <worldbody>
    <site name="ref" pos="0 0 1" euler="10 20 30"/>
""" + arm_chain(h1=' range="-2 2"', in_b3="""\
          <body name="b4" pos="0.05 0 0">
            <joint name="ball" type="ball" damping="0.02"/>
            <geom fromto="0 0 0 0 0 -0.2"/>
            <site name="tip" pos="0 0.02 -0.2" euler="5 -10 15"/>
          </body>""") + """\
  </worldbody>
  <tendon><fixed name="t"><joint joint="h1" coef="0.5"/><joint joint="h2" coef="-0.3"/></fixed>
  </tendon>
  {sensors}
  <actuator>{actuators}</actuator>
</mujoco>
"""

PID = """
  <pid joint="h1"/>
  <pid joint="h2" kp="3" kv="0.2" ki="4" imax="0.05" input="pos" posrange="-1 1"/>
  <pid joint="h1" kp="2" ki="1" slewmax="3" input="pos ff" ffrange="-0.5 0.5"/>
  <pid joint="s3" kp="20" input="vel" velrange="-1 1"/>
  <pid joint="h2" kp="1" kv="0.1" input="ff"/>
  <pid tendon="t" kp="5" dampratio="0.7" slewmax="2" input="pos vel ff" velrange="-2 2"/>
  <pid joint="ball" kp="0.5" kv="0.05" ki="0.2" gear="0 0 1"/>
  <pid site="tip" refsite="ref" kp="0.3" kv="0.02" gear="0 0 0 0 1 0" input="pos"/>
  <general joint="s3" gaintype="pid" biastype="affine" dyntype="pid" gainprm="2" dynprm="0.1 0"
           biasprm="0 -10 -1" input="pos vel"/>
"""

DCMOTOR = """
  <dcmotor joint="h1" motorconst="0.05" resistance="2"/>
  <dcmotor joint="h2" motorconst="0.04 0.06" resistance="1.5" inductance="0.003 0"
           saturation="0 3 200"/>
  <dcmotor joint="h1" nominal="12 0.4 60" damping="0.001" input="none" cogging="0.02 6 0.3"
           lugre="50 0.02 0.01 0.015 0.1"/>
  <dcmotor joint="h2" motorconst="0.05" resistance="2" input="pos" controller="2 1 0.1 4 0.3 6"
           thermal="3 0 30 0.004 20 25" ctrlrange="-1 1"/>
  <dcmotor joint="s3" motorconst="0.08" resistance="1" input="vel" controller="0 0 3 0 0 0"
           inductance="0 0.002"/>
  <dcmotor joint="h1" motorconst="0.03" resistance="1" input="ff" saturation="0.2"/>
  <dcmotor joint="h2" motorconst="0.05" resistance="1" input="pos vel ff voltage"
           controller="1 0.5 0.05 0 0.1 0" thermal="2 5 0 0.003 25 20" lugre="80 0.01 0.01 0.02 0.2"
           inductance="0.001 0" gear="0.5"/>
  <dcmotor tendon="t" motorconst="0.05" resistance="2" input="pos vel" controller="3 0 0.2 2 0 5"/>
"""

SO3 = """
  <orientation joint="ball" kp="0.8" kv="0.05"/>
  <orientation site="tip" refsite="ref" kp="0.5" dampratio="0.5" input="quat" forcerange="0 0.2"/>
  <general joint="ball" dyntype="integrator" gaintype="so3" biastype="so3" gainprm="0.4"
           biasprm="0 -0.4 -0.03"/>
  <pid joint="h1" kp="5" kv="0.5"/>
"""

PLUGIN_EXT = """
  <extension><plugin plugin="mujoco.pid">
    <instance name="p"><config key="kp" value="4"/></instance>
    <instance name="pid"><config key="kp" value="6"/><config key="ki" value="3"/>
      <config key="kd" value="0.3"/><config key="imax" value="0.2"/></instance>
    <instance name="slew"><config key="kp" value="5"/><config key="kd" value="0.2"/>
      <config key="ki" value="1"/><config key="slewmax" value="2"/></instance>
    <instance name="filt"><config key="kp" value="3"/><config key="kd" value="0.2"/></instance>
  </plugin></extension>"""

PLUGIN = """
  <plugin joint="h1" instance="p" ctrlrange="-1 1"/>
  <plugin joint="h2" instance="pid" actdim="1"/>
  <plugin tendon="t" instance="slew" actdim="2" forcerange="-2 2"/>
  <plugin joint="s3" instance="filt" dyntype="filter" dynprm="0.05" actdim="1" actearly="true"/>
  <plugin joint="h1" plugin="mujoco.pid" dyntype="integrator" actdim="1">
    <config key="kp" value="2"/><config key="kd" value="0.1"/></plugin>
  <plugin joint="h2" instance="filt" dyntype="filterexact" dynprm="0.1" actdim="1"
          actrange="-0.2 0.2"/>
"""

SO3_SENSORS = """
  <sensor>
    <actuatorpos actuator="o1"/><actuatorvel actuator="o1"/><actuatorfrc actuator="o2"/>
  </sensor>
"""

SCENES = {"pid": PID, "dcmotor": DCMOTOR, "pidplugin": PLUGIN, "so3": SO3.replace(
    '<orientation joint="ball"', '<orientation name="o1" joint="ball"').replace(
    '<orientation site="tip"', '<orientation name="o2" site="tip"')}

_FIELDS = ("trntype dyntype gaintype biastype ctrladr ctrlnum ctrlspec outadr outnum actadr "
           "actnum trnid dynprm gainprm biasprm actlimited actrange actearly forcelimited "
           "forcerange ctrllimited ctrlrange gear acc0 length0 lengthrange cranklength "
           "plugin").split()


def _xml(scene, integrator="Euler"):
  return _ARM.format(integrator=integrator, actuators=SCENES[scene],
                     sensors=SO3_SENSORS if scene == "so3" else "",
                     extension=PLUGIN_EXT if scene == "pidplugin" else "")


def _load(scene, integrator="Euler"):
  xml = _xml(scene, integrator)
  if scene == "so3" and integrator == "implicitfast":
    # at the SO3 norm clamp MuJoCo keeps the kv term in qDeriv exactly when the clamped
    # torque's norm rounds below the bound (measured: ~1 step in 6, by the last bit), a coin
    # flip no other implementation can follow; the clamp is covered by the other integrators
    xml = xml.replace(' forcerange="0 0.2"', "")
  return models_of(xml)


@pytest.mark.parametrize("scene", list(SCENES))
def test_compiled_fields(scene):
  """Sizes and every actuator_* field equal MuJoCo's (incl. dampratio -> kv, acc0)."""
  m, mjm = _load(scene)
  for k in ("nu", "nactuator", "nout", "na", "nJmom", "nsensordata"):
    assert getattr(m, k) == getattr(mjm, k), k
  for f in _FIELDS:
    assert_close(getattr(m, "actuator_" + f), getattr(mjm, "actuator_" + f), f, 1e-12, 1e-12)
  d = numjoco.make_data(m)
  assert_close(d.ctrl, mujoco.MjData(mjm).ctrl, "ctrl after reset (quat inputs: identity)")


def _rollout(m, mjm, steps, seed, teacher=False):
  """Random piecewise-constant controls; returns our and MuJoCo's histories."""
  from numjoco.engine import interop
  rng = np.random.default_rng(seed)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  lo = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 0], -1.5)
  hi = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 1], 1.5)
  ours, theirs = [], []
  for s in range(steps):
    if s % 10 == 0:
      # a little beyond the ranges, so the clamps act too
      ctrl = rng.uniform(lo - 0.2, hi + 0.2)
    mjd.ctrl[:] = ctrl
    if teacher:
      interop.data_from_mujoco(mjd, d)
      d.act[:] = mjd.act
    d.ctrl[:] = ctrl
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    keys = ("qpos", "qvel", "act", "actuator_force", "sensordata")
    ours.append({k: np.array(getattr(d, k)) for k in keys})
    theirs.append({k: np.array(getattr(mjd, k)) for k in keys})
  return ours, theirs


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
@pytest.mark.parametrize("scene", list(SCENES))
def test_rollout(scene, integrator):
  """200 steps of random controls: qpos, qvel, act, actuator_force and the actuator sensors
  follow MuJoCo's to 1e-8 (relative to each field's scale)."""
  m, mjm = _load(scene, integrator)
  ours, theirs = _rollout(m, mjm, 200, seed=3)
  for k in ("qpos", "qvel", "act", "actuator_force", "sensordata"):
    a = np.array([o[k] for o in ours])
    b = np.array([o[k] for o in theirs])
    scale = max(1.0, np.abs(b).max()) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * scale, err_msg=f"{scene} {k}")
    assert np.abs(b).max(initial=0) > 0 or k == "sensordata", f"{k} never moved"


def test_states_are_exercised():
  """The scenes reach the regimes the rollouts are meant to cover: PID integral at imax,
  slew-limited setpoints, DC-motor current and temperature states, a norm-clamped SO3 torque."""
  m, mjm = _load("pid")
  _, theirs = _rollout(m, mjm, 200, seed=3)
  acts = np.array([o["act"] for o in theirs])
  # actuator 1 (ki with imax 0.05): the integral reaches its clamp
  assert np.abs(acts[:, mjm.actuator_actadr[1]]).max() >= 0.05 - 1e-12
  m, mjm = _load("so3")
  _, theirs = _rollout(m, mjm, 200, seed=3)
  f = np.array([o["actuator_force"][3:6] for o in theirs])
  assert np.isclose(np.linalg.norm(f, axis=1).max(), 0.2)
  m, mjm = _load("dcmotor")
  _, theirs = _rollout(m, mjm, 200, seed=3)
  assert mjm.na == int(mjm.actuator_actnum.sum()) and mjm.na >= 9
  # the PID plugin: the integral at imax / ki, the setpoint moving at slewmax, the filter's
  # activation clamped to actrange
  m, mjm = _load("pidplugin")
  _, theirs = _rollout(m, mjm, 200, seed=3)
  acts = np.array([o["act"] for o in theirs])
  assert np.abs(acts[:, mjm.actuator_actadr[1]]).max() == pytest.approx(0.2 / 3)
  setpoint = acts[:, mjm.actuator_actadr[2] + 1]
  assert np.abs(np.diff(setpoint)).max() == pytest.approx(2 * mjm.opt.timestep)
  assert np.abs(acts[:, mjm.actuator_actadr[5]]).max() == pytest.approx(0.2)


BAD = [
    ('<pid joint="h1" input="vel pos"/>', "canonical order"),
    ('<pid joint="h1" input="voltage"/>', "pid inputs"),
    ('<pid joint="h1" ki="1" input="vel"/>', "require the pos input"),
    ('<pid joint="h1" kv="1" dampratio="1"/>', "kv and dampratio"),
    ('<pid joint="h1" slewmax="-1"/>', "slewmax cannot be negative"),
    ('<pid joint="h1" input="pos bogus"/>', "invalid token 'bogus'"),
    ('<dcmotor joint="h1" resistance="2"/>', "motor constant K must be positive"),
    ('<dcmotor joint="h1" motorconst="-1 0.2" resistance="2"/>', "non-negative"),
    ('<dcmotor joint="h1" motorconst="0.1"/>', "resistance R must be positive"),
    ('<dcmotor joint="h1" motorconst="0.1" resistance="2" controller="1 0 0 0 0 0"/>',
     "controller gains require a controller input"),
    ('<dcmotor joint="h1" motorconst="0.1" resistance="2" forcerange="-1 1"/>', "forcerange"),
    ('<dcmotor joint="h1" motorconst="0.1" resistance="2" thermal="1 0 0 0 0 0"/>',
     "thermal capacitance"),
    ('<orientation joint="h1"/>', "requires a ball joint"),
    ('<orientation site="tip"/>', "requires refsite"),
    ('<orientation joint="ball" forcerange="-1 1"/>', "lower bound must be 0"),
    ('<general joint="ball" dyntype="integrator" gaintype="so3" biastype="so3" gainprm="1" '
     'biasprm="0 -1 0" input="quat"/>',
     "quat input requires dyntype 'none'"),
    ('<plugin joint="h2" instance="pid"/>', 'actdim 0, expected 1. Add actdim="1"'),
    ('<plugin joint="h2" instance="slew" actdim="1"/>', 'actdim 1, expected 2'),
    ('<plugin joint="h2" instance="p" dyntype="filter" actdim="2"/>', "actdim 2, expected 1"),
    ('<plugin joint="h2" plugin="mujoco.pid"><config key="ki" value="-2"/>'
     '<config key="imax" value="1"/></plugin>', "negative imax"),
    ('<plugin joint="h2" plugin="mujoco.pid"><config key="slewmax" value="-2"/></plugin>',
     "slewmax must be non-negative"),
    ('<plugin joint="h2" plugin="mujoco.sdf.torus"/>', "'mujoco.sdf.torus' is not declared"),
    ('<plugin joint="h2"/>', "needs 'instance' (or 'plugin')"),
]


@pytest.mark.parametrize("act,msg", BAD)
def test_bad_attributes(act, msg):
  """Each is rejected by MuJoCo too; ours names the element and its line."""
  xml = _ARM.format(integrator="Euler", actuators="\n" + act, sensors="", extension=PLUGIN_EXT)
  with pytest.raises(ValueError):
    mujoco.MjData(mujoco.MjModel.from_xml_string(xml))   # the PID plugin checks at MjData
  with pytest.raises(MjcfError) as e:
    numjoco.load_model(xml)
  text = str(e.value)
  assert msg in text, text
  line = xml[:xml.index(act)].count("\n") + 1
  tag = act[1:act.index(" ")]
  assert f":{line}: <{tag}>" in text, text


def test_enums_match_mujoco():
  """The new enum members take MuJoCo's values."""
  assert t.mjtTrn.SO3 == mujoco.mjtTrn.mjTRN_SO3
  assert t.mjtDyn.DCMOTOR == mujoco.mjtDyn.mjDYN_DCMOTOR
  assert t.mjtDyn.PID == mujoco.mjtDyn.mjDYN_PID
  assert t.mjtGain.DCMOTOR == mujoco.mjtGain.mjGAIN_DCMOTOR
  assert t.mjtGain.SO3 == mujoco.mjtGain.mjGAIN_SO3
  assert t.mjtGain.PID == mujoco.mjtGain.mjGAIN_PID
  assert t.mjtBias.DCMOTOR == mujoco.mjtBias.mjBIAS_DCMOTOR
  assert t.mjtBias.SO3 == mujoco.mjtBias.mjBIAS_SO3
