"""Meshes that come from MuJoCo's builtin generators (`<mesh builtin=... params=...>`) and
from legacy binary MSH files, compiled as MuJoCo 4.0 does."""
import struct

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import compile_model
from numjoco.engine.mjcf._node import MjcfError
from tests.test_mesh import _lshape
from tests.test_mesh_fit import _compare


# -------------------------------------------------------------------------- builtin meshes

BUILTINS = [("sphere", "0"), ("sphere", "1"), ("sphere", "3"), ("sphere", "1.7"),
            ("hemisphere", "0"), ("hemisphere", "3"), ("cone", "3 0"), ("cone", "5 0.5"),
            ("cone", "6 1"), ("supersphere", "4 1 1"), ("supersphere", "8 0.5 2"),
            ("supersphere", "7 2.5 0.3"), ("supertorus", "6 0.3 1 1"),
            ("supertorus", "9 0.5 0.4 2"), ("wedge", "3 4 60 30 0"),
            ("wedge", "5 3 170 80 0.6"), ("grid", "2 3 4 .1 .2 .3"),
            ("box", "2 3 4 .1 .2 .3"), ("box", "4 3 5 .1 .2 .3 2"),
            ("cylinder", "3 4 3 .1 .2 .3"), ("cylinder", "3 4 3 .1 .2 .3 2"),
            ("ellipsoid", "4 5 3 .1 .2 .3"), ("ellipsoid", "3 3 3 .1 .2 .3 2")]
FLAT = [("grid", "3 3 1 .1 .2 .3 2"), ("square", "3 4 1 .1 .2 .3"),
        ("disc", "3 8 1 .1 .2 .3"), ("disc", "4 9 1 .1 .2 .3"), ("plate", "3 4")]


def _builtin_model(asset, geom='type="mesh" mesh="m"'):
  return (f'<mujoco><asset>{asset}</asset><worldbody><body><freejoint/><geom {geom}/>'
          f'</body></worldbody></mujoco>')


@pytest.mark.parametrize("builtin,params", BUILTINS)
def test_builtin_mesh(builtin, params):
  """<mesh builtin=... params=...>: vertices, faces and the hull graph bit-equal to 4.0's,
  the frame and the body inertia, also scaled and fitted."""
  asset = (f'<mesh name="m" builtin="{builtin}" params="{params}"/>'
           f'<mesh name="s" builtin="{builtin}" params="{params}" scale="1 .6 .3" '
           f'refquat="1 .1 .2 .3" inertia="shell"/>')
  xml = _builtin_model(asset).replace(
      "</body>", '</body><body pos="3 0 0"><freejoint/><geom type="mesh" mesh="s"/>'
      '<geom type="capsule" mesh="s" pos=".2 0 0"/></body>')
  A, m = _compare(xml)
  np.testing.assert_array_equal(A["mesh_vert"], m.mesh_vert)
  np.testing.assert_array_equal(A["mesh_face"], m.mesh_face)
  np.testing.assert_array_equal(A["mesh_graph"], m.mesh_graph)
  np.testing.assert_array_equal(A["mesh_extrema"], m.mesh_extrema)


@pytest.mark.parametrize("builtin,params", FLAT)
@pytest.mark.parametrize("inertia", ["legacy", "exact"])
def test_builtin_flat_mesh(builtin, params, inertia):
  """Flat builtins (4.0's 2D grid, square and disc; the tactile plate) on a static geom that
  does not collide (no hull) and fitted: inertia 'legacy' becomes 'shell' (the plate's any;
  the others' 'exact' is rejected as too flat)."""
  xml = (f'<mujoco><asset><mesh name="m" builtin="{builtin}" params="{params}" '
         f'inertia="{inertia}"/></asset><worldbody><geom type="mesh" mesh="m" contype="0" '
         f'conaffinity="0"/><body><freejoint/><geom type="sphere" mesh="m"/></body>'
         f'</worldbody></mujoco>')
  try:
    mujoco.MjModel.from_xml_string(xml)
  except ValueError:   # an explicit 'exact' stays volumetric: too flat, in 4.0 as here
    assert inertia == "exact" and builtin != "plate"
    with pytest.raises(MjcfError, match="volume is too small"):
      compile_model(xml)
    return
  A, m = _compare(xml)
  np.testing.assert_array_equal(A["mesh_vert"], m.mesh_vert)
  np.testing.assert_array_equal(A["mesh_face"], m.mesh_face)


@pytest.mark.parametrize("asset,msg", [
    ('<mesh name="m" builtin="sphere"/>', "params"),
    ('<mesh name="m" builtin="sphere" params="1 2"/>', "1 parameter"),
    ('<mesh name="m" builtin="blob" params="1"/>', "invalid value 'blob'"),
    ('<mesh name="m" builtin="sphere" params="5"/>', r"\[0, 4\]"),
    ('<mesh name="m" builtin="hemisphere" params="11"/>', r"\[0, 10\]"),
    ('<mesh name="m" builtin="cone" params="2 0.5"/>', "3 edges"),
    ('<mesh name="m" builtin="cone" params="3 1.5"/>', "radius"),
    ('<mesh name="m" builtin="supersphere" params="2 1 1"/>', "resolution"),
    ('<mesh name="m" builtin="supersphere" params="4 -1 1"/>', "exponents"),
    ('<mesh name="m" builtin="supertorus" params="4 0 1 1"/>', "radius"),
    ('<mesh name="m" builtin="supertorus" params="4 .5 1 0"/>', "s, t"),
    ('<mesh name="m" builtin="wedge" params="0 4 60 30 0"/>', "positive"),
    ('<mesh name="m" builtin="wedge" params="3 4 190 30 0"/>', "field of view"),
    ('<mesh name="m" builtin="wedge" params="3 4 60 30 2"/>', "gamma"),
    ('<mesh name="m" builtin="plate" params="3 0"/>', "positive"),
    ('<mesh name="m" builtin="sphere" params="1" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/>',
     "cannot also have"),
    ('<mesh name="m" builtin="grid" params="3 3"/>', "6 or 7 values"),
    ('<mesh name="m" builtin="grid" params="0 3 3 .1 .1 .1"/>', "positive"),
    ('<mesh name="m" builtin="grid" params="3 3 3 .1 .1 .1 4"/>', "dim must be 2 or 3"),
    ('<mesh name="m" builtin="grid" params="3 3 2 .1 .1 .1 2"/>', "beyond dim"),
    ('<mesh name="m" builtin="box" params="1 3 3 .1 .1 .1"/>', "at least 2"),
    ('<mesh name="m" builtin="ellipsoid" params="3 3 3 .1 .1 .1 3 4"/>', "6 or 7 values"),
    ('<mesh name="m" builtin="square" params="3 3 2 .1 .1 .1"/>', r"count\[2\] 1"),
])
def test_builtin_errors(asset, msg):
  """Bad builtin parameters are load errors naming the element and line, where 4.0 also
  rejects the mesh."""
  xml = _builtin_model(asset)
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=msg) as e:
    compile_model(xml)
  assert "<mesh" in str(e.value) and ":1:" in str(e.value)


# ------------------------------------------------------------------------------ MSH files

def _msh(v, f=None, normals=False, texcoord=False):
  """Bytes of a legacy MSH file (header of 4 int32 counts, then the arrays)."""
  v = np.asarray(v, np.float32)
  nv = len(v)
  data = struct.pack("<4i", nv, nv if normals else 0, nv if texcoord else 0,
                     0 if f is None else len(f)) + v.tobytes()
  if normals:
    data += (v / np.linalg.norm(v, axis=1, keepdims=True).clip(1e-3)).astype(np.float32).tobytes()
  if texcoord:
    data += (v[:, :2] * 0.3).astype(np.float32).tobytes()
  if f is not None:
    data += np.asarray(f, np.int32).tobytes()
  return data


def _msh_model(tmp_path, data, extra=""):
  (tmp_path / "x.msh").write_bytes(data)
  xml = (f'<mujoco><asset><mesh file="x.msh" {extra}/></asset><worldbody><body><freejoint/>'
         f'<geom type="mesh" mesh="x"/><geom type="box" mesh="x" pos=".3 0 0"/></body>'
         f'</worldbody></mujoco>')
  (tmp_path / "m.xml").write_text(xml)
  return str(tmp_path / "m.xml")


def _compare_path(path):
  sizes, A, _ = compile_model(path)
  m = mujoco.MjModel.from_xml_path(path)
  for k in ("nmeshvert", "nmeshface", "nmeshgraph"):
    assert sizes[k] == getattr(m, k), k
  for k in ("mesh_vert", "mesh_pos", "geom_size", "geom_pos", "body_mass", "body_inertia", "body_ipos"):
    np.testing.assert_allclose(A[k], getattr(m, k), rtol=1e-12, atol=1e-12, err_msg=k)
  for k in ("mesh_quat", "geom_quat", "body_iquat"):
    a, b = A[k], getattr(m, k)
    sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1, 1)
    np.testing.assert_allclose(a * sign, b, rtol=1e-12, atol=1e-12, err_msg=k)
  return A, m


@pytest.mark.parametrize("case", ["faces", "no_faces", "normals_texcoord", "repeated_vertex",
                                  "mirrored"])
def test_msh_file(tmp_path, case):
  """MSH files with and without faces (hull), with normals and texture coordinates, with
  repeated vertices (kept, as 4.0 keeps them) and mirrored by scale (faces flipped once, as
  4.0 does since it fixed the double flip)."""
  v, f = _lshape()
  data = {"faces": lambda: _msh(v, f), "no_faces": lambda: _msh(v),
          "normals_texcoord": lambda: _msh(v, f, normals=True, texcoord=True),
          "repeated_vertex": lambda: _msh(np.r_[v, v[:2]], f),
          "mirrored": lambda: _msh(v, f)}[case]()
  A, m = _compare_path(_msh_model(tmp_path, data, 'scale="-1 1 .5"' if case == "mirrored"
                                  else ""))
  if case != "no_faces":
    np.testing.assert_array_equal(A["mesh_face"], m.mesh_face)
  if case == "normals_texcoord":
    np.testing.assert_array_equal(A["mesh_texcoord"], m.mesh_texcoord)
    np.testing.assert_array_equal(A["mesh_facetexcoord"], m.mesh_facetexcoord)


@pytest.mark.parametrize("case,msg", [
    ("empty", "empty"), ("header", "missing header"), ("truncated", "file size"),
    ("three_vertices", "invalid sizes"), ("bad_normals", "invalid sizes"),
    ("face_index", "vertex that does not exist"), ("face_attribute", "repeated face"),
])
def test_msh_errors(tmp_path, case, msg):
  """Corrupt MSH files are load errors naming the file, element and line, where 4.0 also
  rejects them."""
  v, f = _lshape()
  data = {"empty": b"", "header": b"\0\0\0", "truncated": _msh(v, f)[:-4],
          "three_vertices": _msh(v[:3]),
          "bad_normals": struct.pack("<4i", len(v), 3, 0, 0) + np.zeros(3 * len(v) + 9,
                                                                       np.float32).tobytes(),
          "face_index": _msh(v, np.r_[f, [[0, 1, 99]]]),
          "face_attribute": _msh(v, f)}[case]
  path = _msh_model(tmp_path, data, 'face="0 1 2"' if case == "face_attribute" else "")
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_path(path)
  with pytest.raises(MjcfError, match=msg) as e:
    compile_model(path)
  assert "m.xml:1:" in str(e.value) and "<mesh" in str(e.value)
  if case not in ("face_index", "face_attribute"):
    assert "x.msh" in str(e.value)
