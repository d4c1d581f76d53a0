"""Compiled mesh normals (mesh_normal, mesh_facenormal; engine/mjcf/_mesh.py compile_normals)
against MuJoCo 4.0: generated ones (smoothnormal false and true), an OBJ's `vn`, an MSH's
normals, the `normal` attribute and the builtin meshes' frames, under scale, refpos and
refquat, for STL/OBJ/MSH/inline/builtin meshes and dm_control's meshed models."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import compile_model
from numjoco.engine.mjcf._node import MjcfError
from tests.test_mesh import _box, _icosphere, _lshape, write_stl_binary
from tests.test_mesh_sources import BUILTINS, FLAT, _msh

# float32 rounding: we follow MuJoCo's float operations in its order, so nearly every
# normal is bit-equal; libm differences leave a few ulps
TOL = 2e-6


def _unit_cube():
  """Cube [0,1]^3: 8 corners (x*4 + y*2 + z) and 12 outward triangles."""
  v = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
  quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
  f = []
  for a, b, c, d in quads:
    f += [(a, b, c), (a, c, d)]
  f = np.array(f)
  cen = v.mean(axis=0)
  for i, t in enumerate(f):
    n = np.cross(v[t[1]] - v[t[0]], v[t[2]] - v[t[0]])
    if n @ (v[t].mean(axis=0) - cen) < 0:
      f[i] = t[[0, 2, 1]]
  return v, f


def _compile(xml, assets=None, path=None):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # drawing-only warnings
    _, A, _ = compile_model(path or xml, assets)
  m = (mujoco.MjModel.from_xml_path(path) if path
       else mujoco.MjModel.from_xml_string(xml, assets or {}))
  return A, m


def _corners(normal, nadr, face, facenormal, fadr, fnum):
  """{face as a rotation starting at its smallest vertex: its corners' normals in that
  order}."""
  out = {}
  for k in range(fadr, fadr + fnum):
    f, fn = face[k], facenormal[k]
    r = int(np.argmin(f))
    out[tuple(np.roll(f, -r))] = normal[nadr + np.roll(fn, -r)]
  return out


def assert_normals(A, m, tol=TOL):
  """Our compiled normals equal MuJoCo's: sizes, addresses, faces, face normal indices and
  every face corner's normal within `tol`."""
  assert len(A["mesh_normal"]) == m.nmeshnormal
  np.testing.assert_array_equal(A["mesh_normaladr"], m.mesh_normaladr)
  np.testing.assert_array_equal(A["mesh_normalnum"], m.mesh_normalnum)
  assert A["mesh_normal"].dtype == np.float32 and A["mesh_normal"].shape == m.mesh_normal.shape
  np.testing.assert_array_equal(A["mesh_face"], m.mesh_face)
  np.testing.assert_array_equal(A["mesh_facenormal"], m.mesh_facenormal)
  np.testing.assert_allclose(A["mesh_normal"], m.mesh_normal, rtol=0, atol=tol)
  for i in range(m.nmesh):
    args = (m.mesh_normaladr[i], m.mesh_faceadr[i], m.mesh_facenum[i])
    ours = _corners(A["mesh_normal"], args[0], A["mesh_face"], A["mesh_facenormal"], *args[1:])
    theirs = _corners(m.mesh_normal, args[0], m.mesh_face, m.mesh_facenormal, *args[1:])
    assert ours.keys() == theirs.keys(), f"mesh {i}: faces differ"
    for key, n in theirs.items():
      np.testing.assert_allclose(ours[key], n, rtol=0, atol=tol, err_msg=f"mesh {i} face {key}")


def _scene(assets):
  return (f'<mujoco><asset>{assets}</asset><worldbody><body><freejoint/>'
          f'<geom type="mesh" mesh="m"/></body></worldbody></mujoco>')


# ------------------------------------------------------------------------------ STL cube

@pytest.mark.parametrize("smooth", ["false", "true"])
def test_stl_cube(tmp_path, smooth):
  """A cube STL (8 merged corners): with smoothnormal false, each corner keeps only the faces
  within 37 degrees of its average normal (some corners keep none: (0, 0, 1)), bit-equal to
  MuJoCo's; with true, the area-weighted diagonal of the corner."""
  v, f = _unit_cube()
  write_stl_binary(tmp_path / "c.stl", v, f)
  path = tmp_path / "m.xml"
  path.write_text(_scene(f'<mesh name="m" file="c.stl" smoothnormal="{smooth}"/>'))
  A, m = _compile(None, path=str(path))
  assert m.nmeshnormal == 8
  assert_normals(A, m, tol=0)
  n = A["mesh_normal"]
  if smooth == "true":   # every corner normal points away from the centre, off the axes
    assert np.all(np.sum(n * A["mesh_vert"], axis=1) > 0.5)
    assert np.all(np.max(np.abs(n), axis=1) < 0.9)
  else:                  # sharp edges: axis-aligned normals only
    assert np.all(np.sort(np.abs(n), axis=1)[:, :2] < 1e-6)


def test_stl_cube_flipped_and_rotated(tmp_path):
  """Negative scale (the winding and the face-normal indices swapped), non-uniform scale
  (normals divided by it) and refquat/refpos, with smooth normals so that every one moves."""
  v, f = _unit_cube()
  write_stl_binary(tmp_path / "c.stl", v, f)
  path = tmp_path / "m.xml"
  path.write_text(_scene('<mesh name="m" file="c.stl" smoothnormal="true" scale="1 2 -0.5" '
                         'refpos="0.1 0.2 0.3" refquat="0.9 0.1 -0.3 0.2"/>'))
  A, m = _compile(None, path=str(path))
  assert_normals(A, m)


# -------------------------------------------------------------------------------------- OBJ

def _obj_cube_with_vn():
  """A cube OBJ with one `vn` per side (quads: triangulated as MuJoCo's reader does)."""
  v, _ = _unit_cube()
  lines = ["v %g %g %g" % tuple(p) for p in v]
  sides = [((0, 1, 3, 2), (-1, 0, 0)), ((4, 6, 7, 5), (1, 0, 0)), ((0, 4, 5, 1), (0, -1, 0)),
           ((2, 3, 7, 6), (0, 1, 0)), ((0, 2, 6, 4), (0, 0, -1)), ((1, 5, 7, 3), (0, 0, 1))]
  for _, n in sides:
    lines.append("vn %g %g %g" % n)
  for k, (q, n) in enumerate(sides):
    e = np.cross(v[q[1]] - v[q[0]], v[q[2]] - v[q[0]])
    q = q if e @ np.array(n) > 0 else q[::-1]
    lines.append("f " + " ".join(f"{i + 1}//{k + 1}" for i in q))
  return "\n".join(lines) + "\n"


@pytest.mark.parametrize("attrs", ["", 'scale="2 1 0.5"', 'scale="-1 1 1" refquat="0 1 0 0"',
                                   'refpos=".5 .5 .5" refquat="1 0.2 0 0.1" scale="3 3 3"'])
def test_obj_with_vn(attrs):
  """An OBJ's own normals (24 corners index 6 `vn`): kept, rotated and rescaled as MuJoCo does,
  with the face normal indices from the file (swapped with the winding by a negative scale)."""
  assets = {"c.obj": _obj_cube_with_vn().encode()}
  A, m = _compile(_scene(f'<mesh name="m" file="c.obj" {attrs}/>'), assets)
  assert m.nmeshnormal == 6
  assert_normals(A, m)


@pytest.mark.parametrize("smooth", ["false", "true"])
def test_obj_without_vn(smooth):
  """An OBJ without normals (an ellipsoid-like icosphere, an L prism): generated, per vertex."""
  v, f = _icosphere()
  obj = "".join("v %.9g %.9g %.9g\n" % tuple(p) for p in v)
  obj += "".join("f %d %d %d\n" % tuple(t + 1) for t in f)
  lv, lf = _lshape()
  lobj = "".join("v %.9g %.9g %.9g\n" % tuple(p) for p in lv)
  lobj += "".join("f %d %d %d\n" % tuple(t + 1) for t in lf)
  xml = (f'<mujoco><asset><mesh name="m" file="s.obj" smoothnormal="{smooth}"/>'
         f'<mesh name="l" file="l.obj" smoothnormal="{smooth}" scale="1 2 1"/></asset>'
         f'<worldbody><geom type="mesh" mesh="m"/><geom type="mesh" mesh="l" pos="2 0 0"/>'
         f'</worldbody></mujoco>')
  A, m = _compile(xml, {"s.obj": obj.encode(), "l.obj": lobj.encode()})
  assert m.nmeshnormal == len(v) + len(lv)
  assert_normals(A, m)


def test_obj_vn_without_face_indices_is_an_error():
  """`vn` lines but faces without normal indices: MuJoCo's model check fails; ours says why."""
  v, _ = _unit_cube()
  obj = "".join("v %g %g %g\n" % tuple(p) for p in v) + "vn 0 0 1\nf 1 2 3\nf 1 3 4\nf 5 6 7\n"
  with pytest.raises(Exception):
    mujoco.MjModel.from_xml_string(_scene('<mesh name="m" file="c.obj"/>'), {"c.obj": obj})
  with pytest.raises(MjcfError, match="normal index"):
    compile_model(_scene('<mesh name="m" file="c.obj"/>'), {"c.obj": obj.encode()})


# ---------------------------------------------------------------------------- inline, MSH

@pytest.mark.parametrize("case", ["hull", "hull_sharp", "normal_attr", "two_per_vertex",
                                  "box_faces", "lshape_refquat"])
def test_inline_meshes(case):
  """Inline meshes: vertex-only (the normals of the hull's faces), given normals (one per
  vertex, or two: face indices doubled), and faced meshes under refquat."""
  rng = np.random.default_rng(7)
  blob = " ".join("%.5f" % x for x in (rng.normal(size=(30, 3)) * [0.3, 0.2, 0.1]).ravel())
  tet = "0 0 0 1 0 0 0 1 0 0 0 1"
  bv, bf = _box()
  lv, lf = _lshape()
  asset = {
      "hull": f'<mesh name="m" vertex="{blob}" smoothnormal="true"/>',
      "hull_sharp": f'<mesh name="m" vertex="{blob}"/>',
      "normal_attr": f'<mesh name="m" vertex="{tet}" normal="0 0 -1 1 0 0 0 1 0 0 0 1" '
                     f'scale="1 2 3"/>',
      "two_per_vertex": f'<mesh name="m" vertex="{tet}" normal="{" ".join(["0 0 1 1 0 0"] * 4)}"/>',
      "box_faces": (f'<mesh name="m" vertex="{" ".join(map(str, bv.ravel()))}" '
                    f'face="{" ".join(map(str, bf.ravel()))}" scale="1 1 -1"/>'),
      "lshape_refquat": (f'<mesh name="m" vertex="{" ".join(map(str, lv.ravel()))}" '
                         f'face="{" ".join(map(str, lf.ravel()))}" refquat="1 1 0 0"/>'),
  }[case]
  A, m = _compile(_scene(asset))
  assert_normals(A, m)


@pytest.mark.parametrize("normals", [False, True])
@pytest.mark.parametrize("faces", [False, True])
def test_msh(tmp_path, normals, faces):
  """MSH files with and without their own normals, with and without faces (hull)."""
  v, f = _lshape()
  (tmp_path / "x.msh").write_bytes(_msh(v - 0.3, f if faces else None, normals=normals))
  path = tmp_path / "m.xml"
  path.write_text(_scene('<mesh name="m" file="x.msh" scale="1 1 2"/>'))
  A, m = _compile(None, path=str(path))
  assert_normals(A, m)


@pytest.mark.parametrize("builtin,params", BUILTINS + FLAT)
def test_builtin(builtin, params):
  """Builtin meshes: generated normals, the wedge's and plate's given frames (three normals per
  vertex), scaled; vertex-only builtins take the hull's faces."""
  xml = (f'<mujoco><asset><mesh name="m" builtin="{builtin}" params="{params}" '
         f'scale="1 1.5 0.7"/></asset><worldbody>'
         f'<geom type="mesh" mesh="m" contype="0" conaffinity="0"/></worldbody></mujoco>')
  A, m = _compile(xml)
  assert_normals(A, m)


def test_errors():
  """Bad normal data: clear errors naming the mesh element."""
  with pytest.raises(MjcfError, match="multiple of 3"):
    compile_model(_scene('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" normal="1 0"/>'))
  obj = _obj_cube_with_vn()
  with pytest.raises(MjcfError, match="repeated normal"):
    compile_model(_scene('<mesh name="m" file="c.obj" normal="0 0 1"/>'),
                  {"c.obj": obj.encode()})


# ------------------------------------------------------------------------ dm_control models

def _dm(*parts):
  dm = pytest.importorskip("dm_control")
  return os.path.join(os.path.dirname(dm.__file__), *parts)


@pytest.mark.parametrize("parts", [
    ("third_party", "kinova", "jaco_arm.xml"), ("third_party", "kinova", "jaco_hand.xml"),
    ("suite", "dog.xml"), ("locomotion", "walkers", "assets", "fruitfly_v2", "fruitfly.xml")],
    ids=lambda p: p[-1])
def test_dm_control_models(parts):
  """dm_control's meshed models (STL jaco, the dog's 162 STL bones, the fruit fly's OBJ
  parts): every compiled normal equals 4.0's to float32 rounding, face indices exactly."""
  A, m = _compile(None, path=_dm(*parts))
  assert m.nmeshnormal > 1000
  assert_normals(A, m)
  exact = np.mean(np.all(A["mesh_normal"] == m.mesh_normal, axis=1))
  assert exact > 0.99, f"only {exact:.4f} of the normals are bit-equal"
