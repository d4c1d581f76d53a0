"""Mesh contacts from our collision driver vs MuJoCo 4.0's mj_collision: plane-mesh
(mjc_PlaneConvex: deepest vertex plus hull neighbours) and every primitive-mesh and mesh-mesh
pair through GJK/EPA, in random poses, contact by contact (same pairs and order, dist, pos,
frame within 1e-6)."""
import os

import mujoco
import numpy as np
import pytest

import engine
from tests.conformance.test_contact import _compare

# a convex, irregular 14-vertex polyhedron (hill-climbing path in MuJoCo: >= 10 vertices)
_RNG = np.random.default_rng(11)
_BLOB = _RNG.normal(size=(14, 3)) * [0.12, 0.09, 0.07]
_BLOB_V = " ".join("%.6f" % x for x in _BLOB.ravel())
# a small 6-vertex one (exhaustive support path)
_WEDGE_V = "-.1 -.06 -.04  .1 -.05 -.04  0 .07 -.05  -.08 -.05 .06  .09 -.04 .05  .01 .06 .05"

_ASSETS = f"""<asset><mesh name="blob" vertex="{_BLOB_V}"/>
  <mesh name="wedge" vertex="{_WEDGE_V}"/></asset>"""

_SHAPES = {
    "plane": 'type="plane" size="3 3 .1"',
    "sphere": 'type="sphere" size=".1"',
    "capsule": 'type="capsule" size=".07 .12"',
    "ellipsoid": 'type="ellipsoid" size=".12 .08 .06"',
    "cylinder": 'type="cylinder" size=".09 .1"',
    "box": 'type="box" size=".1 .07 .05"',
    "blob": 'type="mesh" mesh="blob"',
    "wedge": 'type="mesh" mesh="wedge"',
}
# MuJoCo 4.0 replaces the GJK/EPA contact by up to 4 (box-mesh, mesh-mesh: polygon clipping
# of aligned faces) or 2 (capsule/cylinder on a mesh face: its single-shot multicontact)
# clipped contacts where flat features meet; not implemented for meshes. Measured with
# 100 random poses of the scenes below, the poses where 4.0 gives several contacts (and we
# one) were: capsule-blob 22 of 95 touching, capsule-wedge 13/95, cylinder-blob 25/100,
# cylinder-wedge 12/95, box-blob 50/95, box-wedge 27/91, blob-blob 49/96, blob-wedge 34/87,
# wedge-wedge 26/78. Everywhere else the contact matches (test_single_contact_poses).
_MULTI = ("MuJoCo 4.0's multicontact on mesh faces (box-mesh, mesh-mesh, capsule/cylinder-mesh) "
          "is not implemented: in 13-52% of the random poses it gives 2-4 contacts, we give "
          "its first GJK/EPA contact's place only")
_MULTI_PAIRS = {"capsule", "cylinder", "box", "blob", "wedge"}
PAIRS = [("sphere", "blob"), ("sphere", "wedge"),
         ("capsule", "blob"), ("capsule", "wedge"), ("ellipsoid", "blob"),
         ("cylinder", "blob"), ("cylinder", "wedge"), ("box", "blob"), ("box", "wedge"),
         ("blob", "blob"), ("blob", "wedge"), ("wedge", "wedge")]


def _scene(a, b):
  first = (f'<geom name="a" {_SHAPES[a]}/>' if a == "plane" else
           f'<body name="A" pos="0 0 .3"><freejoint/><geom name="a" {_SHAPES[a]}/></body>'
           '<geom type="plane" size="3 3 .1" contype="2" conaffinity="2"/>')
  return f"""<mujoco><option timestep="0.005"/>{_ASSETS}<worldbody>{first}
    <body name="B" pos="0.03 0.02 0.55" euler="20 30 40"><freejoint/>
      <geom name="b" {_SHAPES[b]} margin=".003"/></body></worldbody></mujoco>"""


def _run(a, b, ntrial=40, seed=0, lenient=False):
  """Compare contacts in `ntrial` random poses; with `lenient`, return (trials that match
  fully, trials whose first contact matches, trials with contacts, trials where MuJoCo gives
  one contact, those of them we match fully) instead of asserting."""
  xml = _scene(a, b)
  m, mjm = engine.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  rng = np.random.default_rng(seed + len(a) * 7 + len(b))
  mjd = mujoco.MjData(mjm)
  d = engine.make_data(m)
  total = 0
  full = first = touching = single = single_ok = 0
  for trial in range(ntrial):
    mujoco.mj_resetData(mjm, mjd)
    if a != "plane":
      mjd.qpos[3:7] = rng.normal(size=4)
      mjd.qpos[0:3] = [0, 0, 0.3]
      mjd.qpos[7:10] = [0, 0, 0.3] + rng.uniform(-0.12, 0.12, 3)
      mjd.qpos[10:14] = rng.normal(size=4)
    else:
      mjd.qpos[0:3] = [0, 0, rng.uniform(-0.02, 0.12)]
      mjd.qpos[3:7] = rng.normal(size=4)
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_forward(mjm, mjd)
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


@pytest.mark.parametrize("a,b", [
    pytest.param(a, b, id=f"{a}-{b}", marks=pytest.mark.xfail(reason=_MULTI))
    if a in _MULTI_PAIRS else pytest.param(a, b, id=f"{a}-{b}") for a, b in PAIRS])
def test_mesh_pair(a, b):
  """Each pair type with a mesh, 40 random poses near touching."""
  assert _run(a, b) >= 5, "too few contacts: the scene misses the pair"


@pytest.mark.parametrize("mesh", ["blob", "wedge"])
def test_plane_mesh(mesh):
  """Plane-mesh in 200 random poses: the deepest-vertex contact always equals MuJoCo 4.0's,
  and the whole contact list (count, order, dist, pos, frame) in at least 85% of the poses.
  4.0 rewrote this collider after our reference source; engine/collision_convex.py's
  plane_mesh documents the rule we inferred (it matched 557 of 600 poses when written)."""
  full, first, touching, _, _ = _run("plane", mesh, ntrial=200, lenient=True)
  assert touching >= 100, "too few contacts: the scene misses the pair"
  assert first == touching
  assert full >= 0.85 * touching, f"{full} of {touching} poses match fully"


@pytest.mark.parametrize("a,b", [pytest.param(a, b, id=f"{a}-{b}") for a, b in PAIRS
                                 if a in _MULTI_PAIRS])
def test_single_contact_poses(a, b):
  """Pairs where 4.0 may use multicontact: in every pose where MuJoCo gives one contact, our
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
  geom pairs collide; every plane-mesh pair's first (deepest) contact equals MuJoCo's (dist,
  pos, frame within 1e-6) and at least 90% of them match in full. Mesh-mesh pairs here are
  all multicontact in 4.0 (3-4 contacts; we give one), so only their presence is compared.
  Measured when written: 296 of 304 plane-mesh pairs matched in full; 4.0 gave 4 contacts in
  3 of them (we give at most 3)."""
  from engine import interop
  from engine.forward import fwd_position
  xml = _pile_xml()
  m, mjm = engine.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  d = engine.make_data(m)
  nplane = full = meshmesh = 0
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
        continue
      nplane += 1
      if not close(rows[0], mine[0]):
        bad.append((step, pair))
      full += len(rows) == len(mine) and all(close(a, b) for a, b in zip(rows, mine))
  assert nplane >= 100 and meshmesh >= 5, (nplane, meshmesh)
  assert not bad, f"first plane-mesh contact differs in {len(bad)} of {nplane}: {bad[:5]}"
  assert full >= 0.9 * nplane, f"only {full} of {nplane} plane-mesh pairs match in full"


def test_sphere_mesh_comes_to_rest():
  """Stepping our engine: MuJoCo's sphere.obj (radius 0.1) dropped on the plane settles on it
  (no vertical motion left, may still roll slowly), its centre 0.1 above the plane within
  2 mm, as MuJoCo's does."""
  xml = f"""<mujoco><compiler meshdir="{_ASSET_DIR}"/><option timestep="0.002"/>
    <asset><mesh name="sphere" file="sphere.obj" scale=".1 .1 .1"/></asset>
    <worldbody><geom type="plane" size="2 2 .1"/><body pos="0 0 .3" euler="10 20 30">
    <freejoint/><geom type="mesh" mesh="sphere"/></body></worldbody></mujoco>"""
  m, mjm = engine.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  d, mjd = engine.make_data(m), mujoco.MjData(mjm)
  engine.step(m, d, 1000)
  mujoco.mj_step(mjm, mjd, 1000)
  assert abs(mjd.qpos[2] - 0.1) < 2e-3
  assert abs(d.qpos[2] - 0.1) < 2e-3, d.qpos[:3]
  assert abs(d.qvel[2]) < 0.01 and abs(mjd.qvel[2]) < 0.01   # resting (it may still roll)
