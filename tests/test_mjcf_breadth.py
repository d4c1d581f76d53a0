"""MJCF breadth found by sweeping MuJoCo's own models: `user` parameters, <visual> keyword flags,
attributes MuJoCo accepts with fewer values than their length, and other corners, each compared
with MuJoCo (compiled fields, and forward qacc/sensordata where physics is involved)."""
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco import load_model   # with mj_setConst (dof_M0, invweights, spring lengths)
from numjoco.engine.mjcf import compile_model
from numjoco.engine.mjcf._node import MjcfError
from tests.test_mjcf_compile import assert_same

ASSETS = os.path.join(os.path.dirname(__file__), "assets", "mujoco")


def _same(xml, skip=()):
  """Compile `xml` (string or path) in both engines and compare every compiled field."""
  if xml.lstrip().startswith("<"):
    mjm = mujoco.MjModel.from_xml_string(xml)
  else:
    mjm = mujoco.MjModel.from_xml_path(xml)
  ours = compile_model(xml)
  assert_same(ours, mjm, skip)
  return ours, mjm


def _both_reject(xml, match):
  """MuJoCo refuses the model, and so do we, with a located message matching `match`."""
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=match):
    compile_model(xml)


def _forward_same(path, seeds=2, scale=0.05):
  """qacc and sensordata of both engines at random states (tests/test_models_load's check)."""
  import numjoco
  from tests.models import models_and_data, random_state
  m, d, mjm, mjd = models_and_data(path, quiet=True)
  for seed in range(seeds):
    random_state(mjm, mjd, seed, scale=scale)
    mujoco.mj_forward(mjm, mjd)
    for f in ("qpos", "qvel", "ctrl", "act", "qfrc_applied", "xfrc_applied", "mocap_pos",
              "mocap_quat"):
      getattr(d, f)[:] = getattr(mjd, f)
    numjoco.forward(m, d)
    s = 1.0 + np.abs(mjd.qacc).max(initial=0.0)
    np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0, atol=1e-6 * s, err_msg=f"qacc {seed}")
    np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-6, atol=1e-6,
                               err_msg=f"sensordata {seed}")
  return m, mjm


# ------------------------------------------------------------------------- user parameters

_USER_XML = """<mujoco>{size}
  <default><geom user="1 2"/><joint user="5"/><general user="8"/>
    <default class="b"><geom user="7"/></default></default>
  <worldbody>
    <body user="1 2 3"><joint name="j" user="1 2 3"/><joint name="k"/>
      <geom size=".1" user="3"/><geom size=".1"/><geom class="b" size=".1"/>
      <site name="s0" user="9 9"/><camera user="1"/></body>
    <body><freejoint/><geom size=".1"/><site/></body>
  </worldbody>
  <tendon><fixed user="2 3"><joint joint="j" coef="1"/></fixed><fixed><joint joint="k" coef="2"/></fixed>
  </tendon>
  <actuator><motor joint="j" user="4 4 4 4 4"/><general joint="k"/></actuator>
  <sensor><jointpos joint="j" user="1 1"/><jointvel joint="j"/><force site="s0" user="-1"/>
  </sensor>
</mujoco>"""


@pytest.mark.parametrize("size", ["", '<size nuser_geom="4" nuser_sensor="3" nuser_body="5"/>',
                                  '<size nuser_jnt="0" nuser_cam="-1"/>'])
def test_user_parameters_as_mujoco(size):
  """nuser_* and *_user: sized by the longest list (or <size>), padded with zeros, defaults
  inherited per class, an element's own list replacing the default's."""
  xml = _USER_XML.replace("{size}", size).replace('<joint name="j" user="1 2 3"/>',
                                                  '<joint name="j"/>' if "jnt" in size
                                                  else '<joint name="j" user="1 2 3"/>')
  if "nuser_jnt" in size:
    xml = xml.replace('<joint user="5"/>', "")
  (sizes, arrays, _), mjm = _same(xml)
  for kind in ("body", "jnt", "geom", "site", "cam", "tendon", "actuator", "sensor"):
    assert sizes["nuser_" + kind] == getattr(mjm, "nuser_" + kind)
    np.testing.assert_array_equal(arrays[kind + "_user"], getattr(mjm, kind + "_user"))
  assert sizes["nuser_geom"] >= 2 and sizes["nuser_actuator"] >= 5   # not vacuous


@pytest.mark.parametrize("size,element,kind", [
    ('<size nuser_geom="1"/>', '<geom size=".1" user="1 2"/>', "geom"),
    ('<size nuser_body="0"/>', '<body user="1"><geom size=".1"/></body>', "body"),
    ('<size nuser_site="2"/>', '<site user="1 2 3"/>', "site"),
])
def test_user_longer_than_nuser_is_an_error(size, element, kind):
  _both_reject(f"<mujoco>{size}<worldbody>{element}</worldbody></mujoco>",
               f"more values than nuser_{kind}")


def test_user_sizes_and_values_checked():
  _both_reject('<mujoco><size nuser_geom="-2"/></mujoco>', "nuser_geom must be >= -1")
  _both_reject('<mujoco><worldbody><geom size=".1" user="1 a"/></worldbody></mujoco>',
               "attribute 'user': non-numeric")
  _both_reject('<mujoco><size nuser_sensor="0"/><worldbody><site name="s"/></worldbody>'
               '<sensor><force site="s" user="1"/></sensor></mujoco>', "nuser_sensor")


def test_sensors_with_user_forward_as_mujoco():
  """MuJoCo's sleep/sensor.xml (contact, force, insidesite, rangefinder ... sensors, four with
  user="1"): compiled fields, then qacc and sensordata at random states."""
  path = os.path.join(ASSETS, "sleep_sensor.xml")
  (sizes, arrays, _), mjm = _same(path)
  assert sizes["nuser_sensor"] == 1 and arrays["sensor_user"].sum() == 4
  _forward_same(path)


# ------------------------------------------------------------------- <visual> keyword flags

@pytest.mark.parametrize("name", ["orthographic.xml", "ellipsoidinertia.xml"])
def test_visual_global_flags_from_mujoco_models(name):
  path = os.path.join(ASSETS, name)
  _same(path)
  m, mjm = load_model(path), mujoco.MjModel.from_xml_path(path)
  for key in ("cameraid", "orthographic", "fovy", "ipd", "azimuth", "elevation", "linewidth",
              "glow", "realtime", "offwidth", "offheight", "ellipsoidinertia", "bvactive"):
    assert getattr(m.vis.global_, key) == getattr(mjm.vis.global_, key), key


@pytest.mark.parametrize("attrs", [
    '<global orthographic="true" ellipsoidinertia="false" bvactive="true"/>',
    '<global orthographic="false" ellipsoidinertia="true"/>',
    '<headlight active="true"/>', '<headlight active="false"/>', '<headlight active="0"/>',
    '<headlight active="auto"/>', '<global bvactive="true"/><headlight active="1"/>'])
def test_visual_keywords_as_mujoco(attrs):
  xml = f"<mujoco><visual>{attrs}</visual></mujoco>"
  m, mjm = load_model(xml), mujoco.MjModel.from_xml_string(xml)
  for key in ("orthographic", "ellipsoidinertia", "bvactive"):
    assert getattr(m.vis.global_, key) == getattr(mjm.vis.global_, key), key
  assert m.vis.headlight.active == mjm.vis.headlight.active


def test_visual_flag_needs_a_keyword():
  _both_reject('<mujoco><visual><global orthographic="1"/></visual></mujoco>',
               "attribute 'orthographic': invalid value '1'")


# --------------------------------------------------------- attributes with fewer values

_BASE = """<mujoco>{top}
  <default>{dflt}</default>
  <worldbody>
    <body name="a"><joint name="j" range="-1 1" {joint}/><geom name="g" size=".1" {geom}/>
      <site name="s"/></body>
    <body name="b" pos="0 0 1"><joint name="j2" range="-1 1"/><geom name="g2" size=".1"/>
      <site name="s2"/></body>
  </worldbody>
  <contact><pair geom1="g" geom2="g2" {pair}/></contact>
  <tendon><fixed range="-1 1" {tendon}><joint joint="j" coef="1"/></fixed>
    <spatial range="0 2" {tendon}><site site="s"/><site site="s2"/></spatial></tendon>
  <equality><connect body1="a" body2="b" anchor="0 0 0" {eq}/>
    <weld body1="a" body2="b" {eq}/></equality>
</mujoco>"""

# MuJoCo's schema reads these with exact=false (src/xml/mjcf.schema): fewer values override
# the leading entries of the default's
_FEWER = [
    dict(top='<option o_solref="0.05"><flag override="enable"/></option>'),
    dict(joint='solreflimit="0.05" solreffriction="0.03"'),
    dict(dflt='<joint solreflimit="0.1 2"/>', joint='solreflimit="0.05"'),
    dict(geom='solref="0.04"'),
    dict(dflt='<geom solref="0.07"/>'),
    dict(dflt='<geom solref="0.1 0.5"/>', geom='solref="0.04"'),
    dict(geom='fluidcoef="0.3 0.2" fluidshape="ellipsoid"'),
    dict(pair='solref="0.03" solreffriction="-100"'),
    dict(dflt='<pair solref="0.1 3"/>', pair='solref="0.03"'),
    dict(tendon='solreflimit="0.03" solreffriction="0.06"'),
    dict(dflt='<tendon solreflimit="0.1 3"/>', tendon='solreflimit="0.03"'),
    dict(eq='solref="0.03"'),
    dict(dflt='<equality solref="0.1 3"/>', eq='solref="0.03"'),
]


@pytest.mark.parametrize("parts", _FEWER, ids=lambda p: " ".join(sorted(p)))
def test_fewer_values_as_mujoco(parts):
  xml = _BASE
  for key in ("top", "dflt", "joint", "geom", "pair", "tendon", "eq"):
    xml = xml.replace("{" + key + "}", parts.get(key, ""))
  _same(xml, skip=("eq_data",))   # body equalities' eq_data needs kinematics (set elsewhere)


def test_fewer_values_is_not_every_attribute():
  """Attributes MuJoCo reads exactly still need all their values (here stricter than before:
  muscle timeconst/range and cylinder bias took fewer)."""
  for attr in ('timeconst="0.01"', 'range="0.7"'):
    _both_reject('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body>'
                 f'</worldbody><actuator><muscle joint="j" {attr}/></actuator></mujoco>',
                 "expected 2 values, got 1")
  _both_reject('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body>'
               '</worldbody><actuator><cylinder joint="j" bias="1 2"/></actuator></mujoco>',
               "expected 3 values, got 2")
  for attr in ('range="0.5"', 'springdamper="1"', 'axis="0 1"'):
    _both_reject(f'<mujoco><worldbody><body><joint {attr}/><geom size=".1"/></body>'
                 '</worldbody></mujoco>', "values, got")
  _both_reject('<mujoco><worldbody><geom size=".1" solref="1 2 3"/></worldbody></mujoco>',
               "expected 1 to 2 values, got 3")


@pytest.mark.parametrize("springlength", ['".5"', '"0.2 0.4"', '".3" stiffness="50"'])
def test_tendon_springlength_one_value(springlength):
  """One springlength value sets both ends of the dead band (mjXReader::OneTendon)."""
  xml = _BASE
  for key in ("top", "dflt", "joint", "geom", "pair", "eq"):
    xml = xml.replace("{" + key + "}", "")
  xml = xml.replace("{tendon}", f"springlength={springlength}")
  ours, mjm = _same(xml, skip=("eq_data",))
  m = load_model(xml)
  np.testing.assert_allclose(m.tendon_lengthspring, mjm.tendon_lengthspring, atol=1e-12)


def test_ten_armature_model_forward_as_mujoco():
  """MuJoCo's core_smooth/ten_armature_0.xml: a spatial tendon with springlength=".5",
  stiffness and armature."""
  path = os.path.join(ASSETS, "ten_armature_0.xml")
  _same(path)
  m, mjm = _forward_same(path)
  np.testing.assert_allclose(m.tendon_lengthspring, [[0.5, 0.5]])


# ------------------------------------------------------------------------- other corners

def test_replicate_prefix_is_ignored_as_mujoco_does():
  """`prefix` is not in MuJoCo's replicate schema and MuJoCo ignores it (collision_primitive/
  spheres_cylinders.xml uses it): a warning here, names from `sep` only."""
  xml = """<mujoco><worldbody><replicate count="3" offset=".3 0 0" prefix="A" sep="-">
    <body name="b"><freejoint/><geom name="g" size=".1"/></body></replicate></worldbody>
    </mujoco>"""
  with pytest.warns(UserWarning, match="'prefix' is ignored"):
    (_, _, names), mjm = _same(xml)
  assert names[1][1:] == ["b-0", "b-1", "b-2"]


def test_target_camera_without_target_as_mujoco():
  """mode targetbody(com) without a target loads in MuJoCo (mjx pendula.xml) and acts as fixed."""
  import numjoco
  xml = """<mujoco><worldbody><body name="a" pos="1 0 0"><joint axis="0 1 0"/>
    <geom size=".1" pos="0 0 -.5"/><camera mode="targetbodycom" pos="0 0 1"/>
    <camera mode="targetbody" pos="0 1 1" euler="10 20 30"/></body></worldbody></mujoco>"""
  (_, arrays, _), mjm = _same(xml)
  np.testing.assert_array_equal(arrays["cam_targetbodyid"], [-1, -1])
  m, mjd = load_model(xml), mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  mjd.qpos[:] = d.qpos[:] = 0.7
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  np.testing.assert_allclose(d.cam_xpos, mjd.cam_xpos, atol=1e-12)
  np.testing.assert_allclose(d.cam_xmat, mjd.cam_xmat, atol=1e-12)


def test_discardvisual_model_as_mujoco():
  """MuJoCo's test/user/testdata/discardvisual.xml: non-colliding geoms go unless a tendon,
  pair, sensor or custom tuple names them; unused meshes, materials, textures go."""
  (sizes, _, names), mjm = _same(os.path.join(ASSETS, "discardvisual.xml"))
  assert names[5] == ["kept_floor", "kept_tendon", "kept_sensor", "kept_pair", "kept_tuple",
                      "kept0", "kept1"]
  assert sizes["nmesh"] == 1 and sizes["nmat"] == 0


@pytest.mark.parametrize("flag", ["true", "false"])
def test_discardvisual_inertia_margin_fluid_fit(flag):
  """A discarded geom's mass stays in its body (MuJoCo writes an explicit inertial), its margin
  does not; a fluid-ellipsoid geom stays; a mesh only fitted to a colliding primitive stays;
  materials go (ids -1)."""
  xml = f"""<mujoco><compiler discardvisual="{flag}"/><asset>
    <material name="m" rgba="1 0 0 1"/>
    <mesh name="fit" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/>
    <mesh name="drawn" vertex="0 0 0 2 0 0 0 2 0 0 0 2"/></asset><worldbody>
    <body><freejoint/><geom name="a" size=".1" contype="0" conaffinity="0"
      fluidshape="ellipsoid"/>
      <geom name="b" size=".1" contype="0" conaffinity="0" margin=".3" mass="3"/>
      <geom name="c" size=".2" material="m" pos=".1 0 0"/></body>
    <body pos="0 1 0"><joint/><geom type="box" mesh="fit"/><site material="m"/>
      <geom type="mesh" mesh="drawn" contype="0" conaffinity="0" material="m"/></body>
    <body pos="0 0 1"><geom name="d" size=".1" contype="0" conaffinity="0"/></body>
    </worldbody></mujoco>"""
  (sizes, arrays, _), mjm = _same(xml)
  if flag == "true":
    assert sizes["ngeom"] == 3 and sizes["nmesh"] == 1 and (arrays["geom_matid"] == -1).all()


@pytest.mark.parametrize("name", ["freejoint.xml", "dzhanibekov.xml"])
def test_alignfree_as_mujoco(name):
  """compiler alignfree / freejoint align: a childless free body's frame moves onto its
  inertial frame (geoms, sites, cameras, lights keep their world poses): compiled fields incl.
  the sparse inertia layout (dzhanibekov: nC 6), then qacc and sensordata."""
  path = os.path.join(ASSETS, name)
  (sizes, arrays, _), mjm = _same(path)
  np.testing.assert_allclose(arrays["body_ipos"][1], 0.0, atol=0)
  _forward_same(path)


def test_alignfree_switches():
  """align="false" beats compiler alignfree; a free body with a child is never aligned."""
  xml = """<mujoco><compiler alignfree="true"/><worldbody>
    <body pos="0 0 1"><freejoint align="false"/><geom size=".1" pos=".2 0 0"/></body>
    <body pos="1 0 1"><freejoint/><geom size=".1" pos=".2 .1 0"/>
      <body><geom size=".1" pos="0 .3 0"/></body></body>
    <body pos="2 0 1" euler="10 20 30"><freejoint/><geom type="box" size=".1 .2 .3"
      pos=".2 .1 0" euler="0 30 0"/><light pos="0 0 1" dir="0 1 -1"/></body>
    </worldbody></mujoco>"""
  (_, arrays, _), mjm = _same(xml)
  ipos = np.abs(arrays["body_ipos"]).max(axis=1)   # bodies: world, 1, 2 (+ child 3), 4
  assert ipos[1] > 0 and ipos[2] > 0 and ipos[4] == 0


def _uv_sphere_obj(nlat=40, nlon=50, r=0.5):
  """An OBJ sphere of quads (as MuJoCo's benchmark highres_sphere.obj): many near-square quads
  whose diagonals tie in double precision but not in float32."""
  lines = []
  for i in range(nlat + 1):
    th = np.pi * i / nlat
    for j in range(nlon):
      ph = 2 * np.pi * j / nlon
      lines.append("v %.9f %.9f %.9f" % (r * np.sin(th) * np.cos(ph),
                                         r * np.sin(th) * np.sin(ph), -r * np.cos(th)))
  for i in range(nlat):
    for j in range(nlon):
      a, b = i * nlon + j + 1, i * nlon + (j + 1) % nlon + 1
      lines.append(f"f {a} {a + nlon} {b + nlon} {b}")
  return "\n".join(lines) + "\n"


def test_obj_quads_split_as_mujoco(tmp_path):
  """Quads split along the diagonal tinyobjloader picks in float32 (benchmark cache_hits.xml:
  838 of 19600 faces differed when measured in double)."""
  (tmp_path / "s.obj").write_text(_uv_sphere_obj())
  xml = f"""<mujoco><compiler meshdir="{tmp_path}"/><asset><mesh name="m" file="s.obj"/>
    </asset><worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>"""
  (_, arrays, _), mjm = _same(xml)
  np.testing.assert_array_equal(arrays["mesh_face"], mjm.mesh_face)


def test_default_material_layers_as_mujoco():
  """<layer> inside a default <material> (render/testdata/pbr.xml): its rgb role is the
  texture of materials of that class unless they name their own."""
  xml = """<mujoco><default><default class="b"><material>
      <layer role="rgb" texture="white"/><layer role="metallic" texture="grid"/>
    </material></default></default><asset>
    <texture name="white" type="2d" builtin="flat" rgb1="1 1 1" width="2" height="2"/>
    <texture name="grid" type="2d" builtin="checker" rgb1="1 1 1" rgb2=".9 .9 .9" width="8"
      height="8"/>
    <material class="b" name="m1" metallic="0.2"/><material class="b" name="m2" texture="grid"/>
    <material name="m3"/></asset>
    <worldbody><geom size=".1" material="m1"/><geom size=".1" material="m2"/></worldbody>
    </mujoco>"""
  m, mjm = load_model(xml), mujoco.MjModel.from_xml_string(xml)
  _same(xml)
  np.testing.assert_array_equal(m.mat_texid[:, 1], mjm.mat_texid[:, 1])
