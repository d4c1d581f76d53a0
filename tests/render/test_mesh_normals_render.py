"""Meshes shaded with their compiled normals (render/meshes.py mesh_asset), beside MuJoCo's own
picture (mujoco.Renderer on EGL, as tests/render/test_mesh_render.py does): a smooth-normal
sphere mesh shades smoothly, the same sphere with one `vn` per face shows its facets, a cube
(8 shared corners, MuJoCo's sharp-edge normals) has uniformly lit faces, and a mesh with
texture coordinates keeps its normals as compiled (no sharp-edge fallback)."""
import numpy as np
import pytest

pytest.importorskip("mujoco")

from numjoco.engine.mjcf import _meshgen
from tests.render.test_mesh_render import _render_both
from tests.render.test_vs_mujoco import _mask

RED, GREEN, BLUE = (1, 0, 0), (0, 1, 0), (0, 0, 1)


def _faceted_sphere_obj():
  """The builtin sphere (subdivision 2) as an OBJ with one normal per face: drawn faceted."""
  v, f, _ = _meshgen.make("sphere", [2])
  v = np.asarray(v, np.float64)
  n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
  n /= np.linalg.norm(n, axis=1, keepdims=True)
  lines = ["v %.9g %.9g %.9g" % tuple(p) for p in v] + ["vn %.9g %.9g %.9g" % tuple(x) for x in n]
  lines += ["f %d//%d %d//%d %d//%d" % (a + 1, k + 1, b + 1, k + 1, c + 1, k + 1)
            for k, (a, b, c) in enumerate(f)]
  return "\n".join(lines) + "\n"


_CUBE_V = " ".join("%d %d %d" % (x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1))
_CUBE_F = ("0 1 3  0 3 2  4 6 7  4 7 5  0 4 5  0 5 1  2 3 7  2 7 6  0 2 6  0 6 4  1 5 7  1 7 3")
def _scene(assets, geoms):
  """MJCF of the meshes `assets` and the geoms `geoms` (text inside <asset> and after the
  light) under the lighting every test here uses: a dim headlight and one directional light
  without shadows, neither with specular light."""
  return f"""<mujoco><asset>{assets}</asset>
<visual><headlight ambient=".1 .1 .1" diffuse=".4 .4 .4" specular="0 0 0"/></visual>
<worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".6 .6 .6"
       specular="0 0 0"/>
{geoms}
</worldbody></mujoco>"""


SCENE = _scene(f"""
<mesh name="ball" builtin="sphere" params="2" smoothnormal="true" scale=".25 .25 .25"/>
<mesh name="facets" file="facets.obj" scale=".25 .25 .25"/>
<mesh name="cube" vertex="{_CUBE_V}" face="{_CUBE_F}" scale=".15 .15 .15"/>""", """\
<geom type="mesh" mesh="ball" pos="0 -0.6 0" rgba="1 0 0 1"/>
<geom type="mesh" mesh="facets" pos="0 0 0" rgba="0 1 0 1"/>
<geom type="mesh" mesh="cube" pos="0 0.6 0" euler="10 20 30" rgba="0 0 1 1"/>""")


def _erode(mask, k=3):
  """Pixels whose (2k+1)^2 neighbourhood is inside `mask` (edges of the silhouette dropped)."""
  out = mask.copy()
  for dy in range(-k, k + 1):
    for dx in range(-k, k + 1):
      out &= np.roll(np.roll(mask, dy, 0), dx, 1)
  return out


def _kinks(img, mask, channel):
  """99th percentile of the brightness's second difference between neighbouring pixels
  inside `mask`: small where shading varies smoothly (a smooth ball: ~2 of 255), large where
  it steps across facet edges (~30)."""
  x = img[..., channel].astype(int)
  m = _erode(mask)
  d2x = np.abs(x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2])[m[:, 2:] & m[:, 1:-1] & m[:, :-2]]
  d2y = np.abs(x[2:] - 2 * x[1:-1] + x[:-2])[m[2:] & m[1:-1] & m[:-2]]
  return float(np.percentile(np.concatenate([d2x, d2y]), 99))


def _levels(img, mask, channel, n=3, spread=2):
  """Fraction of the pixels inside `mask` within `spread` of the `n` commonest brightness
  values: near 1 for a few uniformly lit flat faces."""
  x = img[..., channel].astype(int)[_erode(mask)]
  values, counts = np.unique(x, return_counts=True)
  top = values[np.argsort(counts)[-n:]]
  return float(np.mean(np.min(np.abs(x[:, None] - top[None, :]), axis=1) <= spread))


def test_smooth_sphere_faceted_sphere_and_flat_cube(tmp_path):
  """Smooth-normal sphere: no brightness kinks (99th percentile second difference <= 4 of
  255) while the faceted one has them (>= 4x larger); the cube's visible faces are each
  uniformly lit (>= 90% of its pixels at 3 brightness levels); each geom's mean brightness
  within 12 of MuJoCo's (measured: the smooth sphere 0.01 of 255 per pixel). The pictures
  (MuJoCo left, ours right) are saved in $TMPDIR/render-tests."""
  (tmp_path / "facets.obj").write_text(_faceted_sphere_obj())
  path = tmp_path / "scene.xml"
  path.write_text(SCENE)
  ref, img = _render_both(tmp_path, path, 180, -25, "mesh_normals", distance=1.8)
  masks = {}
  for name, col in (("ball", RED), ("facets", GREEN), ("cube", BLUE)):
    a, b = _mask(ref, col), _mask(img, col)
    assert a.sum() > 500 and b.sum() > 500, f"{name} is not in view"
    iou = (a & b).sum() / (a | b).sum()
    assert iou > 0.9, f"{name}: IoU {iou:.3f}"
    masks[name] = (a, b)
  smooth, faceted = _kinks(img, masks["ball"][1], 0), _kinks(img, masks["facets"][1], 1)
  ref_smooth, ref_faceted = _kinks(ref, masks["ball"][0], 0), _kinks(ref, masks["facets"][0], 1)
  assert ref_faceted >= 4 * max(ref_smooth, 1), "the reference does not show the difference"
  assert smooth <= 4, f"smooth sphere has brightness kinks of {smooth}"
  assert faceted >= 4 * max(smooth, 1), f"faceted sphere kinks {faceted} vs smooth {smooth}"
  assert _levels(ref, masks["cube"][0], 2) > 0.9
  assert _levels(img, masks["cube"][1], 2) > 0.9, "the cube's faces are not uniformly lit"
  for name, ch in (("ball", 0), ("facets", 1), ("cube", 2)):
    a, b = masks[name]
    mr, mo = ref[..., ch][a].mean(), img[..., ch][b].mean()
    assert abs(mr - mo) < 12, f"{name}: mean brightness {mo:.1f}, MuJoCo's {mr:.1f}"


def _cube_obj(uv):
  """A cube OBJ whose sides are fans of 4 triangles around a centre vertex, so that every
  corner is in two triangles of each of its sides (its smooth normal is the diagonal); with
  `uv`, one `vt` per vertex. No normals: MuJoCo generates them."""
  v = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
  f = []
  for axis in range(3):
    for sign in (-1, 1):
      ring = [i for i, p in enumerate(v[:8]) if p[axis] == sign]
      c = [0, 0, 0]
      c[axis] = sign
      v.append(tuple(c))
      u, w = (axis + 1) % 3, (axis + 2) % 3
      ring.sort(key=lambda i: np.arctan2(v[i][w], v[i][u]))   # counter-clockwise about +axis
      if sign < 0:
        ring = ring[::-1]
      f += [(len(v) - 1, ring[k], ring[(k + 1) % 4]) for k in range(4)]
  lines = ["v %d %d %d" % p for p in v]
  if uv:
    lines += ["vt %g %g" % (0.5 + 0.3 * p[0], 0.5 + 0.3 * p[1]) for p in v]
    lines += ["f %d/%d %d/%d %d/%d" % (a + 1, a + 1, b + 1, b + 1, c + 1, c + 1)
              for a, b, c in f]
  else:
    lines += ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in f]
  return "\n".join(lines) + "\n"


def test_mesh_with_texcoords_uses_its_normals_as_given(tmp_path):
  """MuJoCo's renderer keeps a mesh's normals as compiled when the mesh has texture
  coordinates (no sharp-edge fallback to face normals): a smooth-normal cube (diagonal corner
  normals) with `vt` shades in gradients, the same cube without `vt` has flat faces, in
  MuJoCo's picture and ours (pixel for pixel: test_smooth_normals_facing_away_are_kept)."""
  (tmp_path / "uvcube.obj").write_text(_cube_obj(uv=True))
  (tmp_path / "cube.obj").write_text(_cube_obj(uv=False))
  path = tmp_path / "scene.xml"
  path.write_text(_scene("""
<mesh name="uv" file="uvcube.obj" smoothnormal="true" scale=".2 .2 .2"/>
<mesh name="flat" file="cube.obj" smoothnormal="true" scale=".2 .2 .2"/>
""", """\
<geom type="mesh" mesh="uv" pos="0 -0.35 0" euler="10 20 30" rgba="1 0 0 1"/>
<geom type="mesh" mesh="flat" pos="0 0.35 0" euler="10 20 30" rgba="0 0 1 1"/>"""))
  ref, img = _render_both(tmp_path, path, 180, -25, "mesh_normals_texcoord", distance=1.6)
  for col, ch in ((RED, 0), (BLUE, 2)):
    a, b = _mask(ref, col), _mask(img, col)
    assert (a & b).sum() / (a | b).sum() > 0.9
  for x in (ref, img):
    assert _nvalues(x, _mask(x, RED), 0) > 20, "the textured cube is flat-shaded"
    assert _levels(x, _mask(x, BLUE), 2) > 0.9, "the plain cube's faces are not flat"


def _nvalues(img, mask, channel, frac=0.9):
  """How many distinct brightness values cover `frac` of the pixels inside `mask`: a few for
  flat faces, dozens for gradients."""
  x = img[..., channel][_erode(mask)]
  _, counts = np.unique(x, return_counts=True)
  c = np.cumsum(np.sort(counts)[::-1])
  return int(np.searchsorted(c, frac * c[-1]) + 1)


@pytest.mark.parametrize("azimuth,elevation", [(180, -25), (120, -10), (45, -60)])
def test_smooth_normals_facing_away_are_kept(tmp_path, azimuth, elevation):
  """MuJoCo culls back faces and lights the front ones one-sided (GL_LIGHT_MODEL_TWO_SIDE 0):
  the diagonal corner normals of a smooth cube with texture coordinates that turn away from the
  eye on a visible side keep their direction. Our picture equals MuJoCo's (mean red difference
  under 2/255, none over 8 inside the cube; flipping them per vertex towards the eye, as the
  shader did, gave a mean of 15-25 and up to 119)."""
  (tmp_path / "uvcube.obj").write_text(_cube_obj(uv=True))
  path = tmp_path / "scene.xml"
  path.write_text(_scene("""
<mesh name="uv" file="uvcube.obj" smoothnormal="true" scale=".2 .2 .2"/>""",
                         '<geom type="mesh" mesh="uv" euler="10 20 30" rgba="1 0 0 1"/>'))
  ref, img = _render_both(tmp_path, path, azimuth, elevation,
                          f"mesh_normals_away_{azimuth}_{elevation}", distance=1.0)
  a, b = _mask(ref, RED), _mask(img, RED)
  assert (a & b).sum() / (a | b).sum() > 0.98
  inside = _erode(a & b, 1)
  d = np.abs(ref[..., 0].astype(int) - img[..., 0])[inside]
  assert d.mean() < 2 and d.max() <= 8, \
      f"red differs by {d.mean():.1f} on average, {d.max()} at most"
