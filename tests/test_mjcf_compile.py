"""MJCF compiler vs MuJoCo's compiler, field by field (suite models and small snippets)."""
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine import interop
from numjoco.engine import types as t
from numjoco.engine.io import Model
from numjoco.engine.mjcf import compile_model
from numjoco.engine.preview import Compiled
from tests.models import SETCONST_SKIPPED as SKIPPED
from tests.models import reference_fields as _reference

SUITE = ["cartpole", "acrobot", "pendulum", "point_mass", "reacher", "fish", "cheetah",
         "walker", "hopper", "humanoid", "humanoid_CMU"]


def assert_same(ours, mjm, skip=()):
  """Compare compile_model output with a compiled MjModel field by field."""
  sizes, arrays, names = ours
  ref_sizes, ref = _reference(mjm)
  assert {k: sizes[k] for k in t.MODEL_SIZES} == ref_sizes
  for name, _, _ in t.MODEL_TABLE:
    if name in SKIPPED or name in skip or name not in ref:
      continue
    assert name in arrays, f"field {name} not filled"
    if name == "mesh_polynormal":
      # 4.0's normals of its builtin supersphere and supertorus differ from ours by up to
      # 3e-8 (their generated vertices differ in the last bits); the rest by round-off
      np.testing.assert_allclose(arrays[name], ref[name], rtol=0, atol=1e-7, err_msg=name)
      continue
    np.testing.assert_allclose(arrays[name].astype(float), ref[name].astype(float),
                               rtol=1e-9, atol=1e-12, err_msg=name)
  for obj, lst in names.items():
    want = [mujoco.mj_id2name(mjm, int(obj), i) or "" for i in range(len(lst))]
    assert lst == want, obj


def _suite_dir():
  suite = pytest.importorskip("dm_control.suite")
  return os.path.dirname(suite.__file__)


@pytest.mark.parametrize("name", SUITE)
def test_suite_model(name):
  path = os.path.join(_suite_dir(), name + ".xml")
  assert_same(compile_model(path), mujoco.MjModel.from_xml_path(path))


def test_swimmer_from_string_with_assets():
  swimmer = pytest.importorskip("dm_control.suite.swimmer")
  xml, assets = swimmer.get_model_and_assets(6)
  assert_same(compile_model(xml, assets=assets), mujoco.MjModel.from_xml_string(xml, assets))


def test_load_model_matches_interop():
  path = os.path.join(_suite_dir(), "cartpole.xml")
  ours = Model.from_compiled(Compiled(path))   # before mj_setConst (SKIPPED: its fields)
  ref = interop.model_from_mujoco(mujoco.MjModel.from_xml_path(path))
  assert ours.source == path
  for name, _, _ in t.MODEL_TABLE:
    if name in SKIPPED:
      continue
    a, b = ours._arrays[name], ref._arrays[name]
    np.testing.assert_allclose(a.astype(float), b.astype(float), rtol=1e-9, atol=1e-12,
                               err_msg=name)
  assert ours.names == ref.names


# ----------------------------------------------------------------------------------- snippets

def check_xml(xml, skip=()):
  assert_same(compile_model(xml), mujoco.MjModel.from_xml_string(xml), skip)


def _model(body, extra="", compiler=""):
  return f"""<mujoco>{compiler}{extra}<worldbody>{body}</worldbody></mujoco>"""


ORIENTATIONS = [
    'quat="0.2 0.3 0.4 0.5"', 'axisangle="1 2 3 40"', 'euler="10 20 30"',
    'xyaxes="1 1 0 -1 1 0.3"', 'zaxis="0.3 -0.5 1"', 'zaxis="0 0 -1"', 'zaxis="0 0 1"',
]


@pytest.mark.parametrize("orient", ORIENTATIONS)
def test_orientation_forms(orient):
  body = f"""<body pos="0.1 0.2 0.3" {orient}><joint/>
    <geom type="box" size=".1 .2 .3" {orient}/><site {orient}/>
    <camera {orient}/></body>"""
  check_xml(_model(body))


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zyx", "ZYX", "xYz", "zxz"])
def test_euler_sequences(seq):
  body = """<body euler="15 -40 70"><joint/><geom type="box" size=".1 .2 .3" euler="5 6 7"/>
    </body>"""
  check_xml(_model(body, compiler=f'<compiler eulerseq="{seq}"/>'))


def test_radian_angles():
  body = """<body euler="0.1 0.2 0.3"><joint range="-1 1" ref="0.2" springref="0.1"/>
    <geom type="capsule" size=".1 .2" axisangle="0 1 0 1.2"/></body>"""
  check_xml(_model(body, compiler='<compiler angle="radian"/>'))


GEOMS = [
    'type="sphere" size=".1"', 'type="capsule" size=".1 .3"', 'type="ellipsoid" size=".1 .2 .3"',
    'type="cylinder" size=".1 .3"', 'type="box" size=".1 .2 .3"',
    'type="capsule" fromto="0 0 0 .3 .2 .1" size=".05"',
    'type="cylinder" fromto="0 0 0 0 0 -.3" size=".05"',
    'type="box" fromto="0 .1 0 .3 .2 .1" size=".05"',
    'type="ellipsoid" fromto="-.1 0 0 .3 0 0" size=".05"',
    'type="box" size=".1 .2 .3" mass="2.5"', 'type="sphere" size=".1" density="300"',
    'type="box" size=".1 .2 .3" shellinertia="true"',
    'type="capsule" size=".1 .3" shellinertia="true"',
    'type="cylinder" size=".1 .3" shellinertia="true"',
    'type="sphere" size=".1" shellinertia="true"',
    'type="ellipsoid" size=".1 .2 .3" shellinertia="true"',
]


@pytest.mark.parametrize("geom", GEOMS)
def test_geom_inertia(geom):
  pose = "" if "fromto" in geom else 'pos=".01 .02 .03" euler="10 20 30"'
  body = f"""<body pos="0 0 1"><freejoint/><geom {geom} {pose}/></body>"""
  check_xml(_model(body))


def test_multi_geom_inertia_and_fluid():
  body = """<body><joint type="ball"/>
    <geom type="capsule" fromto="0 0 0 .3 .1 0" size=".04" fluidshape="ellipsoid"/>
    <geom type="box" size=".05 .1 .2" pos=".1 .2 0" euler="30 0 10" fluidshape="ellipsoid"
          fluidcoef=".4 .3 1.2 .9 1.1"/>
    <geom type="sphere" size=".07" pos="-.1 0 .1" group="4"/>
    <geom type="cylinder" size=".02 .1" pos="0 0 -.2" mass="0"/></body>"""
  check_xml(_model(body, extra='<option density="1.2" viscosity="0.001"/>'))


def test_explicit_inertial():
  body = """<body><joint type="slide" axis="1 1 0"/><geom size=".1"/>
    <inertial pos=".1 0 0" mass="2" fullinertia=".3 .25 .2 .01 .02 .03"/></body>
    <body pos="1 0 0"><joint/><geom size=".1"/>
    <inertial pos="0 .1 0" euler="10 0 0" mass="1" diaginertia=".1 .2 .25"/></body>"""
  check_xml(_model(body))


def test_inertiafromgeom_and_bounds():
  body = """<body><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
    <geom size=".1" pos=".1 0 0"/></body>
    <body pos="0 1 0"><joint type="slide"/><geom type="box" size=".1 .1 .1" mass="0"/></body>"""
  check_xml(_model(body, compiler='<compiler inertiafromgeom="true" boundmass="0.01" '
                                  'boundinertia="0.001"/>'))


def test_defaults_and_childclass():
  xml = """<mujoco><default>
    <joint damping="0.5" range="-10 20"/><geom rgba="1 0 0 1" friction=".3"/>
    <default class="a"><joint stiffness="2" type="slide"/><geom size=".2" type="box"/>
      <default class="b"><geom rgba="0 1 0 1" size=".3 .1 .1"/></default></default>
    <default class="c"><site size=".02" rgba="0 0 1 1"/><motor gear="5" ctrlrange="-1 1"/></default>
    </default><worldbody>
    <body childclass="a"><joint name="j0"/><geom size=".1 .1 .1"/><geom class="b"/>
      <body childclass="c"><joint name="j1" class="main"/><geom class="a" size=".2 .2 .2"/>
        <site/></body></body>
    </worldbody><actuator><motor class="c" joint="j0"/><motor joint="j1"/></actuator></mujoco>"""
  check_xml(xml)


def test_frames():
  body = """<frame pos="1 0 0" euler="0 0 90"><body pos=".1 0 0" euler="10 0 0"><joint axis="1 0 0"/>
    <frame pos="0 .2 0" axisangle="0 1 0 30"><geom type="capsule" size=".05 .1"/>
      <frame pos=".1 0 0" euler="0 20 0"><site/><joint type="slide" axis="0 1 0" pos=".1 0 0"/>
        <camera pos="0 0 1"/><light pos="0 0 1" dir="1 0 -1"/></frame></frame>
    <geom size=".1"/></body></frame>"""
  check_xml(_model(body))


def test_include(tmp_path):
  (tmp_path / "sub").mkdir()
  (tmp_path / "sub" / "part.xml").write_text(
      '<mujoco><body name="b"><joint/><geom size=".1"/></body></mujoco>')
  (tmp_path / "main.xml").write_text(
      '<mujoco><worldbody><include file="sub/part.xml"/></worldbody></mujoco>')
  path = str(tmp_path / "main.xml")
  assert_same(compile_model(path), mujoco.MjModel.from_xml_path(path))


def test_keyframes_and_mocap():
  xml = """<mujoco><worldbody>
    <body name="m" mocap="true" pos="1 2 3" quat="0 1 0 0"><geom size=".1" contype="0"/></body>
    <body pos="0 0 1"><freejoint/><geom size=".1"/></body>
    <body><joint type="ball"/><geom size=".1"/><body><joint name="h" ref="10"/>
      <geom size=".1"/></body></body>
    </worldbody><actuator><general joint="h" dyntype="integrator"/></actuator>
    <keyframe><key name="k0" time="1.5" qpos="0 0 2 1 1 0 0 2 0 0 0 0.3"/>
    <key qvel="1 2 3 4 5 6 7 8 9 10" act="0.5" ctrl="0.2" mpos="0 0 0" mquat="1 1 0 0"/>
    <key name="k2"/></keyframe></mujoco>"""
  check_xml(xml)


ACTUATORS = [
    '<motor joint="j" gear="2" ctrlrange="-1 1"/>',
    '<position joint="j" kp="10" kv="2"/>',
    '<position joint="j" kp="10" inheritrange="0.8"/>',
    '<position joint="j" kp="10" timeconst="0.1" forcerange="-5 5"/>',
    '<velocity joint="j" kv="3" ctrlrange="-2 2" forcelimited="true" forcerange="-1 1"/>',
    '<intvelocity joint="j" kp="5" actrange="-1 1"/>',
    '<intvelocity joint="j" kp="5" inheritrange="1"/>',
    '<damper joint="j" kv="4" ctrlrange="0 1"/>',
    '<general joint="j" gaintype="affine" gainprm="1 2 3" biastype="affine" biasprm="0 -1 -2" '
    'dyntype="filter" dynprm="0.2" actlimited="true" actrange="-1 1" actearly="true" '
    'group="2"/>',
    '<general joint="j" dyntype="filterexact" dynprm="0.3" ctrllimited="false" '
    'ctrlrange="-1 1"/>',
    '<motor tendon="t" gear="3"/>',
    '<motor jointinparent="j"/>',
    '<general joint="j" damping="0.3" armature="0.1"/>',
]


@pytest.mark.parametrize("act", ACTUATORS)
def test_actuators(act):
  xml = f"""<mujoco><worldbody><body><joint name="j" range="-30 60"/><geom size=".1"/>
    <body><joint name="j2" type="slide"/><geom size=".1"/></body></body></worldbody>
    <tendon><fixed name="t" range="-1 1"><joint joint="j" coef="2"/><joint joint="j2" coef="-1"/>
    </fixed></tendon><actuator>{act}</actuator></mujoco>"""
  check_xml(xml)


def test_fixed_tendons():
  xml = """<mujoco><worldbody><body><joint name="a" ref="20"/><geom size=".1"/>
    <body><joint name="b" type="slide" ref="0.3"/><geom size=".1"/></body></body></worldbody>
    <tendon><fixed name="t1" stiffness="2" damping="1" frictionloss="0.1" margin="0.01"
      solreflimit="0.05 1" solimplimit="0.8 0.9 0.01" limited="true"
      range="-1 2"><joint joint="a" coef="0.5"/><joint joint="b" coef="2"/></fixed>
    <fixed springlength="0.1 0.2" armature="0.2"><joint joint="b" coef="1"/></fixed></tendon></mujoco>"""
  check_xml(xml)


@pytest.mark.parametrize("autolimits", ["true", "false"])
def test_autolimits(autolimits):
  limited = "" if autolimits == "true" else 'limited="true"'
  xml = f"""<mujoco><compiler autolimits="{autolimits}"/><worldbody><body>
    <joint name="a" range="-20 30" {limited}/><joint name="b" type="slide" limited="false"
    range="-1 1"/><joint name="c" limited="true" range="0 10"/><geom size=".1"/></body>
    </worldbody><actuator><motor joint="a" ctrlrange="-1 1" {limited.replace("limited", "ctrllimited")}/>
    </actuator></mujoco>"""
  check_xml(xml)


def test_options_and_flags():
  xml = """<mujoco><option timestep="0.005" gravity="0 0 -3" wind="1 0 0" magnetic="0 1 0"
    density="1.1" viscosity="0.01" integrator="RK4" solver="CG" iterations="20" tolerance="1e-6"
    ls_iterations="10" ls_tolerance="0.02" noslip_iterations="3" noslip_tolerance="1e-5"
    ccd_iterations="10" ccd_tolerance="1e-5" cone="elliptic" jacobian="sparse" impratio="2"
    o_margin="0.1" o_solref="0.03 1.1" o_solimp="0.8 0.9 0.01 0.4 3" o_friction="1 2 3 4 5"
    actuatorgroupdisable="0 3 30">
    <flag contact="disable" gravity="disable" energy="enable" warmstart="disable"
          island="enable" override="enable"/></option>
    <worldbody><body><joint/><geom size=".1"/></body></worldbody></mujoco>"""
  check_xml(xml)


@pytest.mark.parametrize("integ", ["Euler", "implicit", "implicitfast"])
def test_integrators(integ):
  check_xml(_model('<body><joint/><geom size=".1"/></body>',
                   extra=f'<option integrator="{integ}"/>'))


def test_joint_attributes_and_materials():
  xml = """<mujoco><asset><material name="m" rgba=".1 .2 .3 .4" emission="0.5"
    specular="0.2" shininess="0.3" reflectance="0.1"/><texture name="t" type="2d"
    builtin="checker" width="10" height="10"/></asset><worldbody>
    <light directional="true" castshadow="false" diffuse=".1 .2 .3" ambient=".1 .1 .1"
      specular=".2 .2 .2" attenuation="1 .1 0" cutoff="30" exponent="5"/>
    <body name="b" gravcomp="0.5"><joint stiffness="3" springref="5" springyield="7" damping="1"
      armature=".1"
      frictionloss=".2" margin=".01" group="2" solreffriction=".03 2" solimpfriction=".8 .9 .1"
      actuatorfrcrange="-1 1" actuatorgravcomp="true"/>
      <geom size=".1" material="m" contype="2" conaffinity="3" condim="4" priority="1"
        solmix="0.5" margin=".01" gap=".005" group="1" friction=".5 .1 .01"/>
      <site type="box" size=".1 .1 .1" material="m" group="3" rgba="1 1 0 1"/>
      <camera mode="trackcom" fovy="60" ipd="0.1"/></body>
    <camera mode="targetbody" target="b" pos="1 1 1"/>
    <light mode="targetbodycom" target="b" pos="0 0 3"/>
    </worldbody><equality><joint joint1="j1" joint2="j2" polycoef="0 2 0.1"/>
    </equality></mujoco>"""
  xml = xml.replace("<joint stiffness", '<joint name="j1" stiffness').replace(
      "</body>\n    <camera", '<body><joint name="j2"/><geom size=".1"/></body></body>\n    <camera')
  check_xml(xml)


def test_equalities():
  xml = """<mujoco><worldbody><body name="a"><joint name="ja"/><geom size=".1"/>
    <site name="s1"/></body><body name="b" pos="1 0 0"><joint name="jb"/><geom size=".1"/>
    <site name="s2"/></body></worldbody><tendon><fixed name="t1"><joint joint="ja" coef="1"/></fixed>
    <fixed name="t2"><joint joint="jb" coef="1"/></fixed></tendon><equality>
    <connect site1="s1" site2="s2"/><weld site1="s1" site2="s2" torquescale="2"/>
    <joint joint1="ja" polycoef="0.1 1"/><tendon tendon1="t1" tendon2="t2" active="false"
    solref="0.05 1" solimp="0.8 0.9 0.01"/></equality></mujoco>"""
  check_xml(xml)


def test_body_equalities_except_data():
  """eq_data of body connect/weld needs kinematics at qpos0 (computed elsewhere)."""
  xml = """<mujoco><worldbody><body name="a"><joint/><geom size=".1"/></body>
    <body name="b" pos="1 0 0"><joint/><geom size=".1"/></body></worldbody><equality>
    <connect body1="a" body2="b" anchor="0 0 1"/><weld body1="a"/></equality></mujoco>"""
  check_xml(xml, skip={"eq_data"})


def test_sameframe_and_simple():
  body = """<body><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>
    <geom size=".1"/><geom size=".1" pos=".1 0 0"/><geom size=".1" euler="0 0 30"/>
    <site pos=".1 0 0"/></body>
    <body pos="0 1 0"><joint/><geom type="box" size=".1 .2 .3" pos=".1 .2 .3" euler="10 20 30"/>
    <geom type="box" size=".1 .2 .3" pos=".1 .2 .3" euler="10 20 30"/><body><joint/>
    <geom size=".1"/></body></body>
    <body pos="0 2 0"><geom size=".1"/><body><joint type="hinge" axis="0 1 0"/><geom size=".1"/>
    </body></body>"""
  check_xml(_model(body))


def test_contact_pairs_and_excludes():
  """pair_* mixing (priority, solmix, direct solref), signature sort and exclude order."""
  body = """<geom name="floor" type="plane" size="1 1 .1" solmix="2" margin=".01"/>
    <body name="a" pos="0 0 1"><freejoint/><geom name="ga" size=".1" condim="4"
      friction=".5 .01 .002" solref=".03 .9" solimp=".8 .9 .01 .4 3" gap=".02"/>
      <body name="b" pos="0 0 .3"><joint/><geom name="gb" size=".1" priority="2"
        friction=".7 .02 .003" solref="-100 -10" condim="6"/></body></body>
    <body name="c" pos="1 0 1"><freejoint/><geom name="gc" type="box" size=".1 .1 .1"
      solref="-200 -5" solmix="0"/></body>"""
  extra = """<contact>
    <pair name="p1" geom1="gc" geom2="ga"/>
    <pair name="p2" geom1="ga" geom2="floor"/>
    <pair geom1="gb" geom2="floor" margin=".3" friction="1 2 3 4 5" condim="3"/>
    <pair geom1="gb" geom2="ga" solref=".05 1.2" solreffriction=".1 2" solimp=".5 .6 .1"/>
    <pair geom1="gc" geom2="floor"/>
    <exclude body1="c" body2="a"/><exclude body1="b" body2="world"/>
  </contact>"""
  check_xml(f"<mujoco><worldbody>{body}</worldbody>{extra}</mujoco>")
  ours = compile_model(f"<mujoco><worldbody>{body}</worldbody>{extra}</mujoco>")
  mjm = mujoco.MjModel.from_xml_string(f"<mujoco><worldbody>{body}</worldbody>{extra}</mujoco>")
  assert ours[2][t.mjtObj.PAIR] == [mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_PAIR, i) or ""
                                    for i in range(mjm.npair)]


def test_short_keyframe_vectors():
  """MuJoCo 4: a keyframe vector shorter than the state sets only its leading entries."""
  body = """<body><joint/><geom size=".1"/></body><body pos="1 0 0"><freejoint/>
    <geom size=".1"/></body>"""
  check_xml(f"""<mujoco><worldbody>{body}</worldbody><keyframe><key qpos="0.3 2" qvel="1"/>
    </keyframe></mujoco>""")


def test_camera_light_constants_with_tendon_springs():
  """mj_setConst poses tracking/targeting cameras and lights as fixed at qpos0; a spatial
  tendon's spring length (computed at qpos_spring) must not undo that (it once did: the modes
  were restored before the spring pass, light 1's dir0 came out 0 0 0)."""
  import mujoco
  xml = """
<mujoco>
  <worldbody>
    <light name="spot" pos="0 -1 3" mode="targetbody" target="arm"/>
    <light name="follow" pos="1 1 2" dir="0 0 -1" mode="trackcom"/>
    <camera name="look" pos="2 -2 1" mode="targetbodycom" target="arm"/>
    <site name="anchor" pos="0 0 2"/>
    <body name="arm" pos="0 0 1.2" euler="0 30 0">
      <joint name="ball" type="ball"/>
      <geom type="capsule" size=".04" fromto="0 0 0 .4 0 0"/>
      <site name="tip" pos=".4 0 0"/>
      <camera name="chase" pos="0 -1 .3" mode="track"/>
    </body>
  </worldbody>
  <tendon><spatial name="rope"><site site="anchor"/><site site="tip"/></spatial></tendon>
</mujoco>"""
  import numjoco
  ours = numjoco.load_model(xml)   # compiler + mj_setConst
  mjm = mujoco.MjModel.from_xml_string(xml)
  for name in ("cam_pos0", "cam_poscom0", "cam_mat0", "light_pos0", "light_poscom0",
               "light_dir0", "tendon_lengthspring", "tendon_length0"):
    np.testing.assert_allclose(getattr(ours, name), getattr(mjm, name), atol=1e-12,
                               err_msg=name)


def _eig3_cases(rng):
  """Symmetric 3x3 matrices of the kinds a compiler meets: inertias of random point clouds at
  scales from micrometres to metres, nearly diagonal ones, ones with a repeated principal
  moment (a symmetric body: the axes are decided by round-off), diagonal and zero."""
  for _ in range(300):
    scale = rng.uniform(0.1, 1, 3) * 10.0 ** rng.uniform(-6, 1)
    p = rng.normal(size=(rng.integers(4, 30), 3)) * scale
    c = p - p.mean(0)
    inertia = np.eye(3) * (c * c).sum() - c.T @ c
    yield inertia.ravel()
  for _ in range(100):
    a = np.diag(rng.uniform(0.1, 2, 3))
    off = rng.normal(size=(3, 3)) * 10.0 ** rng.uniform(-16, -9)
    yield (a + off + off.T).ravel()
  for _ in range(100):
    q = rng.normal(size=4)
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, q / np.linalg.norm(q))
    r = r.reshape(3, 3)
    a, b = rng.uniform(0.1, 2, 2)
    yield (r @ np.diag([a, a, b]) @ r.T).ravel()
  yield np.diag([3.0, 1.0, 2.0]).ravel()
  yield np.zeros(9)


@pytest.mark.parametrize("tol", [1e-7, 4e-15])
def test_eig3_as_mujoco(tol):
  """The compiler's Jacobi eigen-decomposition (mesh principal axes with tol 1e-7, body
  inertias with 4e-15) equals 4.0's compiled mjuu_eig3, called from its library, bit for
  bit: eigenvalues and quaternion. Mesh frames, and so every mesh vertex and polygon normal,
  and body_iquat are built from it."""
  from numjoco.engine.mjcf import _inertia
  from tests.conformance import mjinternal
  rng = np.random.default_rng(5)
  n = 0
  for mat in _eig3_cases(rng):
    ev, quat = _inertia.eig3(mat.tolist(), tol)
    ref_ev, ref_quat, _, _ = mjinternal.eig3(mat, tol)
    assert ev == ref_ev and quat == ref_quat, f"{mat.tolist()}: {ev} {quat} vs {ref_ev} {ref_quat}"
    n += 1
  assert n == 502
