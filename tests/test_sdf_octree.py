"""SDF geoms without a plugin: the octree SDF MuJoCo builds from a plain mesh (mjCOctree) vs
MuJoCo 4.0. The compiled oct_* fields and mesh_octadr/octnum (a non-convex extruded U, an
off-centre tetrahedron, the icosahedron of MuJoCo's test models), mj_collision contacts of
the octree SDF with every geom type 4.0 routes to mjc_SDF at random poses, rays, and
teacher-forced qacc of a falling pile. Measured outside the tests (models over the 300 kB
asset limit): MuJoCo's model/plugin/sdf/cow.xml and mug.xml compile to the same octrees
(structure equal, aabb and coeff within 5e-15); teacher-forced, mug's contacts (torus on the
mug) equal 4.0's within 2e-14 and qacc within 1e-12 over 1500 steps; cow's contacts (cow on
cow) within 1e-7 and qacc within 8e-5 relative over 300 steps (the octrees' distances differ
from 4.0's in the last bits; outside an octree's box the gradient is a forward difference with
step 1e-8, which makes that ~1e-8 in a contact, and the contacts are stiff)."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.engine.mjcf import MjcfError
from numjoco.engine.mjcf import compile_model
from tests.test_sdf import _assert_same, _contacts, match_poses

_MODELS = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")
_ICOSAHEDRON = os.path.join(_MODELS, "test", "engine", "testdata", "solver", "model.xml")


def _u_mesh(name="u", extra=""):
  """A U-shaped prism (non-convex: the octree's signs and hanging corners matter), its
  vertices off the origin so the compiler moves it to its centre of mass."""
  poly = [(0, 0), (3, 0), (3, 3), (2, 3), (2, 1), (1, 1), (1, 3), (0, 3)]
  vert = [(x, y, 0) for x, y in poly] + [(x, y, 1.5) for x, y in poly]
  top = [(1, 2, 3), (1, 3, 4), (0, 1, 4), (0, 4, 5), (0, 5, 6), (0, 6, 7)]
  face = [(a + 8, b + 8, c + 8) for a, b, c in top] + [(a, c, b) for a, b, c in top]
  for i in range(8):
    j = (i + 1) % 8
    face += [(i, j, j + 8), (i, j + 8, i + 8)]
  v = " ".join(f"{x} {y} {z}" for x, y, z in vert)
  f = " ".join(f"{a} {b} {c}" for a, b, c in face)
  return f'<mesh name="{name}" vertex="{v}" face="{f}" scale=".06 .06 .06" {extra}/>'


_TET = '<mesh name="tet" vertex="0 0 0  .2 0 0  0 .25 0  0 0 .3"/>'
_ICO = ('<mesh name="ico" scale=".05 .05 .05" vertex="0 1 1.618 0 -1 1.618 0 1 -1.618 '
        '0 -1 -1.618 1 1.618 0 -1 1.618 0 1 -1.618 0 -1 -1.618 0 1.618 0 1 1.618 0 -1 '
        '-1.618 0 1 -1.618 0 -1"/>')


def _one(mesh, name, geom_attrs=""):
  return (f"<mujoco><asset>{mesh}</asset><worldbody><body><freejoint/>"
          f'<geom type="sdf" mesh="{name}" {geom_attrs}/></body></worldbody></mujoco>')


_FIELDS = ("oct_depth", "oct_child", "oct_aabb", "oct_coeff", "mesh_octadr", "mesh_octnum")


@pytest.mark.parametrize("xml", [
    _one(_u_mesh(), "u"),
    _one(_u_mesh(extra='refquat="0.9 0.1 0.3 0.2"'), "u", 'euler="10 20 30"'),
    _one(_TET, "tet", 'pos=".1 0 0"'),
    _ICOSAHEDRON,
], ids=["u", "u-rotated", "tet", "icosahedron"])
def test_octree_fields(xml):
  """The octree (nodes in MuJoCo's order, children, boxes, corner distances) equals 4.0's,
  as do the geom's bounds and the mesh's frame."""
  path = xml if xml.startswith("/") else None
  sizes, A, _ = compile_model(xml)
  mjm = (mujoco.MjModel.from_xml_path(path) if path else mujoco.MjModel.from_xml_string(xml))
  assert sizes["noct"] == mjm.noct > 1000
  for k in _FIELDS:
    np.testing.assert_allclose(np.asarray(A[k], float), np.asarray(getattr(mjm, k), float),
                               rtol=0, atol=1e-12, err_msg=k)
  for k in ("geom_size", "geom_aabb", "geom_rbound", "geom_pos", "geom_quat", "mesh_pos",
            "mesh_quat"):
    np.testing.assert_allclose(A[k], getattr(mjm, k), rtol=1e-9, atol=1e-7, err_msg=k)


def test_model_from_mujoco_has_the_octree():
  """engine.interop.model_from_mujoco carries 4.0's octree: the arrays our compiler makes."""
  xml = _one(_u_mesh(), "u")
  sizes, A, _ = compile_model(xml)
  m = interop.model_from_mujoco(mujoco.MjModel.from_xml_string(xml))
  for k in _FIELDS:
    np.testing.assert_allclose(getattr(m, k), A[k], rtol=0, atol=1e-12, err_msg=k)


def test_octree_of_a_mesh_made_from_a_plugin_is_refused():
  """A mesh made from an SDF plugin has no octree in 4.0 (its sdf geom fails at its first
  collision there): a plugin-less sdf geom on it is an error naming the mesh."""
  xml = ('<mujoco><extension><plugin plugin="mujoco.sdf.torus"><instance name="t"/></plugin>'
         '</extension><asset><mesh name="t"><plugin instance="t"/></mesh></asset><worldbody>'
         '<body><freejoint/><geom type="sdf" mesh="t"/></body></worldbody></mujoco>')
  with pytest.raises(MjcfError, match="mesh 't', which is made from an SDF plugin") as e:
    compile_model(xml)
  assert e.value.line


# --------------------------------------------------------------------------------- contacts

_OTHER = {
    "sphere": '<geom type="sphere" size=".08"/>',
    "capsule": '<geom type="capsule" size=".05 .1"/>',
    "ellipsoid": '<geom type="ellipsoid" size=".1 .07 .05"/>',
    "cylinder": '<geom type="cylinder" size=".07 .08"/>',
    "box": '<geom type="box" size=".08 .06 .05"/>',
    "torus": '<geom type="sdf" mesh="torus"><plugin instance="torus"/></geom>',
    "icosahedron": '<geom type="sdf" mesh="ico"/>',
    "u": '<geom type="sdf" mesh="u2"/>',
}


def _pair_xml(other):
  return f"""<mujoco><extension><plugin plugin="mujoco.sdf.torus"><instance name="torus">
  <config key="radius1" value="0.1"/><config key="radius2" value="0.04"/></instance>
  </plugin></extension><option sdf_iterations="10" sdf_initpoints="20"/>
  <asset><mesh name="torus"><plugin instance="torus"/></mesh>{_ICO}{_u_mesh()}
  {_u_mesh("u2")}</asset><worldbody>
  <body pos="0 0 .3"><freejoint/>{_OTHER[other]}</body>
  <body><freejoint/><geom type="sdf" mesh="u"/></body></worldbody></mujoco>"""


# Poses where a descent is decided by round-off (measured with this test's poses): box, 17 of
# 19 touching poses with the whole list equal (5 before the collider took the geoms'
# orientations from geom_xquat as 4.0 does, see tests/test_sdf.py; cause of the other two not
# found). The icosahedron is now equal in all 17 (one pose used to be a contact apart).
_PARTIAL = {"box": 17}


@pytest.mark.parametrize("other", list(_OTHER))
def test_contacts_vs_mujoco(other):
  """mj_collision of the U's octree SDF with each geom at 30 random poses: the same contacts
  (count, geoms, dist, pos, frame within 1e-6) as 4.0 in every pose (box and icosahedron: at
  least the measured number of poses, see _PARTIAL)."""
  match_poses(_pair_xml(other), other, _PARTIAL, seed=11, spread=0.08)


def test_rays_vs_mujoco():
  """mj_ray on the U's octree SDF from random points toward it (hits and misses): the same
  distance and geom as 4.0."""
  from numjoco.engine import ray as rays
  xml = _one(_u_mesh(), "u", 'euler="10 20 30"')
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  rng = np.random.default_rng(5)
  geomid = np.zeros(1, np.int32)
  hits = 0
  for _ in range(60):
    pnt = rng.normal(size=3) * 0.3
    vec = -pnt + rng.normal(size=3) * 0.05
    ref = mujoco.mj_ray(mjm, mjd, pnt, vec, None, 1, -1, geomid)
    x, g, *_ = rays.ray(m.struct, d.struct, tuple(pnt), tuple(vec), -1, False)
    assert g == geomid[0]
    assert abs(x - ref) < 1e-9
    hits += ref >= 0
  assert hits >= 10


# ------------------------------------------------------------------------------- dynamics

_PILE = f"""<mujoco><option sdf_iterations="10" sdf_initpoints="20" timestep="0.002"/>
<asset>{_ICO}{_u_mesh()}</asset><worldbody>
<geom type="sphere" size="1" pos="0 0 -1"/>
<body pos="0 0 .12" euler="5 10 0"><freejoint/><geom type="sdf" mesh="u"/></body>
<body pos=".03 .02 .3" euler="0 30 10"><freejoint/><geom type="sdf" mesh="ico"/></body>
</worldbody></mujoco>"""


def test_teacher_forced_qacc():
  """Along 4.0's trajectory of a U and an icosahedron (octree SDFs) falling on a sphere and
  each other: at every 20th of 300 steps our contacts and qacc from MuJoCo's state equal
  4.0's (contact normals within 6.9e-8, measured; one was 1.1e-6 off before the SDF collider
  took the geoms' orientations from geom_xquat as 4.0 does)."""
  m = numjoco.load_model(_PILE)
  mjm = mujoco.MjModel.from_xml_string(_PILE)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  total = pairs = 0
  for i in range(300):
    mujoco.mj_step(mjm, mjd)
    if i % 20 == 19:
      mujoco.mj_forward(mjm, mjd)
      _assert_same(*_contacts(m, d, mjm, mjd), f"step {i}")   # (sets our state to 4.0's)
      numjoco.forward(m, d)
      c = mjd.contact
      total += mjd.ncon
      pairs += np.any((c.geom1 == 1) & (c.geom2 == 2))
      scale = max(1.0, np.abs(mjd.qacc).max())
      np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0, atol=1e-6 * scale,
                                 err_msg=f"step {i}: qacc")
  assert total > 0


# ---------------------------------------------------------------------------------- drawing

def test_octree_sdf_geoms_draw_their_meshes(tmp_path):
  """The U and the icosahedron sdf geoms (no plugin) are drawn with their meshes: each covers
  the pixels MuJoCo 4.0's renderer gives it (IoU > 0.9); side by side in
  $TMPDIR/render-tests/sdf_octree_vs_mujoco.png."""
  from tests.render.test_mesh_render import assert_sdf_geoms_as_mujoco
  from tests.render.test_vs_mujoco import COLOURS
  rgba = [" ".join(map(str, COLOURS[i])) + " 1" for i in range(2)]
  xml = f"""<mujoco><asset>{_ICO}{_u_mesh()}</asset><worldbody>
  <light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false"
    diffuse=".5 .5 .5"/>
  <body euler="40 20 0"><geom type="sdf" mesh="u" rgba="{rgba[0]}"/></body>
  <body pos=".2 .1 0" euler="0 30 10"><geom type="sdf" mesh="ico" rgba="{rgba[1]}"/></body>
  </worldbody></mujoco>"""
  assert_sdf_geoms_as_mujoco(tmp_path, xml, "sdf_octree")
