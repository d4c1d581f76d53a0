"""SDF geoms from MuJoCo's first-party SDF plugins (mujoco.sdf.torus/bowl/gear/nut/bolt) vs
MuJoCo 4.0: the compiled fields (plugin_*, geom_plugin, the marching-cubes meshes bit for bit,
mesh inertia -> body mass/inertia), the plugins' distances (the compiler's numpy ones and the
engine's numba ones), mj_collision contacts of every pair 4.0 routes to its SDF colliders at
random poses, teacher-forced qacc and rollouts on MuJoCo's SDF example models, rays, and the
errors for bad plugin input. Models: copies of MuJoCo's model/plugin/sdf/*.xml (unmodified)
in tests/assets/sdf/."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.collision import sdf as sdf
from numjoco.engine import interop
from numjoco.engine.forward import fwd_position
from numjoco.engine.mjcf import MjcfError
from numjoco.engine.mjcf import _plugin
from numjoco.engine.mjcf import compile_model

_DIR = os.path.join(os.path.dirname(__file__), "assets", "sdf")
MODELS = ["torus.xml", "bowl.xml", "gear.xml", "nutbolt.xml", "primitives.xml", "mesh.xml",
          "ray/sdf.xml"]
_TOL = 1e-6


def _path(name):
  return os.path.join(_DIR, name)


# ---------------------------------------------------------------------------- compiled fields

@pytest.mark.parametrize("name", MODELS)
def test_compiled_fields(name):
  """Plugin fields, the meshes made from the SDFs (vertices, faces, normals bit for bit; hull
  sizes), geom bounds and the body inertia they give, as 4.0 compiles them."""
  sizes, A, _ = compile_model(_path(name))
  mjm = mujoco.MjModel.from_xml_path(_path(name))
  for k in ("nplugin", "npluginattr", "nmeshvert", "nmeshface", "nmeshgraph"):
    assert sizes[k] == getattr(mjm, k), k
  assert sizes["nmeshnormal"] == mjm.nmeshnormal
  for k in ("plugin", "plugin_attr", "plugin_attradr", "plugin_stateadr", "plugin_statenum",
            "geom_plugin", "geom_type", "geom_dataid", "mesh_vertadr", "mesh_vertnum",
            "mesh_faceadr", "mesh_facenum", "mesh_graphadr", "mesh_vert", "mesh_face",
            "mesh_normal", "mesh_facenormal", "mesh_pos", "mesh_quat", "mesh_graph",
            "mesh_extrema"):
    np.testing.assert_array_equal(np.asarray(A[k]).ravel(),
                                  np.asarray(getattr(mjm, k)).ravel(), err_msg=k)
  for k in ("geom_size", "geom_aabb", "geom_rbound", "geom_pos", "geom_quat", "body_mass",
            "body_inertia", "body_ipos", "body_iquat", "body_subtreemass"):
    np.testing.assert_allclose(np.asarray(A[k]).ravel(), np.asarray(getattr(mjm, k)).ravel(),
                               rtol=1e-9, atol=1e-9, err_msg=k)
  assert A["opt_sdf_iterations"][0] == mjm.opt.sdf_iterations
  assert A["opt_sdf_initpoints"][0] == mjm.opt.sdf_initpoints


@pytest.mark.parametrize("name", ["torus.xml", "gear.xml", "nutbolt.xml", "bowl.xml"])
def test_model_from_mujoco_knows_the_sdfs(name):
  """engine.interop.model_from_mujoco reads 4.0's plugin slots and config strings into the
  engine-only SDF kind and parameters: the same arrays our compiler makes."""
  from numjoco.engine import interop
  sizes, A, _ = compile_model(_path(name))
  m = interop.model_from_mujoco(mujoco.MjModel.from_xml_path(_path(name)))
  assert sizes["nplugin"] > 0
  np.testing.assert_array_equal(m.plugin_kind, A["plugin_kind"])
  np.testing.assert_allclose(m.plugin_param, A["plugin_param"], rtol=0, atol=1e-12)


_KINDS = {"torus": [0.35, 0.15], "bowl": [0.4, 1.0, 0.02], "gear": [0.3, 2.8, 25, 0.2, -1],
          "nut": [0.26], "bolt": [0.255]}


@pytest.mark.parametrize("kind", list(_KINDS))
def test_plugin_distance_numba_equals_numpy(kind):
  """The engine's distance (collision, rays) is the compiler's (which made the meshes that
  equal 4.0's) within 1e-12, at random points of the plugin's box; the gradient is the
  distance's derivative."""
  k, _, _ = _plugin.SDF_PLUGINS["mujoco.sdf." + kind]
  a = np.zeros(_plugin.NATTR)
  a[:len(_KINDS[kind])] = _KINDS[kind]
  box = _plugin.aabb(k, a)
  rng = np.random.default_rng(k)
  p = (rng.uniform(-1, 1, (300, 3)) * 1.2 * np.array(box[3:])) + box[:3]
  ref = _plugin.distance(k, a, p)
  ours = np.array([sdf.plugin_distance(k, a, *x) for x in p])
  # equal up to the last bits of numpy's and the C library's trig functions (gear, nut, bolt)
  np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
  h = 1e-6
  for x in p[:40]:
    g = np.array(sdf.plugin_gradient(k, a, *x))
    fd = [(_plugin.distance(k, a, x + h * e) - _plugin.distance(k, a, x - h * e)) / (2 * h)
          for e in np.eye(3)]
    if np.all(np.isfinite(fd)) and abs(np.linalg.norm(fd) - 1) < 0.2:   # away from kinks
      np.testing.assert_allclose(g, fd, atol=2e-3)


# --------------------------------------------------------------------------------- contacts

def _contacts(m, d, mjm, mjd):
  """Run our position stage on MuJoCo's state; (ours, MuJoCo's) contact lists."""
  interop.data_from_mujoco(mjd, d)
  fwd_position(m.struct, d.struct)
  n, c = mjd.ncon, mjd.contact
  ours = dict(geom=np.stack([d.contact_geom1[:d.ncon], d.contact_geom2[:d.ncon]], 1),
              dist=d.contact_dist[:d.ncon].copy(), pos=d.contact_pos[:d.ncon].copy(),
              frame=d.contact_frame[:d.ncon].copy())
  ref = dict(geom=np.stack([c.geom1[:n], c.geom2[:n]], 1), dist=np.array(c.dist[:n]),
             pos=np.array(c.pos[:n]), frame=np.array(c.frame[:n]))
  return ours, ref


def _assert_same(ours, ref, where):
  assert len(ours["dist"]) == len(ref["dist"]), (
      f"{where}: {len(ours['dist'])} contacts, MuJoCo {len(ref['dist'])}")
  np.testing.assert_array_equal(ours["geom"], ref["geom"], err_msg=where)
  for k in ("dist", "pos", "frame"):
    np.testing.assert_allclose(ours[k], ref[k], rtol=0, atol=_TOL,
                               err_msg=f"{where}: {k}")


_TORUS = """<extension><plugin plugin="mujoco.sdf.torus"><instance name="torus">
  <config key="radius1" value="0.35"/><config key="radius2" value="0.15"/></instance></plugin>
  <plugin plugin="mujoco.sdf.bowl"><instance name="bowl"><config key="height" value="0.4"/>
  <config key="radius" value="1.0"/><config key="thickness" value="0.02"/></instance></plugin>
  </extension>"""
_OTHER = {
    "plane": '<geom type="plane" size="3 3 .1"/>',
    "sphere": '<geom type="sphere" size=".12"/>',
    "capsule": '<geom type="capsule" size=".07 .15"/>',
    "ellipsoid": '<geom type="ellipsoid" size=".15 .1 .08"/>',
    "cylinder": '<geom type="cylinder" size=".1 .12"/>',
    "box": '<geom type="box" size=".12 .09 .07"/>',
    "mesh": '<geom type="mesh" mesh="die"/>',
    "torus": '<geom type="sdf" mesh="torus"><plugin instance="torus"/></geom>',
    "bowl": '<geom type="sdf" mesh="bowl"><plugin instance="bowl"/></geom>',
}


def _pair_xml(other, sdf="torus"):
  """A free sdf geom and another geom (static for the plane, else free)."""
  body = (f'<geom pos="0 0 -.3" {_OTHER[other][6:]}' if other == "plane"
          else f'<body pos="0 0 .5"><freejoint/>{_OTHER[other]}</body>')
  return f"""<mujoco>{_TORUS}<option sdf_iterations="10" sdf_initpoints="20"/>
  <asset><mesh name="torus"><plugin instance="torus"/></mesh>
  <mesh name="bowl"><plugin instance="bowl"/></mesh>
  <mesh name="die" file="{_path('asset/die.obj')}" scale=".2 .2 .2"/></asset>
  <worldbody>{body}<body><freejoint/><geom type="sdf" mesh="{sdf}"><plugin instance="{sdf}"/>
  </geom></body></worldbody></mujoco>"""


# mjc_SDF is deterministic (Halton starting points), so contacts match 4.0's pose for pose.
# Two things made box-sdf differ (3-8 of 22 poses equal): the poses of both geoms go in as
# d->geom_xquat, not a quaternion remade from geom_xmat (last-bit different, and a start on
# the box's corner and mid-planes then takes the other branch of the box's field), and 4.0's
# box gradient on the surface (test_box_field_as_mujoco). Plane-sdf is mjc_PlaneConvex on the
# sdf's mesh, as plane-mesh; its hull4 areas were float32 under numba (`float` of a float32
# stays float32 there), which on the torus's flat 33-gons picked other quadrilaterals of
# near-equal area (7 of 19 poses equal).


@pytest.mark.parametrize("other", ["plane", "sphere", "capsule", "ellipsoid", "cylinder",
                                   "box", "torus"])
def test_contacts_vs_mujoco(other):
  """mj_collision of a torus sdf with each geom type at 30 random poses: same contacts
  (count, geoms, dist, pos, frame within 1e-6) as 4.0 in every pose (measured: plane 19,
  sphere 20, capsule 19, ellipsoid 18, cylinder 19, box 22, torus 30 touching poses)."""
  match_poses(_pair_xml(other), other, {}, seed=7, lift=0.05)


_BOX = int(mujoco.mjtGeom.mjGEOM_BOX)


def test_box_field_as_mujoco():
  """The box's distance and gradient in the SDF collider equal 4.0's geomDistance and
  geomGradient bit for bit: random points inside and out, and points on its faces, edges and
  corners and their mid-planes, where 4.0's gradient is the normalized sum of the faces'
  normals the point lies on (the 3.x source gave zero there)."""
  from tests.conformance import mjinternal
  xml = _pair_xml("box")
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  g = 0 if mjm.geom_type[0] == _BOX else 1
  s = mjm.geom_size[g]
  rng = np.random.default_rng(5)
  pts = list(rng.uniform(-2, 2, (400, 3)) * s)
  levels = [lambda i: s[i], lambda i: -s[i], lambda i: 0.0, lambda i: 1e-17, lambda i: -0.5 * s[i],
            lambda i: 1.5 * s[i]]
  for fx in levels:
    for fy in levels:
      for fz in levels:
        pts.append(np.array([fx(0), fy(1), fz(2)]))
  on_surface = 0
  for x in pts:
    want_d, want_g = mjinternal.sdf_geom_field(mjm, mjd, g, x, _BOX)
    got_d = sdf.geom_distance(m.struct, _BOX, s, -1, s, -1, x[0], x[1], x[2])
    got_g = sdf.geom_gradient(m.struct, _BOX, s, -1, s, -1, x[0], x[1], x[2])
    assert got_d == want_d, x
    assert got_g == want_g, x
    on_surface += want_d == 0 and max(abs(c) for c in want_g) > 0
  assert on_surface >= 50   # the surface branch is exercised


def match_poses(xml, other, partial, seed, **pose):
  """The contacts of model `xml` at 30 random poses (`_random_pose` with `pose`) against 4.0's:
  equal in every touching pose, or, for `other` in `partial`, in at least the measured number
  of them."""
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(seed)
  touching = matched = 0
  for trial in range(30):
    _random_pose(mjm, mjd, rng, **pose)
    ours, ref = _contacts(m, d, mjm, mjd)
    touching += mjd.ncon > 0
    try:
      _assert_same(ours, ref, f"{other} pose {trial}")
      matched += mjd.ncon > 0
    except AssertionError:
      if other not in partial:
        raise
  assert touching >= 5, "too few touching poses: the test would be vacuous"
  assert matched >= partial.get(other, touching)


def _random_pose(mjm, mjd, rng, lift=0.0, spread=0.25):
  """Every free joint at a random position near the origin and a random orientation."""
  q = mjd.qpos
  q[:] = 0
  for j in range(mjm.njnt):
    a = mjm.jnt_qposadr[j]
    q[a:a + 3] = rng.uniform(-spread, spread, 3) + [0, 0, 0 if j else lift]
    quat = rng.normal(size=4)
    q[a + 3:a + 7] = quat / np.linalg.norm(quat)
  mujoco.mj_forward(mjm, mjd)


@pytest.mark.xfail(strict=True, reason=(
    "mesh-sdf (mjc_MeshSDF): 4.0's contacts are deeper and more than ours (the 3.x source's "
    "Frank-Wolfe sampling of each triangle, which we have, visiting faces in face order, not "
    "BVH order); measured: 0 of 7 touching poses equal, e.g. 3 contacts at -0.016..-0.004 "
    "where 4.0 has 6 at -0.066..-0.057"))
def test_mesh_sdf_contacts():
  """mjc_MeshSDF: the same contacts as 4.0, as a set, at random poses."""
  xml = _pair_xml("mesh")
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(3)
  for trial in range(12):
    _random_pose(mjm, mjd, rng, spread=0.2)
    ours, ref = _contacts(m, d, mjm, mjd)
    assert len(ours["dist"]) == len(ref["dist"]), f"pose {trial}"
    oo, oref = np.lexsort(ours["pos"].T), np.lexsort(ref["pos"].T)
    for k in ("dist", "pos", "frame"):
      np.testing.assert_allclose(ours[k][oo], ref[k][oref], atol=_TOL, err_msg=k)


# ------------------------------------------------------------------------------ the models

# nut and bolt: the plugins' forward-difference gradients (step 1e-8) turn the last-bit
# differences of the trig functions into contacts ~1e-8 apart; the stiff thread contacts
# (solimp width 1e-4) make that up to 6.6e-4 in qacc of magnitude ~1 (measured, step 149)
_QACC_TOL = {"nutbolt.xml": 2e-3}
_DYNAMIC = ["torus.xml", "bowl.xml", "gear.xml", "nutbolt.xml", "primitives.xml"]


@pytest.mark.parametrize("name", _DYNAMIC)
def test_teacher_forced_qacc(name):
  """Along 4.0's trajectory of MuJoCo's SDF example models (gear: random motor controls):
  at every 25th of 300 steps our contacts and qacc from MuJoCo's state equal 4.0's."""
  m = numjoco.load_model(_path(name))
  mjm = mujoco.MjModel.from_xml_path(_path(name))
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(0)
  total = 0
  for i in range(300):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
    if i % 25 == 24:
      mujoco.mj_forward(mjm, mjd)
      interop.data_from_mujoco(mjd, d)
      numjoco.forward(m, d)
      ours = dict(geom=np.stack([d.contact_geom1[:d.ncon], d.contact_geom2[:d.ncon]], 1),
                  dist=d.contact_dist[:d.ncon], pos=d.contact_pos[:d.ncon],
                  frame=d.contact_frame[:d.ncon])
      c = mjd.contact
      ref = dict(geom=np.stack([c.geom1, c.geom2], 1), dist=c.dist, pos=c.pos, frame=c.frame)
      _assert_same(ours, ref, f"{name} step {i}")
      total += mjd.ncon
      scale = max(1.0, np.abs(mjd.qacc).max())
      np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0,
                                 atol=_QACC_TOL.get(name, 1e-6) * scale,
                                 err_msg=f"{name} step {i}: qacc")
  assert total > 0


@pytest.mark.parametrize("name", ["torus.xml", "bowl.xml"])
def test_rollout(name):
  """100 steps from the initial state, ours against 4.0's, free-running: the positions stay
  within 1e-6 (contacts agree along the way)."""
  m = numjoco.load_model(_path(name))
  mjm = mujoco.MjModel.from_xml_path(_path(name))
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  ncon = 0
  for i in range(100):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    ncon += mjd.ncon
    np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=0, atol=1e-6, err_msg=f"step {i}")
  assert ncon > 0


# ----------------------------------------------------------------------------------- rays

def test_rangefinder_on_sdf():
  """MuJoCo's ray/sdf.xml: a swinging rangefinder against a torus sdf, dist and normal
  against 4.0 over 300 steps (hits and misses)."""
  m = numjoco.load_model(_path("ray/sdf.xml"))
  mjm = mujoco.MjModel.from_xml_path(_path("ray/sdf.xml"))
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  hits = 0
  for i in range(300):
    mujoco.mj_step(mjm, mjd)
    if i % 10 == 0:
      interop.data_from_mujoco(mjd, d)
      numjoco.forward(m, d)
      mujoco.mj_forward(mjm, mjd)
      np.testing.assert_allclose(d.sensordata, mjd.sensordata, atol=1e-6, err_msg=f"{i}")
      hits += mjd.sensordata[0] >= 0
  assert hits > 0


def test_ray_sdf_scaled_by_vec():
  """mj_ray on an sdf geom with a non-unit direction: 4.0 scales the hit by 1 / |vec|."""
  from numjoco.engine import ray as rays
  m = numjoco.load_model(_path("torus.xml"))
  mjm = mujoco.MjModel.from_xml_path(_path("torus.xml"))
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  geomid = np.zeros(1, np.int32)
  for pnt, vec in (((-1.6, 0.05, 3.8), (3.0, 0.0, 0.0)), ((-1, 0.3, 5), (0, 0, -0.5)),
                   ((-1.2, 0.1, 3.2), (0.4, 0.1, 0.2))):
    ref = mujoco.mj_ray(mjm, mjd, np.array(pnt, float), np.array(vec, float), None, 1, -1,
                        geomid)
    x, g, *_ = rays.ray(m.struct, d.struct, pnt, vec, -1, False)
    assert g == geomid[0]
    assert abs(x - ref) < 1e-9


# --------------------------------------------------------------------------------- errors

def _xml(ext, asset='<mesh name="t"><plugin instance="t"/></mesh>',
         geom='<geom type="sdf" mesh="t"><plugin instance="t"/></geom>'):
  return (f"<mujoco><extension>{ext}</extension><asset>{asset}</asset><worldbody><body>"
          f"<freejoint/>{geom}</body></worldbody></mujoco>")


_TORUS_EXT = '<plugin plugin="mujoco.sdf.torus"><instance name="t"/></plugin>'


@pytest.mark.parametrize("xml, match", [
    (_xml('<plugin plugin="mujoco.elasticity.cable"><instance name="t"/></plugin>'),
     "plugin 'mujoco.elasticity.cable' is not supported"),
    (_xml('<plugin plugin="mujoco.sdf.torus"><instance name="t"><config key="radius" '
          'value="1"/></instance></plugin>'), "unknown config key 'radius'"),
    (_xml('<plugin plugin="mujoco.sdf.torus"><instance name="t"><config key="radius1" '
          'value="big"/></instance></plugin>'), "invalid value 'big'"),
    (_xml(_TORUS_EXT, asset='<mesh name="t"><plugin instance="nope"/></mesh>'),
     "unknown plugin instance 'nope'"),
    (_xml('<plugin plugin="mujoco.sdf.torus"><instance/></plugin>'), "instance needs a name"),
    (_xml(_TORUS_EXT + _TORUS_EXT), "repeated plugin instance name 't'"),
    (_xml(_TORUS_EXT, geom='<geom type="sdf" mesh="t"/>'), "made from an SDF plugin and has no "
     "octree"),
    (_xml(_TORUS_EXT, geom='<geom type="sphere" size=".1"><plugin instance="t"/></geom>'),
     "only sdf geoms take a plugin"),
    (_xml(_TORUS_EXT, asset='<mesh name="t" scale="2 2 2"><plugin instance="t"/></mesh>'),
     "scale is not compatible with SDFs"),
    (_xml(_TORUS_EXT).replace("<freejoint/>", '<freejoint/><plugin instance="t"/>'),
     "body plugins are not supported"),
])
def test_bad_plugin_input(xml, match):
  """Bad plugin input: a clear error naming what is wrong, with its line."""
  with pytest.raises(MjcfError, match=match) as e:
    compile_model(xml)
  assert e.value.line


def test_implicit_instance():
  """<plugin plugin=...> without an instance on a mesh and a geom: implicit instances with
  the defaults, as 4.0 compiles them."""
  xml = ('<mujoco><extension><plugin plugin="mujoco.sdf.torus"/></extension>'
         '<asset><mesh name="t"><plugin plugin="mujoco.sdf.torus"/></mesh></asset>'
         '<worldbody><body><freejoint/><geom type="sdf" mesh="t">'
         '<plugin plugin="mujoco.sdf.torus"/></geom></body></worldbody></mujoco>')
  sizes, A, _ = compile_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  assert sizes["nplugin"] == mjm.nplugin
  np.testing.assert_array_equal(A["geom_plugin"], mjm.geom_plugin)
  np.testing.assert_array_equal(A["mesh_vert"], mjm.mesh_vert)
  np.testing.assert_array_equal(A["plugin_attr"], mjm.plugin_attr)
  xml = xml.replace('<extension><plugin plugin="mujoco.sdf.torus"/></extension>', "")
  with pytest.raises(MjcfError, match="not declared in <extension>"):
    compile_model(xml)


# ---------------------------------------------------------------------------------- drawing

def test_sdf_geoms_draw_their_meshes(tmp_path):
  """A torus and a gear sdf geom are drawn with the meshes made from them: each covers the
  pixels MuJoCo 4.0's renderer gives it (IoU > 0.9); side by side in
  $TMPDIR/render-tests/sdf_vs_mujoco.png."""
  from tests.render.test_mesh_render import assert_sdf_geoms_as_mujoco
  from tests.render.test_vs_mujoco import COLOURS
  xml = f"""<mujoco><extension><plugin plugin="mujoco.sdf.torus"><instance name="torus"/>
  </plugin><plugin plugin="mujoco.sdf.gear"><instance name="gear">
  <config key="diameter" value="0.6"/><config key="teeth" value="12"/></instance></plugin>
  </extension><asset><mesh name="torus"><plugin instance="torus"/></mesh>
  <mesh name="gear"><plugin instance="gear"/></mesh></asset><worldbody>
  <light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false"
    diffuse=".5 .5 .5"/>
  <body pos="0 0 .3" euler="40 20 0"><geom type="sdf" mesh="torus" rgba="{' '.join(map(str, COLOURS[0]))} 1">
    <plugin instance="torus"/></geom></body>
  <body pos=".6 .3 .1" euler="0 30 10"><geom type="sdf" mesh="gear" rgba="{' '.join(map(str, COLOURS[1]))} 1">
    <plugin instance="gear"/></geom></body></worldbody></mujoco>"""
  assert_sdf_geoms_as_mujoco(tmp_path, xml, "sdf")
