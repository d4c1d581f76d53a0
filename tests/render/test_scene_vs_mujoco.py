"""The numpy scene builder (render/scene.py) puts into its Scene what MuJoCo's mjv_updateScene
puts into an mjvScene for the same model and state: the model's geoms and sites (position,
rotation, size, rgba) and, with mjVIS_CONTACTPOINT and mjFRAME_CONTACT on, a cylinder per
contact point and three per contact frame. No GL: the scene is compared, not the picture."""
import numpy as np
import pytest

import numjoco
from numjoco.render.scene import CAPSULE, CYLINDER, QUAD, SceneBuilder, VisOptions
from numjoco.render.snapshot import Snapshot
from tests.models import models_and_data

mujoco = pytest.importorskip("mujoco")

# one geom of each primitive type, tilted and touching the floor or each other; materials,
# a transparent geom, sites of each type; finite floor (an infinite one follows the camera)
XML = """<mujoco>
<asset><material name="blue" rgba="0.2 0.3 0.9 1" specular="0.3"/></asset>
<worldbody>
  <geom type="plane" size="3 3 0.1" rgba="0.8 0.8 0.8 1"/>
  <body pos="0 0 0.095" euler="0 0 20"><freejoint/>
    <geom type="box" size="0.1 0.2 0.1" rgba="1 0 0 1"/>
    <site type="box" size="0.02 0.03 0.04" pos="0 0 0.12" rgba="0 1 0 1"/>
  </body>
  <body pos="0.6 0 0.08" euler="90 10 0"><freejoint/>
    <geom type="capsule" size="0.08 0.2" material="blue"/>
    <site type="capsule" size="0.02 0.05" pos="0.1 0 0"/>
  </body>
  <body pos="-0.6 0.1 0.09" euler="5 80 0"><freejoint/>
    <geom type="cylinder" size="0.1 0.15" rgba="0.9 0.9 0.1 0.5"/>
    <site type="cylinder" size="0.03 0.02" pos="0 0.1 0"/>
  </body>
  <body pos="0 0.7 0.098" euler="30 0 45"><freejoint/>
    <geom type="ellipsoid" size="0.1 0.15 0.2"/>
    <site type="ellipsoid" size="0.02 0.03 0.04" pos="0 0 0.1"/>
  </body>
  <body pos="0 -0.7 0.098"><freejoint/>
    <geom type="sphere" size="0.1" material="blue" rgba="0.1 0.8 0.4 1"/>
    <site type="sphere" size="0.03" pos="0.1 0 0" rgba="1 1 1 0.5"/>
  </body>
</worldbody></mujoco>"""


def _mujoco_scene(mjm, mjd):
  """MuJoCo's scene geoms as arrays: type, objtype, objid, category, pos, mat (n, 9), size,
  rgba."""
  opt = mujoco.MjvOption()
  opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = 1
  opt.frame = mujoco.mjtFrame.mjFRAME_CONTACT
  scn = mujoco.MjvScene(mjm, 1000)
  mujoco.mjv_updateScene(mjm, mjd, opt, None, mujoco.MjvCamera(), mujoco.mjtCatBit.mjCAT_ALL,
                         scn)
  g = [scn.geoms[i] for i in range(scn.ngeom)]
  return {"type": np.array([x.type for x in g]), "objtype": np.array([x.objtype for x in g]),
          "objid": np.array([x.objid for x in g]), "category": np.array([x.category for x in g]),
          "pos": np.array([x.pos for x in g], float),
          "mat": np.array([np.asarray(x.mat).ravel() for x in g], float),
          "size": np.array([x.size for x in g], float), "rgba": np.array([x.rgba for x in g])}


def _our_scene(m, d):
  """Our Scene of the same state: contact points and contact frames on."""
  opts = VisOptions(contact_points=True, contact_frames=True)
  return SceneBuilder(m).build(Snapshot(m, d), opts, np.array([0.0, -3.0, 2.0]),
                               np.array([0.0, 0.8, -0.6]))


def _rows(parts, kinds=None):
  """Instance rows of the per-kind arrays `parts` with their kind: (rows (n, 28), kinds (n,))."""
  sel = [(k, a) for k, a in enumerate(parts) if len(a) and (kinds is None or k in kinds)]
  return (np.concatenate([a for _, a in sel]).astype(float),
          np.concatenate([np.full(len(a), k) for k, a in sel]))


def _size3(row, kind):
  """Our instance size as mjvGeom.size: a capsule's (radius, radius, half-length), a plane's
  (half-sizes, grid spacing)."""
  s = row[12:16]
  return np.array([s[0], s[1], s[3]]) if kind in (CAPSULE, QUAD) else s[:3]


def _match(ref, rows, kinds, axis_only=False, atol=1e-5):
  """Each MuJoCo geom of `ref` is one of ours at the same place: its rotation (only the z
  axis with `axis_only`: a cylinder turned about its axis looks the same), size and rgba."""
  assert len(rows) == len(ref["pos"])
  used = set()
  for i in range(len(ref["pos"])):
    d = np.linalg.norm(rows[:, 0:3] - ref["pos"][i], axis=1)
    d[list(used)] = np.inf
    j = int(np.argmin(d))
    used.add(j)
    where = f"MuJoCo's scene geom {i} (type {ref['type'][i]}, object {ref['objid'][i]})"
    np.testing.assert_allclose(rows[j, 0:3], ref["pos"][i], atol=atol, err_msg=where)
    R, Rm = rows[j, 3:12].reshape(3, 3), ref["mat"][i].reshape(3, 3)
    if axis_only:
      np.testing.assert_allclose(R[:, 2], Rm[:, 2], atol=atol, err_msg=where)
    else:
      np.testing.assert_allclose(R, Rm, atol=atol, err_msg=where)
    np.testing.assert_allclose(_size3(rows[j], kinds[j]), ref["size"][i], atol=atol,
                               err_msg=where)
    np.testing.assert_allclose(rows[j, 16:20], ref["rgba"][i], atol=1e-6, err_msg=where)


@pytest.fixture(scope="module")
def scenes():
  m, d, mjm, mjd = models_and_data(XML)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.ncon >= 8 and d.ncon == mjd.ncon, "the geoms touch the floor or each other"
  return _mujoco_scene(mjm, mjd), _our_scene(m, d)


def _select(ref, mask):
  return {k: v[mask] for k, v in ref.items()}


def test_geoms_are_mujocos(scenes):
  ref, ours = scenes
  rows, kinds = _rows([np.concatenate([a, b]) for a, b in zip(ours.geoms, ours.tgeoms)])
  _match(_select(ref, ref["objtype"] == mujoco.mjtObj.mjOBJ_GEOM), rows, kinds)


def test_sites_are_mujocos(scenes):
  ref, ours = scenes
  decor, kinds = _rows([np.concatenate([a, b]) for a, b in zip(ours.decor, ours.tdecor)])
  sites = _select(ref, ref["objtype"] == mujoco.mjtObj.mjOBJ_SITE)
  assert len(sites["pos"]) == 5
  # our decorations: the sites and the contacts' cylinders; the sites are those not cylinders
  # at a contact (a cylinder site is matched among all)
  contacts = ref["category"] == mujoco.mjtCatBit.mjCAT_DECOR
  contacts &= ref["objtype"] == mujoco.mjtObj.mjOBJ_UNKNOWN
  cpos = ref["pos"][contacts]
  near = np.min(np.linalg.norm(decor[:, None, 0:3] - cpos[None], axis=2), 1) < 1e-5
  _match(sites, decor[~near], kinds[~near])


def test_contact_points_and_frames_are_mujocos(scenes):
  ref, ours = scenes
  contacts = ((ref["category"] == mujoco.mjtCatBit.mjCAT_DECOR)
              & (ref["objtype"] == mujoco.mjtObj.mjOBJ_UNKNOWN))
  ref = _select(ref, contacts)
  assert (ref["type"] == mujoco.mjtGeom.mjGEOM_CYLINDER).all() and len(ref["pos"]) >= 32
  rows, kinds = _rows(ours.decor, kinds=(CYLINDER,))
  site_cyl = np.isclose(rows[:, 12], 0.03)          # the cylinder site (radius 0.03)
  _match(ref, rows[~site_cyl], kinds[~site_cyl], axis_only=True)


def test_the_comparison_catches_a_wrong_transform(scenes):
  """A rotation transposed, or a position moved by a millimetre, fails the comparison."""
  ref, ours = scenes
  rows, kinds = _rows([np.concatenate([a, b]) for a, b in zip(ours.geoms, ours.tgeoms)])
  ref = _select(ref, ref["objtype"] == mujoco.mjtObj.mjOBJ_GEOM)
  bad = rows.copy()
  bad[:, 3:12] = bad[:, 3:12].reshape(-1, 3, 3).transpose(0, 2, 1).reshape(-1, 9)
  with pytest.raises(AssertionError):
    _match(ref, bad, kinds)
  bad = rows.copy()
  bad[:, 0] += 1e-3
  with pytest.raises(AssertionError):
    _match(ref, bad, kinds)
