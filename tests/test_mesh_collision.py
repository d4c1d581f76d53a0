"""Mesh contacts from our collision driver vs MuJoCo's mj_collision: plane-mesh
(mjc_PlaneConvex: deepest vertex plus hull neighbours) and every primitive-mesh and mesh-mesh
pair through GJK/EPA and multicontact on mesh polygons, in random poses, contact by contact
(same pairs and order, dist, pos, frame within 1e-6); the compiled mesh polygons against
MuJoCo's mesh_poly* arrays."""
import math
import os

import mujoco
import numpy as np
import pytest

import numjoco
from tests.conformance import test_contact as contact_scenes
from tests.conformance.test_contact import _compare
from tests.models import models_of, pair_pose

# a convex, irregular 14-vertex polyhedron (hill-climbing path in MuJoCo: >= 10 vertices)
_RNG = np.random.default_rng(11)
_BLOB = _RNG.normal(size=(14, 3)) * [0.12, 0.09, 0.07]
_BLOB_V = " ".join("%.6f" % x for x in _BLOB.ravel())
# a small 6-vertex one (exhaustive support path)
_WEDGE_V = "-.1 -.06 -.04  .1 -.05 -.04  0 .07 -.05  -.08 -.05 .06  .09 -.04 .05  .01 .06 .05"

_ASSETS = f"""<asset><mesh name="blob" vertex="{_BLOB_V}"/>
  <mesh name="wedge" vertex="{_WEDGE_V}"/></asset>"""

_SHAPES = {
    **contact_scenes._SHAPES,
    "blob": 'type="mesh" mesh="blob"',
    "wedge": 'type="mesh" mesh="wedge"',
}
# MuJoCo replaces the GJK/EPA contact by up to 4 (box-mesh, mesh-mesh, cylinder-mesh:
# polygon clipping of aligned faces or of an edge on a face) or 2 (a capsule's segment on a
# mesh polygon) clipped contacts where flat features meet (engine/collision/multicontact.py,
# `multicontact`). Every pose's whole contact list must equal MuJoCo's: the order and the
# choice of clipped points are decided by round-off, so this needs the compiler's eig3 (mesh
# frames, so polygon normals) and the cylinder and capsule branches to follow MuJoCo bit for
# bit.
MULTI_PAIRS = [("box", "blob"), ("box", "wedge"), ("blob", "blob"), ("blob", "wedge"),
               ("wedge", "wedge"), ("capsule", "blob"), ("capsule", "wedge"),
               ("cylinder", "blob"), ("cylinder", "wedge")]
PAIRS = [("sphere", "blob"), ("sphere", "wedge"),
         ("capsule", "blob"), ("capsule", "wedge"), ("ellipsoid", "blob"),
         ("cylinder", "blob"), ("cylinder", "wedge"), ("box", "blob"), ("box", "wedge"),
         ("blob", "blob"), ("blob", "wedge"), ("wedge", "wedge")]


def _scene(a, b, flags=""):
  first = (f'<geom name="a" {_SHAPES[a]}/>' if a == "plane" else
           f'<body name="A" pos="0 0 .3"><freejoint/><geom name="a" {_SHAPES[a]}/></body>'
           '<geom type="plane" size="3 3 .1" contype="2" conaffinity="2"/>')
  return f"""<mujoco><option timestep="0.005">{flags}</option>{_ASSETS}<worldbody>{first}
    <body name="B" pos="0.03 0.02 0.55" euler="20 30 40"><freejoint/>
      <geom name="b" {_SHAPES[b]} margin=".003"/></body></worldbody></mujoco>"""


def _run(a, b, ntrial=40, seed=0, lenient=False, flags=""):
  """Compare contacts in `ntrial` random poses; with `lenient`, return (trials that match
  fully, trials whose first contact matches, trials with contacts, trials where MuJoCo gives
  one contact, those of them we match fully) instead of asserting."""
  xml = _scene(a, b, flags)
  m, mjm = models_of(xml)
  rng = np.random.default_rng(seed + len(a) * 7 + len(b))
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  total = 0
  full = first = touching = single = single_ok = 0
  for trial in range(ntrial):
    pair_pose(mjm, mjd, rng, a == "plane", top=0.12)
    if not lenient:
      total += _compare(m, d, mjm, mjd, f"trial {trial}")
      continue
    try:
      ok = _compare(m, d, mjm, mjd, f"trial {trial}") > 0
    except AssertionError:
      ok = False
    full += ok
    single += mjd.ncon == 1
    single_ok += mjd.ncon == 1 and ok
    if mjd.ncon:
      touching += 1
      first += (d.ncon > 0 and abs(d.contact_dist[0] - mjd.contact.dist[0]) < 1e-6
                and np.allclose(d.contact_pos[0], mjd.contact.pos[0], atol=1e-6))
  return (full, first, touching, single, single_ok) if lenient else total


@pytest.mark.parametrize("a,b", [pytest.param(a, b, id=f"{a}-{b}") for a, b in PAIRS])
def test_mesh_pair(a, b):
  """Each pair type with a mesh, 40 random poses near touching."""
  assert _run(a, b) >= 5, "too few contacts: the scene misses the pair"


@pytest.mark.parametrize("a,b", [pytest.param(a, b, id=f"{a}-{b}") for a, b in MULTI_PAIRS])
def test_multicontact_poses(a, b):
  """Pairs where MuJoCo may give several contacts: in 95 random poses, the whole contact
  list (count, order, dist, pos, frame within 1e-6) matches in every touching pose, and the
  scene has enough poses with several contacts."""
  full, first, touching, single, single_ok = _run(a, b, ntrial=95, lenient=True)
  assert touching - single >= 8, "too few multi-contact poses: the scene misses the feature"
  assert full == touching, f"{full} of {touching} poses match in full"


@pytest.mark.parametrize("a,b", [("box", "blob"), ("cylinder", "wedge"), ("blob", "wedge"),
                                 ("capsule", "blob")], ids=lambda x: x)
def test_multiccd_disabled(a, b):
  """With <flag multiccd="disable"/> MuJoCo gives one contact per pair: so do we, equal to it
  in every pose."""
  full, first, touching, single, single_ok = _run(a, b, ntrial=40, lenient=True,
                                                   flags='<flag multiccd="disable"/>')
  assert touching >= 20
  assert single == touching and full == touching, f"{full} of {touching} poses match"


@pytest.mark.parametrize("mesh", ["blob", "wedge"])
def test_plane_mesh(mesh):
  """Plane-mesh in 200 random poses: the whole contact list (count, order, dist, pos, frame)
  equals MuJoCo's in every pose (engine/collision/plane.py's plane_mesh follows MuJoCo's
  collider as MuJoCo Warp ports it)."""
  full, first, touching, _, _ = _run("plane", mesh, ntrial=200, lenient=True)
  assert touching >= 100, "too few contacts: the scene misses the pair"
  assert first == touching
  assert full == touching, f"{full} of {touching} poses match fully"


def test_plane_mesh_flat_faces():
  """Meshes lying on a face (a box, and a hexagonal prism whose six-sided face MuJoCo prunes to
  four vertices spanning the largest quadrilateral from the deepest one), slightly tilted:
  the contact lists equal MuJoCo's, four contacts each where the face is flat."""
  hexv = " ".join(f"{math.cos(k * math.pi / 3):.6f} {math.sin(k * math.pi / 3):.6f} {z}"
                  for z in (0, .3) for k in range(6))
  xml = f"""<mujoco><asset><mesh name="box" scale=".1 .07 .05"
    vertex="-1 -1 -1 1 -1 -1 1 1 -1 -1 1 -1 -1 -1 1 1 -1 1 1 1 1 -1 1 1"/>
    <mesh name="hex" vertex="{hexv}" scale=".1 .1 .1"/></asset><worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body pos="0 0 .2"><freejoint/><geom type="mesh" mesh="box"/></body>
    <body pos="1 0 .2"><freejoint/><geom type="mesh" mesh="hex"/></body></worldbody></mujoco>"""
  m, mjm = models_of(xml)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(5)
  four = 0
  for trial in range(20):
    tilt = 0.02   # (exactly flat, the deepest vertex is a tie: its hull order decides)
    for j, (z, x) in enumerate(((0.045, 0.0), (0.0, 1.0))):
      q = np.r_[1.0, tilt * rng.normal(size=3)]
      mjd.qpos[7 * j:7 * j + 7] = np.r_[x, 0.3 * rng.normal(), z + 0.002 * rng.normal(), q]
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_forward(mjm, mjd)
    _compare(m, d, mjm, mjd, f"trial {trial}")
    four += sum(list(mjd.contact.geom2[:mjd.ncon]).count(g) == 4 for g in (1, 2))
  assert four >= 10, f"{four} flat contacts of four: the scene misses the face case"


@pytest.mark.parametrize("a,b", [pytest.param(a, b, id=f"{a}-{b}") for a, b in PAIRS
                                 if (a, b) in MULTI_PAIRS])
def test_single_contact_poses(a, b):
  """Pairs where MuJoCo may use multicontact: in every pose where MuJoCo gives one contact, our
  contact list equals it (dist, pos, frame within 1e-6)."""
  full, first, touching, single, single_ok = _run(a, b, ntrial=60, lenient=True)
  assert single >= 10, "too few single-contact poses: the scene misses the pair"
  assert single_ok == single, f"{single - single_ok} of {single} single-contact poses differ"


# ---------------------------------------------- MuJoCo's test meshes (tests/assets/mujoco)

_ASSET_DIR = os.path.join(os.path.dirname(__file__), "assets", "mujoco")


def _pile_xml():
  """MuJoCo's sphere.obj (2562 vertices, hull only) and cone.obj (501) meshes dropped in a
  pile on a plane, as its 100spheremesh / conemesh_box test scenes (without <replicate>)."""
  rng = np.random.default_rng(2)
  bodies = []
  for i in range(8):
    x, y = rng.uniform(-0.12, 0.12, 2)
    mesh = "cone" if i % 4 == 3 else "sphere"
    bodies.append(f'<body pos="{x:.3f} {y:.3f} {0.12 + 0.22 * i:.3f}" euler="{17 * i} {29 * i} 0">'
                  f'<freejoint/><geom type="mesh" mesh="{mesh}"/></body>')
  return f"""<mujoco><compiler meshdir="{_ASSET_DIR}"/><option timestep="0.004"/>
    <asset><mesh name="sphere" file="sphere.obj" scale=".1 .1 .1"/>
    <mesh name="cone" file="cone.obj" scale=".08 .08 .08"/></asset>
    <worldbody><geom type="plane" size="2 2 .1"/>{''.join(bodies)}</worldbody></mujoco>"""


def _by_pair(geom1, geom2, n):
  out = {}
  for i in range(n):
    out.setdefault((int(geom1[i]), int(geom2[i])), []).append(i)
  return out


def test_mujoco_meshes_pile():
  """Teacher-forced along MuJoCo's trajectory of the pile (every 10th of 500 steps): the same
  geom pairs collide, and every pair's contact list equals MuJoCo's (count, order, dist,
  pos, frame within 1e-6): 298 plane-mesh pairs (3 of them with 4 contacts) and 14 mesh-mesh
  pairs, all multicontact (3-4 contacts, from the polygons MuJoCo's compiler builds)."""
  from numjoco.engine import interop
  from numjoco.engine.forward import fwd_position
  xml = _pile_xml()
  m, mjm = models_of(xml)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  nplane = full = meshmesh = mm_full = 0
  bad = []
  close = lambda a, b: (abs(mjd.contact.dist[a] - d.contact_dist[b]) < 1e-6
                        and np.allclose(mjd.contact.pos[a], d.contact_pos[b], atol=1e-6)
                        and np.allclose(mjd.contact.frame[a], d.contact_frame[b], atol=1e-6))
  for step in range(500):
    mujoco.mj_step(mjm, mjd)
    if step % 10:
      continue
    mujoco.mj_forward(mjm, mjd)
    interop.data_from_mujoco(mjd, d)
    fwd_position(m.struct, d.struct)
    ref = _by_pair(mjd.contact.geom1, mjd.contact.geom2, mjd.ncon)
    ours = _by_pair(d.contact_geom1, d.contact_geom2, d.ncon)
    assert set(ref) == set(ours), f"step {step}: colliding pairs differ"
    for pair, rows in ref.items():
      mine = ours[pair]
      if mjm.geom_type[pair[0]] != 0:
        meshmesh += 1
        mm_full += len(rows) == len(mine) and all(close(a, b) for a, b in zip(rows, mine))
        continue
      nplane += 1
      if not close(rows[0], mine[0]):
        bad.append((step, pair))
      full += len(rows) == len(mine) and all(close(a, b) for a, b in zip(rows, mine))
  assert nplane >= 100 and meshmesh >= 5, (nplane, meshmesh)
  assert not bad, f"first plane-mesh contact differs in {len(bad)} of {nplane}: {bad[:5]}"
  assert full == nplane, f"only {full} of {nplane} plane-mesh pairs match in full"
  assert mm_full == meshmesh, f"only {mm_full} of {meshmesh} mesh-mesh pairs match"


def test_sphere_mesh_comes_to_rest():
  """Stepping our engine: MuJoCo's sphere.obj (radius 0.1) dropped on the plane settles on it
  (no vertical motion left, may still roll slowly), its centre 0.1 above the plane within
  2 mm, as MuJoCo's does."""
  xml = f"""<mujoco><compiler meshdir="{_ASSET_DIR}"/><option timestep="0.002"/>
    <asset><mesh name="sphere" file="sphere.obj" scale=".1 .1 .1"/></asset>
    <worldbody><geom type="plane" size="2 2 .1"/><body pos="0 0 .3" euler="10 20 30">
    <freejoint/><geom type="mesh" mesh="sphere"/></body></worldbody></mujoco>"""
  m, mjm = models_of(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  numjoco.step(m, d, 1000)
  mujoco.mj_step(mjm, mjd, 1000)
  assert abs(mjd.qpos[2] - 0.1) < 2e-3
  assert abs(d.qpos[2] - 0.1) < 2e-3, d.qpos[:3]
  assert abs(d.qvel[2]) < 0.01 and abs(mjd.qvel[2]) < 0.01   # resting (it may still roll)


# ----------------------------------------------------------- mesh polygons (mesh_poly*)

_POLY_MESHES = """
  <mesh name="cube" vertex="-1 -1 -1 1 -1 -1 1 1 -1 -1 1 -1 -1 -1 1 1 -1 1 1 1 1 -1 1 1"
        scale=".1 .07 .05"/>
  <mesh name="prism" vertex="0 0 0 1 0 0 .5 .8 0 0 0 1 1 0 1 .5 .8 1 .2 .3 1 .7 .1 1"
        scale=".1 .1 .1"/>
  <mesh name="sphere" file="sphere.obj" scale=".1 .1 .1"/>
  <mesh name="cone" file="cone.obj" scale=".08 .08 .08"/>"""


_POLY_FIELDS = ("mesh_polynum", "mesh_polyadr", "mesh_polyvertadr", "mesh_polyvertnum",
                "mesh_polyvert", "mesh_polymapadr", "mesh_polymapnum", "mesh_polymap")


def test_mesh_polygons():
  """The compiled hull polygons (mesh_poly*, which multicontact and plane-mesh collisions
  clip) equal MuJoCo's field by field: the same polygons (grouped by their normal's
  angles in the mesh file's frame), vertex cycles (starting vertex included), numbering (MuJoCo's
  hash-map order) and vertex-to-polygon map, normals to 1e-12; for small meshes (the cube's
  and the prism's quads are merged triangles), sphere.obj's 4971 polygons and cone.obj's, its
  500-gon base included."""
  names = ("blob", "wedge", "cube", "prism", "sphere", "cone")
  xml = f"""<mujoco><compiler meshdir="{_ASSET_DIR}"/>
    {_ASSETS.replace('</asset>', _POLY_MESHES + '</asset>')}<worldbody>
    {''.join(f'<geom type="mesh" mesh="{n}"/>' for n in names)}</worldbody></mujoco>"""
  m, mjm = models_of(xml)
  for f in _POLY_FIELDS:
    np.testing.assert_array_equal(getattr(m, f), getattr(mjm, f), err_msg=f)
  np.testing.assert_allclose(m.mesh_polynormal, mjm.mesh_polynormal, rtol=0, atol=1e-12)
  assert m.npolygonmax == mjm.npolygonmax == 500
  sizes = dict(zip(names, mjm.mesh_polynum))
  assert sizes["sphere"] == 4971 and sizes["cube"] == 6 and sizes["prism"] == 5


@pytest.mark.parametrize("path,geom", [
    ("test/engine/testdata/collision_convex/stacked_boxes.xml", 4),   # 8 vertices: exhaustive
    ("model/replicate/bunnies.xml", 6)])                             # hull graph: hill climb
def test_mesh_support_as_mujoco(path, geom):
  """A mesh's support points in GJK/EPA equal MuJoCo's own (its mjCCDObj support function,
  called from its library) bit for bit, in a sequence of directions (generic, and within
  1e-17..1e-8 of a face normal, where vertices nearly tie): small meshes search every vertex
  in mesh order starting from the previous support vertex, larger ones climb the hull graph."""
  from numjoco.engine.collision import convex as cvx
  from numjoco.engine.collision import support
  from tests.conformance import mjinternal
  full = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models", path)
  m, mjm = models_of(full)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  rng = np.random.default_rng(0)
  mat = mjd.geom_xmat[geom].reshape(3, 3)
  dirs = []
  for i in range(1500):
    u = rng.normal(size=3)
    if i % 3 == 0:
      u = mat[:, rng.integers(3)] * rng.choice([-1, 1]) + u * 10.0 ** rng.uniform(-17, -8)
    dirs.append(u / np.linalg.norm(u))
  ref = mjinternal.support(mjm, mjd, geom, dirs)
  vert, ext, graph = cvx.mesh_arrays(m.struct, geom)
  from numjoco.engine.collision.work import work_sizes
  nfloat, nint = work_sizes(35, vert.shape[0])
  fbuf, ibuf = np.zeros(nfloat), np.zeros(nint, dtype=np.int64)
  objs, objt = cvx.split_work(fbuf, ibuf, 35)[:2]
  cvx.set_obj(objs, objt, 0, int(mjm.geom_type[geom]), mjm.geom_size[geom], mjd.geom_xpos[geom],
               mjd.geom_xmat[geom], 0.0)
  cvx.set_mesh(objs, objt, 0, vert, ext, graph)
  differ = [i for i, u in enumerate(dirs) if support.support(objs, objt, 0, *u)[:3] != ref[i][0]]
  assert not differ, f"{len(differ)} of {len(dirs)} support points differ, the first at {differ[0]}"


def _prism(n, rng):
  """Vertices of an irregular convex prism with n-gon caps (flat top and bottom)."""
  ang = np.sort(rng.uniform(0, 2 * np.pi, n))
  rad = rng.uniform(0.08, 0.12, n)
  ring = np.c_[rad * np.cos(ang), rad * np.sin(ang)]
  return np.r_[np.c_[ring, np.full(n, -0.04)], np.c_[ring, np.full(n, 0.05)]]


@pytest.mark.parametrize("n", [6, 9, 14])
def test_plane_mesh_flat_ties_with_mujocos_arrays(n):
  """A prism lying exactly flat on the plane (all cap vertices equally deep), upright and
  upside down, at random yaws and depths down to below its center: plane_mesh fed MuJoCo's
  own mesh arrays gives 4.0.1's contacts. Which of the equally deep vertices comes first
  depends on the hill climb's start (the mesh_extrema seed of the direction's cell, as
  4.0.1's mjc_PlaneConvex) and on the hull vertex order (the compiler's, equal to MuJoCo's,
  is tested in tests/test_mesh_hull_order.py, with Fetch's torso lying flat)."""
  from numjoco.engine.collision import plane
  rng = np.random.default_rng(n)
  verts = " ".join("%.5f" % x for x in _prism(n, rng).ravel())
  xml = f"""<mujoco><asset><mesh name="p" vertex="{verts}"/></asset><worldbody>
    <geom type="plane" size="3 3 .1"/>
    <body><freejoint/><geom type="mesh" mesh="p" margin=".001"/></body></worldbody></mujoco>"""
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  va, nv = mjm.mesh_vertadr[0], mjm.mesh_vertnum[0]
  adr = mjm.mesh_graphadr[0]
  nh, nf = mjm.mesh_graph[adr], mjm.mesh_graph[adr + 1]
  pa, pn = mjm.mesh_polyadr[0], mjm.mesh_polynum[0]
  vert, ext = mjm.mesh_vert[va:va + nv], mjm.mesh_extrema[0]
  graph = mjm.mesh_graph[adr:adr + 2 + 3 * nh + 6 * nf]
  poly = (mjm.mesh_polyvertadr[pa:pa + pn], mjm.mesh_polyvertnum[pa:pa + pn], mjm.mesh_polyvert,
          mjm.mesh_polynormal[pa:pa + pn], mjm.mesh_polymapadr[va:va + nv],
          mjm.mesh_polymapnum[va:va + nv], mjm.mesh_polymap)
  dist, pos, frame = np.zeros(4), np.zeros((4, 3)), np.zeros((4, 9))
  four = 0
  for trial in range(60):
    half = rng.uniform(0, np.pi)   # half the yaw
    c, s = np.cos(half), np.sin(half)
    q = np.array([0.0, c, s, 0.0]) if trial % 2 else np.array([c, 0.0, 0.0, s])   # flipped
    mjd.qpos[:] = np.r_[rng.uniform(-.1, .1, 2), rng.uniform(-0.08, 0.05), q]
    mujoco.mj_forward(mjm, mjd)
    k = plane.plane_mesh(mjd.geom_xpos[0], mjd.geom_xmat[0], mjd.geom_xpos[1], mjd.geom_xmat[1],
                       vert, ext, graph, poly, 0.001, dist, pos, frame)
    assert k == mjd.ncon, f"trial {trial}: {k} contacts, MuJoCo {mjd.ncon}"
    np.testing.assert_allclose(dist[:k], mjd.contact.dist, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pos[:k], mjd.contact.pos, rtol=0, atol=1e-12)
    four += k == 4
  assert four >= 10, "the scene misses the flat face"


def _three_meshes():
  """(Model struct, per mesh (vert, ext, graph)) of three different meshes: the blob (hill
  climb), the wedge (every vertex) and a 12-vertex prism (hill climb)."""
  from numjoco.engine.collision import convex as cvx
  prism = " ".join("%.5f" % x for x in _prism(6, np.random.default_rng(3)).ravel())
  xml = f"""<mujoco><asset><mesh name="blob" vertex="{_BLOB_V}"/>
    <mesh name="wedge" vertex="{_WEDGE_V}"/><mesh name="prism" vertex="{prism}"/></asset>
    <worldbody><geom type="mesh" mesh="blob"/><geom type="mesh" mesh="wedge" pos="1 0 0"/>
    <geom type="mesh" mesh="prism" pos="2 0 0"/></worldbody></mujoco>"""
  m = numjoco.load_model(xml).struct
  return m, [cvx.mesh_arrays(m, g) for g in range(3)]


def _check_support(objs, objt, k, vert, rng, ndir=40):
  """Object k's support points (mesh frame: identity pose) in random directions reach the
  largest projection over every vertex of the mesh (a convex hull's support)."""
  from numjoco.engine.collision import support
  v = np.asarray(vert, dtype=float)
  for _ in range(ndir):
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    p = support.support(objs, objt, k, *u)
    assert np.dot(p[:3], u) == pytest.approx(np.max(v @ u), abs=1e-12)


def test_mesh_cache_evicts_and_resets():
  """The work buffers' mesh cache (engine/collision/convex.set_mesh): in buffers with room for
  two meshes only, pairs of three meshes in turn empty it and refill it, and both objects of
  every pair still see their own mesh; a mesh whose vertices changed in place is copied again;
  buffers holding garbage (never emptied) give the same."""
  from numjoco.engine.collision import convex as cvx
  from numjoco.engine.collision.work import work_sizes
  m, meshes = _three_meshes()
  rng = np.random.default_rng(0)
  # room for 4 rows of vertices (six each): the hulls of 9, 6 and 10 vertices take 2, 1 and 2
  nfloat, nint = work_sizes(35, 0, 2)   # 2 rows
  fbuf, ibuf = np.zeros(nfloat + 2 * 20), np.zeros(nint + 400, dtype=np.int64)
  mesh_type = int(numjoco.mjtGeom.MESH)

  def objects():
    """The buffers' objects, both meshes at the origin, unrotated."""
    objs, objt = cvx.split_work(fbuf, ibuf, 35, False)[:2]
    for k in range(2):
      cvx.set_obj(objs, objt, k, mesh_type, np.zeros(3), np.zeros(3), np.eye(3).ravel(), 0.0)
    return objs, objt

  emptied = 0
  for a, b in [(0, 1), (1, 2), (2, 0), (0, 0), (1, 0), (2, 1), (0, 2)] * 2:
    objs, objt = objects()
    first = objt.ravel()[cvx._MESH_TABLE + 3]   # the key of the table's first entry
    cvx.set_meshes(objs, objt, mesh_type, *meshes[a], *meshes[b])
    emptied += objt.ravel()[cvx._MESH_TABLE + 3] != first
    _check_support(objs, objt, 0, meshes[a][0], rng)
    _check_support(objs, objt, 1, meshes[b][0], rng)
  assert emptied >= 3   # the cache was emptied and refilled along the way

  vert = meshes[2][0]
  vert *= 1.5   # in place (the model's own mesh_vert)
  objs, objt = objects()
  cvx.set_mesh(objs, objt, 0, *meshes[2])
  _check_support(objs, objt, 0, vert, rng)

  ibuf[:] = rng.integers(-1000, 1000, ibuf.shape[0])
  fbuf[:] = rng.normal(size=fbuf.shape[0])
  objs, objt = objects()
  objt.ravel()[cvx._MESH_TABLE] = 5   # a plausible entry count over garbage entries
  cvx.set_meshes(objs, objt, mesh_type, *meshes[0], *meshes[1])
  _check_support(objs, objt, 0, meshes[0][0], rng)
  _check_support(objs, objt, 1, meshes[1][0], rng)
