"""Hull graphs in Qhull's own orders (engine/mjcf/_qhull.py), as MuJoCo's mjCMesh::MakeGraph
writes them: vertices in qh.vertex_list order, edges in neighbour-facet order, faces in
qh.facet_list order. The orders decide which of several equally extreme vertices the graph
walks (mesh_extrema, the plane-mesh and support hill climbs) keep."""
import glob
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import numjoco
from numjoco.engine.mjcf import _qhull
from numjoco.engine.mjcf import compile_model

HULL_FIELDS = ("mesh_graphadr", "mesh_graph", "mesh_extrema", "mesh_face", "mesh_polynum",
               "mesh_polyadr", "mesh_polyvertadr", "mesh_polyvertnum", "mesh_polyvert",
               "mesh_polymapadr", "mesh_polymapnum", "mesh_polymap")
FETCH = os.path.join(os.path.dirname(__file__), "assets", "fetch")


def _assert_hulls(xml, path=None):
  """Our compiled hull fields equal MuJoCo's exactly."""
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _, A, _ = compile_model(path or xml)
  m = mujoco.MjModel.from_xml_path(path) if path else mujoco.MjModel.from_xml_string(xml)
  assert A["mesh_graph"].size == m.nmeshgraph
  for k in HULL_FIELDS:
    np.testing.assert_array_equal(np.asarray(A[k]).ravel(), np.asarray(getattr(m, k)).ravel(),
                                  err_msg=k)
  return m


def _cloud(kind, rng):
  if kind == "gauss":
    return rng.standard_normal((rng.integers(8, 300), 3))
  if kind == "grid":   # many coplanar and collinear points: Qhull merges, then triangulates
    a = np.arange(4.0)
    return np.stack(np.meshgrid(a, a, a), -1).reshape(-1, 3) * rng.uniform(0.5, 2, 3)
  if kind == "rounded":   # points on a coarse lattice: flat faces with points inside them
    return np.unique(np.round(rng.standard_normal((200, 3)) * 2) / 2, axis=0)
  if kind == "shell":   # all points on the hull
    p = rng.standard_normal((150, 3))
    return p / np.linalg.norm(p, axis=1, keepdims=True) * [1.0, 0.6, 0.3]
  raise ValueError(kind)


def test_qhull_library_loads():
  """cmeel-qhull's libqhull_r (a dependency) loads here, so the graphs below are Qhull's."""
  assert _qhull.available()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["gauss", "grid", "rounded", "shell"])
def test_hull_graph_as_mujoco(kind, seed):
  """Vertex-only meshes (faces from the hull) with and without maxhullvert, one mirrored:
  mesh_graph, mesh_extrema, faces and polygons equal MuJoCo's to the element."""
  rng = np.random.default_rng(seed)
  v = _cloud(kind, rng).astype(np.float32)
  blob = " ".join(repr(float(x)) for x in v.ravel())
  assets = (f'<mesh name="a" vertex="{blob}"/>'
            f'<mesh name="b" vertex="{blob}" maxhullvert="{[4, 7, 12, 40][seed]}"/>'
            f'<mesh name="c" vertex="{blob}" scale="-1 1 2"/>')
  geoms = "".join(f'<body pos="{i} 0 0"><freejoint/><geom type="mesh" mesh="{n}"/></body>'
                  for i, n in enumerate("abc"))
  _assert_hulls(f"<mujoco><asset>{assets}</asset><worldbody>{geoms}</worldbody></mujoco>")


def _mesh_files():
  dm = pytest.importorskip("dm_control")
  root = os.path.dirname(dm.__file__)
  files = sorted(glob.glob(os.path.join(root, "**", "*.stl"), recursive=True)
                 + glob.glob(os.path.join(root, "**", "*.obj"), recursive=True))
  return [f for f in files if "test_assets" not in f]


def test_hull_graphs_of_dm_control_meshes(tmp_path):
  """Every STL and OBJ mesh dm_control ships (its walkers, the dog, the Kinova arm): hull
  fields equal MuJoCo's."""
  files = _mesh_files()
  assert len(files) > 150
  for start in range(0, len(files), 40):
    chunk = files[start:start + 40]
    assets = "".join(f'<mesh name="m{i}" file="{f}"/>' for i, f in enumerate(chunk))
    geoms = "".join(f'<geom type="mesh" mesh="m{i}"/>' for i in range(len(chunk)))
    path = tmp_path / f"meshes{start}.xml"
    path.write_text(f"<mujoco><asset>{assets}</asset><worldbody><body><freejoint/>{geoms}"
                    f"</body></worldbody></mujoco>")
    try:
      _assert_hulls(None, str(path))
    except AssertionError as e:
      raise AssertionError(f"meshes {chunk[0]} .. {chunk[-1]}: {e}") from None


_QUATS = ["1 0 0 0", "0 1 0 0", "0.7071067811865476 0.7071067811865476 0 0",
          "0.7071067811865476 -0.7071067811865476 0 0", "0.7071067811865476 0 0.7071067811865476 0",
          "0.7071067811865476 0 -0.7071067811865476 0"]


def test_fetch_torso_lying_flat(tmp_path):
  """Fetch's torso lying on each of its flat sides, touching and deep in the plane: every
  vertex of the face is equally deep, and the hull order decides the deepest vertex. Upright,
  MuJoCo's hill climb ends on a vertex inside the bottom face (no polygon: one contact);
  contacts equal MuJoCo's."""
  path = tmp_path / "fetch.xml"
  path.write_text(f"""<mujoco><compiler meshdir="{FETCH}"/>
    <asset><mesh name="torso" file="torso_fixed_link.stl"/></asset><worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body><freejoint/><geom type="mesh" mesh="torso"/></body></worldbody></mujoco>""")
  mjm = _assert_hulls(None, str(path))
  mjd = mujoco.MjData(mjm)
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  seen = set()
  for q in _QUATS:
    for z in (0.0, 0.05, 0.2):
      qpos = np.r_[0.0, 0.0, z, [float(x) for x in q.split()]]
      mjd.qpos[:] = d.qpos[:] = qpos
      mujoco.mj_forward(mjm, mjd)
      numjoco.forward(m, d)
      assert d.ncon == mjd.ncon, f"quat {q} z {z}: {d.ncon} contacts, MuJoCo {mjd.ncon}"
      order = np.lexsort(mjd.contact.pos.T)
      ours = np.lexsort(d.contact_pos[:d.ncon].T)
      np.testing.assert_allclose(d.contact_dist[:d.ncon][ours], mjd.contact.dist[order],
                                 rtol=0, atol=1e-12)
      np.testing.assert_allclose(d.contact_pos[:d.ncon][ours], mjd.contact.pos[order],
                                 rtol=0, atol=1e-12)
      seen.add(mjd.ncon)
  assert {1, 4} <= seen   # the one-contact tie and four-contact faces both occur
