"""MuJoCo's libccd convex collider (`<flag nativeccd="disable"/>`, engine/collision/libccd.py)
against MuJoCo's mj_collision: every general convex pair (primitives, a 14-vertex mesh
searched by hill-climbing and a 6-vertex one searched exhaustively), in random poses, with
and without margin and multiccd; contact by contact (same pairs and order, dist, pos, frame
within 1e-6) through our collision driver.

The driver gets MuJoCo's own geom poses: MPR's result is not continuous in the poses (the
portal it stops at depends on the path, so MuJoCo's own contact depth moves by 1e-5 in some
poses when qpos moves by 1e-15), so only identical inputs give comparable contacts. With
them ours equal MuJoCo's to 1e-14.
"""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.collision.driver import collision
from tests.models import models_of, terrain_pose
from tests.test_mesh_collision import _ASSETS, _SHAPES

_FLAG = '<flag nativeccd="disable"/>'
_NOMULTI = '<flag nativeccd="disable" multiccd="disable"/>'
PAIRS = [("sphere", "ellipsoid"), ("sphere", "blob"), ("sphere", "wedge"),
         ("capsule", "ellipsoid"), ("capsule", "cylinder"), ("capsule", "blob"),
         ("capsule", "wedge"), ("ellipsoid", "ellipsoid"), ("ellipsoid", "cylinder"),
         ("ellipsoid", "box"), ("ellipsoid", "blob"), ("cylinder", "cylinder"),
         ("cylinder", "box"), ("cylinder", "blob"), ("cylinder", "wedge"), ("box", "blob"),
         ("box", "wedge"), ("blob", "blob"), ("blob", "wedge"), ("wedge", "wedge")]


def _scene(a, b, margin, flags):
  """Geoms a and b on free bodies (b with the margin), and a floor only a collides with."""
  first = ('<geom name="a" ' + _SHAPES[a] + '/>' if a == "plane" else
           f'<body name="A" pos="0 0 .3"><freejoint/><geom name="a" {_SHAPES[a]}/></body>')
  return f"""<mujoco><option>{flags}</option>{_ASSETS}<worldbody>{first}
    <body name="B" pos="0.03 0.02 0.55" euler="20 30 40"><freejoint/>
      <geom name="b" {_SHAPES[b]} margin="{margin}"/></body></worldbody></mujoco>"""


def _compare(m, d, mjm, mjd, where):
  """Our collision stage on MuJoCo's geom poses: the contact list equals MuJoCo's."""
  d.geom_xpos[:] = mjd.geom_xpos
  d.geom_xmat[:] = mjd.geom_xmat
  collision(m.struct, d.struct)
  n = mjd.ncon
  c = mjd.contact
  assert d.ncon == n, f"{where}: {d.ncon} contacts, MuJoCo {n}"
  np.testing.assert_array_equal(d.contact_geom1[:n], c.geom1, err_msg=where)
  np.testing.assert_array_equal(d.contact_geom2[:n], c.geom2, err_msg=where)
  for name in ("dist", "pos", "frame", "includemargin"):
    ours = getattr(d, "contact_" + name)[:n]
    np.testing.assert_allclose(ours, np.asarray(getattr(c, name)).reshape(ours.shape), rtol=0,
                               atol=1e-6, err_msg=f"{where}: contact {name}")


def _run(a, b, margin=0.0, flags=_FLAG, ntrial=40, seed=0):
  """Compare the contact lists in `ntrial` random poses (asserting each); returns (poses
  with contacts, poses with several contacts)."""
  xml = _scene(a, b, margin, flags)
  m, mjm = models_of(xml)
  # our compiled mesh (the wedge's principal frame) equals MuJoCo's bit for bit: MPR's jumps
  # would turn a 1e-7 difference into 1e-6 contact errors
  np.testing.assert_array_equal(m.mesh_vert, mjm.mesh_vert)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(seed + 7 * len(a) + len(b))
  touching = multi = 0
  for trial in range(ntrial):
    mujoco.mj_resetData(mjm, mjd)
    if a == "plane":
      mjd.qpos[0:3] = [0, 0, rng.uniform(-0.02, 0.12)]
      mjd.qpos[3:7] = rng.normal(size=4)
    else:
      mjd.qpos[0:3] = [0, 0, 0.3]
      mjd.qpos[3:7] = rng.normal(size=4)
      mjd.qpos[7:10] = [0, 0, 0.3] + rng.uniform(-0.15, 0.15, 3)
      mjd.qpos[10:14] = rng.normal(size=4)
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_forward(mjm, mjd)
    _compare(m, d, mjm, mjd, f"trial {trial}")
    touching += mjd.ncon > 0
    multi += mjd.ncon > 1
  return touching, multi


@pytest.mark.parametrize("a,b", PAIRS, ids=lambda x: x)
def test_libccd_pair(a, b):
  """Each general convex pair, no margin: MPR's contact, the analytic normal fix and
  multiccd's perturbed contacts, equal to MuJoCo's in every pose."""
  touching, _ = _run(a, b)
  assert touching >= 15, "too few contacts: the scene misses the pair"


@pytest.mark.parametrize("a,b", [("capsule", "cylinder"), ("ellipsoid", "blob"),
                                 ("cylinder", "cylinder"), ("cylinder", "box"),
                                 ("box", "wedge"), ("blob", "blob")], ids=lambda x: x)
def test_libccd_margin(a, b):
  """With a margin the geoms' supports are pushed out by half of it and the contacts count
  from margin - depth: equal to MuJoCo's in every pose."""
  touching, _ = _run(a, b, margin=0.01)
  assert touching >= 20, "too few contacts: the scene misses the pair"


@pytest.mark.parametrize("a,b", [("cylinder", "cylinder"), ("cylinder", "box"),
                                 ("cylinder", "blob"), ("capsule", "blob")], ids=lambda x: x)
def test_libccd_multiccd(a, b):
  """Pairs where multiccd's turned geoms find further contacts (up to 5): counts and
  contacts equal MuJoCo's, and the scene has such poses."""
  touching, multi = _run(a, b, margin=0.005, ntrial=60)
  assert multi >= 5, "too few multi-contact poses: the test misses multiccd"


@pytest.mark.parametrize("a,b", [("cylinder", "cylinder"), ("box", "blob"),
                                 ("capsule", "wedge")], ids=lambda x: x)
def test_libccd_multiccd_disabled(a, b):
  """With multiccd disabled as well, one contact per pair, equal to MuJoCo's."""
  touching, multi = _run(a, b, flags=_NOMULTI)
  assert touching >= 15 and multi == 0


def test_plane_convex_unchanged():
  """Planes keep mjc_PlaneConvex with native CCD disabled (MuJoCo's table has no libccd
  plane collider): plane-ellipsoid equals MuJoCo's (plane-mesh: tests/test_mesh_collision)."""
  touching, _ = _run("plane", "ellipsoid", ntrial=60)
  assert touching >= 20


@pytest.mark.parametrize("shape,margin", [("sphere", "0"), ("capsule", "0"), ("cylinder", "0"),
                                          ("box", "0"), ("mesh", "0"), ("ellipsoid", "0.004"),
                                          ("box", "0.004"), ("mesh", "0.004")])
def test_libccd_hfield(shape, margin):
  """Height fields with native CCD disabled: MPR of each prism (MuJoCo's prism support and
  center) against the geom, both inflated by half the margin, normals fixed; the contact
  lists equal MuJoCo's in 40 random poses over a random terrain."""
  from tests.test_hfield import _scene as hfield_scene
  xml = hfield_scene(shape, f'margin="{margin}"').replace(
      '<option timestep="0.005"/>', f"<option>{_FLAG}</option>")
  m, mjm = models_of(xml)
  np.testing.assert_array_equal(m.mesh_vert, mjm.mesh_vert)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(len(shape))
  touching = 0
  for trial in range(40):
    terrain_pose(mjm, mjd, rng)
    _compare(m, d, mjm, mjd, f"{shape} trial {trial}")
    touching += mjd.ncon > 0
  assert touching >= 20, "too few poses touch the terrain"
