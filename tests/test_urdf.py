"""URDF import and compiler fusestatic vs MuJoCo's own URDF importer, field by field."""
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import numjoco
from numjoco.engine.mjcf import MjcfError, compile_model
from tests.models import models_and_data
from tests.test_mjcf_compile import assert_same

ARM = os.path.join(os.path.dirname(__file__), "assets", "urdf", "arm.urdf")
# principal axes of fused inertias: same Jacobi iteration, rounding differs at ~1e-9
FUSED_IQUAT = ("body_iquat",)

_I = '<inertia ixx="{a}" iyy="{b}" izz="{c}" ixy="{d}" ixz="0" iyz="0"/>'


def _link(name, mass=1.0, extra="", inertia=(0.01, 0.02, 0.03, 0.0), origin=""):
  a, b, c, d = inertia
  return (f'<link name="{name}"><inertial>{origin}<mass value="{mass}"/>'
          f'{_I.format(a=a, b=b, c=c, d=d)}</inertial>{extra}</link>')


def _joint(name, kind, parent, child, extra=""):
  return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
          f'<child link="{child}"/>{extra}</joint>')


def _check(urdf, skip=()):
  assert_same(compile_model(urdf), mujoco.MjModel.from_xml_string(urdf), skip)


def _dynamics_agree(urdf_or_path, seed=0):
  """qacc, xpos and xquat at a random state agree with MuJoCo's forward."""
  m, d, mjm, mjd = models_and_data(urdf_or_path)
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0 + 0.3 * rng.normal(size=mjm.nq)
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  np.testing.assert_allclose(d.xpos, mjd.xpos, atol=1e-10)
  np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=1e-7, atol=1e-7)
  return m


def test_arm_file_matches_mujoco():
  assert_same(compile_model(ARM), mujoco.MjModel.from_xml_path(ARM), FUSED_IQUAT)
  m = _dynamics_agree(ARM)
  # fixed links fused: base and static1 into the world, tool into arm2
  assert [numjoco.id2name(m, numjoco.mjtObj.BODY, i) for i in range(m.nbody)] == [
      "world", "arm1", "arm2", "slider"]
  np.testing.assert_allclose(m.body_mass, [0.0, 1.0, 0.9, 0.3])


def test_joint_kinds_and_limits():
  links = "".join(_link(n) for n in ("base", "a", "b", "c", "d", "e", "f", "g"))
  joints = "".join([
      _joint("rev", "revolute", "base", "a",
             '<origin xyz="0 0 0.2" rpy="0.1 -0.2 0.3"/><axis xyz="0 1 1"/>'
             '<limit lower="-0.5" upper="0.7" effort="-3"/><dynamics damping="0.2"/>'),
      _joint("one_sided", "revolute", "a", "b", '<limit lower="-0.5" effort="0"/>'),
      _joint("reversed", "prismatic", "b", "c", '<limit lower="0.5" upper="-0.5"/>'),
      _joint("cont", "continuous", "c", "d",
             '<axis xyz="0 0 1"/><limit effort="5" velocity="1"/>'
             '<dynamics damping="0.1" friction="0.05"/>'),
      _joint("pl", "planar", "d", "e",
             '<axis xyz="0.3 0.4 0.5"/><limit lower="-1" upper="1"/>'
             '<dynamics damping="0.3" friction="0.02"/>'),
      _joint("ball", "spherical", "e", "f", '<origin xyz="0.1 0 0"/>'),
      _joint("same", "revolute", "f", "g", '<limit lower="0.2" upper="0.2"/>'),
  ])
  urdf = f'<robot name="kinds">{links}{joints}</robot>'
  _check(urdf, FUSED_IQUAT)
  _dynamics_agree(urdf)


def test_floating_base_and_world_link():
  urdf = ('<robot name="fl"><link name="world"/>'
          + _link("torso", 2.0, '<collision><geometry><box size="0.3 0.2 0.1"/></geometry>'
                  '</collision>', (0.1, 0.2, 0.25, 0.01),
                  '<origin xyz="0.01 0.02 0" rpy="0.3 0.2 0.1"/>')
          + _link("leg", 0.5, '<collision><origin xyz="0 0 -0.1"/><geometry>'
                  '<capsule radius="0.02" length="0.2"/></geometry></collision>')
          + _joint("free", "floating", "world", "torso", '<origin xyz="0 0 1"/>')
          + _joint("hip", "revolute", "torso", "leg", '<limit lower="-1" upper="1"/>')
          + "</robot>")
  _check(urdf)
  _dynamics_agree(urdf, seed=3)


def test_visuals_materials_and_names():
  body = ('<visual name="v"><geometry><box size="0.1 0.1 0.1"/></geometry>'
          '<material name="red"/></visual>'
          '<collision name="c"><geometry><sphere radius="0.05"/></geometry></collision>'
          '<visual name="c"><geometry><cylinder radius="0.02" length="0.1"/></geometry>'
          '<material><color rgba="0 1 0 0.5"/></material></visual>'
          '<collision name="c"><geometry><cylinder radius="0.02" length="0.1"/></geometry>'
          '</collision>')
  links = _link("base") + _link("a", extra=body)
  for mj in ("", '<mujoco><compiler discardvisual="false"/></mujoco>'):
    urdf = (f'<robot name="vis">{mj}<material name="red"><color rgba="1 0 0 1"/></material>'
            f'{links}{_joint("j", "revolute", "base", "a")}</robot>')
    _check(urdf)
  # discardvisual="false": 4 geoms, visuals in group 1 and not colliding
  m = numjoco.load_model(urdf)
  assert m.ngeom == 4
  np.testing.assert_array_equal(m.geom_group, [1, 0, 1, 0])
  np.testing.assert_array_equal(m.geom_contype, [0, 1, 0, 1])


def test_mujoco_section_option_and_compiler():
  urdf = ('<robot name="opt"><mujoco><compiler fusestatic="false" angle="degree"/>'
          '<option timestep="0.005" gravity="0 0 -1"/></mujoco>'
          + _link("base") + _link("fixed_child") + _link("a")
          + _joint("f", "fixed", "base", "fixed_child", '<origin xyz="0 0 0.1"/>')
          + _joint("j", "revolute", "fixed_child", "a", '<limit lower="-1" upper="1"/>')
          + "</robot>")
  _check(urdf)
  m = numjoco.load_model(urdf)
  assert m.nbody == 4 and m.opt.timestep == 0.005   # nothing fused, radians kept
  np.testing.assert_allclose(m.jnt_range[0], [-1, 1])


def test_fusestatic_chain_mjcf():
  """MJCF fusestatic: static chains, referenced bodies kept, frames of moved elements."""
  xml = """<mujoco><compiler fusestatic="true"/><worldbody>
    <body name="a" pos="0 0 1"><joint type="hinge"/><geom size="0.1" mass="1"/>
      <body name="s1" pos="0.1 0 0" euler="0 0 30"><geom type="box" size="0.1 0.2 0.05"/>
        <site name="st" pos="0 0.1 0"/><camera name="c" pos="0 0 1" mode="targetbody"
           target="kept"/><light pos="0 0 1" dir="0 1 -1"/>
        <body name="s2" pos="0 0.2 0" euler="10 0 0"><geom type="capsule" size="0.02 0.1"/>
          <body name="m" pos="0 0 0.3"><joint type="slide"/><geom size="0.05"/></body>
        </body>
      </body>
      <body name="kept" pos="0 0 -0.2"><geom size="0.03"/></body>
      <body name="after"><joint/><geom size="0.02"/></body>
    </body>
    <body name="ground_static" pos="1 0 0"><geom type="box" size="1 1 0.1"/></body>
  </worldbody>
  <sensor><framepos objtype="body" objname="kept"/></sensor></mujoco>"""
  assert_same(compile_model(xml), mujoco.MjModel.from_xml_string(xml), FUSED_IQUAT)
  m = numjoco.load_model(xml)
  names = [numjoco.id2name(m, numjoco.mjtObj.BODY, i) for i in range(m.nbody)]
  assert names == ["world", "a", "m", "kept", "after"]


def test_errors_name_file_and_line(tmp_path):
  cases = {
      "missing": ('<robot name="r">\n' + _link("a") + '\n'
                  '<joint name="j" type="revolute"><parent link="a"/><child link="zz"/></joint>'
                  '\n</robot>', 3, "parent or child missing"),
      "two_parents": ('<robot name="r">' + _link("a") + _link("b") + _link("c") + '\n'
                      + _joint("j1", "revolute", "a", "c") + '\n'
                      + _joint("j2", "revolute", "b", "c") + '</robot>', 3,
                      "multiple parents"),
      "bad_type": ('<robot name="r">' + _link("a") + _link("b") + '\n'
                   + _joint("j", "hinge", "a", "b") + '</robot>', 2, "invalid joint type"),
      "no_geometry": ('<robot name="r">\n<link name="a"><collision>\n<geometry/></collision>'
                      '</link></robot>', 3, "geometry"),
      "cycle": ('<robot name="r">' + _link("a") + _link("b") + '\n'
                + _joint("j1", "revolute", "a", "b") + _joint("j2", "revolute", "b", "a")
                + '</robot>', 1, "cycle"),
      "bad_number": ('<robot name="r">\n<link name="a"><inertial><mass value="x"/>'
                     '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
                     '</link></robot>', 2, "non-numeric"),
  }
  for key, (text, line, msg) in cases.items():
    path = tmp_path / f"{key}.urdf"
    path.write_text(text)
    with pytest.raises(MjcfError) as e:
      numjoco.load_model(str(path))
    assert f"{key}.urdf:{line}:" in str(e.value) and msg in str(e.value), str(e.value)


def test_mimic_joints_become_joint_equalities():
  links = "".join(_link(n) for n in ("a", "b", "c", "d"))
  urdf = ('<robot name="mimic">' + links
          + _joint("j1", "revolute", "a", "b", '<limit lower="-1" upper="1"/>')
          + _joint("j3", "revolute", "a", "d", '<mimic joint="j2"/>')
          + _joint("j2", "revolute", "b", "c",
                   '<limit lower="-1" upper="1"/><mimic joint="j1" multiplier="2" '
                   'offset="0.1"/>')
          + "</robot>")
  _check(urdf)
  m = numjoco.load_model(urdf)
  assert m.neq == 2
  # the mimic holds along a simulation: q(j2) = 0.1 + 2 q(j1)
  d = numjoco.make_data(m)
  d.qpos[:] = [0.3, 0.7, 0.7]
  d.qvel[:] = [1.0, 0.0, 0.0]
  numjoco.step(m, d, 2000)
  assert abs(d.qpos[1] - (0.1 + 2 * d.qpos[0])) < 2e-3


def test_mesh_links(tmp_path):
  """Mesh geometry: one mesh asset per (file, scale), named after the file stem, found
  through the URDF's meshdir; visual and collision meshes as MuJoCo imports them."""
  import shutil
  assets = os.path.join(os.path.dirname(__file__), "assets", "mujoco")
  (tmp_path / "meshes").mkdir()
  for f in ("sphere.obj", "cone.obj"):
    shutil.copy(os.path.join(assets, f), tmp_path / "meshes" / f)
  mesh = '<geometry><mesh filename="{f}" scale="{s}"/></geometry>'
  body = ('<collision>' + mesh.format(f="cone.obj", s="0.1 0.1 0.1") + '</collision>'
          '<visual>' + mesh.format(f="cone.obj", s="0.1 0.1 0.1") + '</visual>'
          '<collision><origin xyz="0 0 .2"/>' + mesh.format(f="sphere.obj", s="0.05 0.05 0.05")
          + '</collision>'
          '<collision><origin xyz="0 0 .4"/>' + mesh.format(f="sphere.obj", s="0.1 0.05 0.05")
          + '</collision>')
  urdf = ('<robot name="m"><mujoco><compiler meshdir="meshes" discardvisual="false"/></mujoco>'
          + _link("base") + _link("a", extra=body)
          + _joint("j", "revolute", "base", "a", '<limit lower="-1" upper="1"/>') + "</robot>")
  path = tmp_path / "robot.urdf"
  path.write_text(urdf)
  mjm = mujoco.MjModel.from_xml_path(str(path))
  ours = compile_model(str(path))
  assert_same(ours, mjm)
  m = numjoco.load_model(str(path))
  assert [numjoco.id2name(m, numjoco.mjtObj.MESH, i) for i in range(m.nmesh)] == [
      "cone", "sphere", "sphere1"]
