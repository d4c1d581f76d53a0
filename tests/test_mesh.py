"""Mesh assets (engine/mjcf/_mesh.py): loading STL/OBJ/inline meshes and MuJoCo's mesh compile
(dedup, principal frame, volume/shell/convex inertia, hull graph), compared with `mujoco`."""
import os
import struct

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import compile_model
from numjoco.engine.mjcf._node import MjcfError

FIELDS = ["mesh_vertadr", "mesh_vertnum", "mesh_faceadr", "mesh_facenum", "mesh_graphadr",
          "mesh_vert", "mesh_pos", "mesh_scale", "geom_size", "geom_rbound", "geom_aabb",
          "geom_pos", "geom_dataid", "body_mass", "body_inertia", "body_ipos"]
QUATS = ["mesh_quat", "geom_quat", "body_iquat"]


def _box():
  v = np.array([[x, y, z] for x in (0, 2) for y in (0, 1) for z in (0, .5)], float)
  f = [[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4], [2, 6, 3], [3, 6, 7],
       [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5]]
  return v, np.array(f)[:, [0, 2, 1]]   # outward


def _tetra():
  # distinct principal moments: with repeated ones the principal frame is arbitrary
  return np.array([[0, 0, 0], [1, 0, 0], [0, 1.7, 0], [0, 0, 0.6]], float), np.array(
      [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _icosphere():
  t = (1 + 5 ** 0.5) / 2
  v = np.array([[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t],
                [0, -1, -t], [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]], float)
  f = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
       [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
       [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]]
  v = v / np.linalg.norm(v, axis=1, keepdims=True) * [0.3, 0.25, 0.2]   # distinct moments
  return v + [0.1, 0.2, 0.0], np.array(f)


def _lshape():
  """A non-convex L prism (extruded L polygon), outward faces."""
  poly = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], float)
  n = len(poly)
  v = np.concatenate([np.c_[poly, np.zeros(n)], np.c_[poly, np.full(n, 0.5)]])
  f = []
  for i in range(n):   # sides
    j = (i + 1) % n
    f += [[i, j, n + j], [i, n + j, n + i]]
  for tri in ([0, 1, 2], [0, 2, 3], [0, 3, 5], [3, 4, 5]):   # caps
    f.append([tri[0], tri[2], tri[1]])
    f.append([n + tri[0], n + tri[1], n + tri[2]])
  return v, np.array(f)


def write_stl_binary(path, v, f):
  with open(path, "wb") as fh:
    fh.write(b"\0" * 80 + struct.pack("<I", len(f)))
    for tri in f:
      fh.write(struct.pack("<3f", 0, 0, 0))
      for i in tri:
        fh.write(struct.pack("<3f", *v[i]))
      fh.write(b"\0\0")


def write_stl_ascii(path, v, f):
  with open(path, "w") as fh:
    fh.write("solid test\n")
    for tri in f:
      fh.write(" facet normal 0 0 0\n  outer loop\n")
      for i in tri:
        fh.write("   vertex %.9g %.9g %.9g\n" % tuple(v[i]))
      fh.write("  endloop\n endfacet\n")
    fh.write("endsolid test\n")


def write_obj(path, v, f, quads=False):
  with open(path, "w") as fh:
    fh.write("# test\n")
    for p in v:
      fh.write("v %.9g %.9g %.9g\n" % tuple(p))
    fh.write("vn 0 0 1\n")
    for tri in f:
      fh.write("f " + " ".join(f"{i + 1}//1" for i in tri) + "\n")


def _inline(name, v, f, extra=""):
  return (f'<mesh name="{name}" vertex="{" ".join(map(str, v.ravel()))}" '
          f'face="{" ".join(map(str, f.ravel()))}" {extra}/>')


def _model(assets, geoms, compiler=""):
  bodies = "".join(
      f'<body pos="{i} 0 1"><freejoint/><geom type="mesh" mesh="{g}" {a}/></body>'
      for i, (g, a) in enumerate(geoms))
  return (f'<mujoco>{compiler}<asset>{assets}</asset><worldbody>'
          f'<geom type="plane" size="5 5 .1"/>{bodies}</worldbody></mujoco>')


def compare(xml, assets=None, tol=1e-12, qtol=1e-12, path=None):
  """Compile with both engines and compare the mesh-derived fields; faces, the hull graph
  (Qhull's vertex, edge and face orders) and mesh_extrema exactly."""
  sizes, A, _ = compile_model(path or xml, assets)
  m = (mujoco.MjModel.from_xml_path(path) if path
       else mujoco.MjModel.from_xml_string(xml, assets or {}))
  for k in ("nmesh", "nmeshvert", "nmeshface", "nmeshgraph"):
    assert sizes[k] == getattr(m, k), k
  for k in FIELDS:
    np.testing.assert_allclose(A[k], getattr(m, k), rtol=tol, atol=tol, err_msg=k)
  for k in QUATS:   # a quaternion and its negative are the same rotation
    a, b = A[k], getattr(m, k)
    sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1, 1)
    np.testing.assert_allclose(a * sign, b, rtol=qtol, atol=qtol, err_msg=k)
  for k in ("mesh_face", "mesh_graph", "mesh_extrema"):
    np.testing.assert_array_equal(A[k], getattr(m, k), err_msg=k)
  return sizes, A, m


@pytest.mark.parametrize("shape", ["box", "tetra", "icosphere", "lshape"])
@pytest.mark.parametrize("inertia", ["legacy", "exact", "convex", "shell"])
def test_inline_meshes(shape, inertia):
  """Inline vertex/face meshes of four shapes and every inertia mode match MuJoCo."""
  v, f = {"box": _box, "tetra": _tetra, "icosphere": _icosphere, "lshape": _lshape}[shape]()
  xml = _model(_inline("m", v + [0.3, -0.2, 0.1], f, f'inertia="{inertia}"'),
               [("m", ""), ("m", 'pos=".1 .2 .3" euler="10 20 30" density="300"')])
  compare(xml)


def test_scale_refpos_refquat_and_defaults():
  """scale (incl. mirrored), refpos, refquat and the mesh default class match MuJoCo."""
  v, f = _lshape()
  assets = (_inline("a", v, f, 'refpos="1 .5 .2" refquat="1 .3 .2 .1" scale="1 2 .5"')
            + _inline("b", v, f, 'class="big" scale="-1 1 1"'))
  xml = _model(assets, [("a", 'mass="3"'), ("b", "")]).replace(
      "<asset>", '<default><default class="big"><mesh scale="2 2 2"/></default></default>'
      '<asset>')
  compare(xml)


def test_vertex_only_mesh_uses_hull():
  """A mesh without faces takes the hull's triangles; inline repeated vertices are kept."""
  v, _ = _icosphere()
  v = np.concatenate([v, v[:3], [[0.1, 0.2, 0.0]]])   # repeats and an interior point
  xml = _model(f'<mesh name="p" vertex="{" ".join(map(str, v.ravel()))}"/>', [("p", "")])
  sizes, _, _ = compare(xml)
  assert sizes["nmeshvert"] == 16   # inline vertices are kept as given


def _file_model(tmp_path, fmt):
  v, f = _lshape()
  d = tmp_path / "meshes"
  d.mkdir()
  name = "shape." + ("obj" if fmt == "obj" else "stl")
  {"stl": write_stl_binary, "stl_ascii": write_stl_ascii, "obj": write_obj}[fmt](
      str(d / name), v, f)
  xml = _model(f'<mesh file="{name}" scale=".5 .5 .5"/>', [("shape", "")],
               compiler='<compiler meshdir="meshes"/>')
  path = tmp_path / "model.xml"
  path.write_text(xml)
  return str(path)


@pytest.mark.parametrize("fmt", ["stl", "obj"])
def test_mesh_files(tmp_path, fmt):
  """Binary STL and OBJ files under meshdir, named after the file, match MuJoCo."""
  compare(None, path=_file_model(tmp_path, fmt))


def test_ascii_stl(tmp_path):
  """An ASCII STL compiles as the same binary STL does (MuJoCo 4.0 itself rejects ASCII STL)."""
  _, a, _ = compile_model(_file_model(tmp_path / "a", "stl_ascii") if (tmp_path / "a").mkdir()
                          is None else None)
  _, b, m = compare(None, path=_file_model(tmp_path / "b", "stl") if (tmp_path / "b").mkdir()
                    is None else None)
  for k in FIELDS + QUATS:
    np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_maxhullvert():
  """maxhullvert limits the hull as MuJoCo's qhull call does."""
  v, f = _icosphere()
  compare(_model(_inline("m", v, f, 'maxhullvert="6"'), [("m", "")]))


def test_unused_vertex_only_mesh_keeps_its_hull():
  """A mesh given without faces gets the hull graph even when no geom collides with it."""
  v, _ = _icosphere()
  xml = _model(f'<mesh name="p" vertex="{" ".join(map(str, v.ravel()))}"/>',
               [("p", 'contype="0" conaffinity="0"')])
  sizes, A, m = compare(xml)
  assert A["mesh_graphadr"][0] == 0


def test_visual_only_mesh_has_no_graph():
  """A mesh only used by non-colliding geoms gets no hull graph (mesh_graphadr -1)."""
  v, f = _box()
  xml = _model(_inline("m", v, f), [("m", 'contype="0" conaffinity="0"')])
  sizes, A, m = compare(xml)
  assert A["mesh_graphadr"][0] == -1 and sizes["nmeshgraph"] == 0


@pytest.mark.parametrize("name", ["jaco_arm", "jaco_hand"])
def test_jaco(name):
  """dm_control's jaco arm and hand (STL meshes): mesh, geom and body fields match MuJoCo."""
  dm = pytest.importorskip("dm_control")
  path = os.path.join(os.path.dirname(dm.__file__), f"third_party/kinova/{name}.xml")
  compare(None, path=path)


def test_small_mesh_principal_axes():
  """Principal axes of mm-sized meshes converge as MuJoCo's (eig3's absolute tolerance would
  stop early on their tiny inertia)."""
  v, f = _box()
  for s in (1, 0.01, 0.003):
    compare(_model(_inline("m", v, f, f'refquat="1 .2 .3 .1" scale="{s} {s} {s}"'), [("m", "")]))


@pytest.mark.parametrize("asset,msg", [
    ('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0"/>', "at least 4 vertices"),
    ('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 1 1 0"/>', "coplanar"),
    ('<mesh file="missing.stl"/>', "not found"),
    ('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 1 2 0 1 3 0 2 3 1 2 3" '
     'inertia="exact"/>', "orientation"),
])
def test_mesh_errors(asset, msg):
  """Bad meshes give an error naming the element and line."""
  name = "missing" if "missing" in asset else "m"
  xml = _model(asset, [(name, "")])
  with pytest.raises(MjcfError, match=msg) as e:
    compile_model(xml)
  assert "<mesh" in str(e.value) and ":1:" in str(e.value)


def test_bad_stl(tmp_path):
  """A truncated STL file is a load error naming the file."""
  (tmp_path / "bad.stl").write_bytes(b"\0" * 80 + struct.pack("<I", 5) + b"\0" * 10)
  (tmp_path / "m.xml").write_text(_model('<mesh file="bad.stl"/>', [("bad", "")]))
  with pytest.raises(MjcfError, match="bad.stl"):
    compile_model(str(tmp_path / "m.xml"))


def test_mesh_material_is_the_geom_default():
  """A mesh geom without a material takes its mesh's material, as in MuJoCo."""
  v, f = _tetra()
  xml = _model(_inline("m", v, f, 'material="red"'), [("m", ""), ("m", 'material="blue"')])
  xml = xml.replace("<asset>", '<asset><material name="blue" rgba="0 0 1 1"/>'
                    '<material name="red" rgba="1 0 0 1"/>')
  _, A, m = compare(xml)
  np.testing.assert_array_equal(A["geom_matid"], m.geom_matid)
