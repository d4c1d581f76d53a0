"""OBJ faces with more than 4 corners: triangulated as MuJoCo 4.0.1's tinyobjloader does (its
float32 ear clipping in a projected plane, which can drop degenerate corners), and dropped
altogether beyond 100 corners; compared with `mujoco` face by face."""
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import compile_model
from tests.models import assert_compiles_as_mujoco

XML = """<mujoco><asset><mesh name="m" file="{}"/></asset>
<worldbody><body><freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>"""

# a unit cube with a vertex (9) on the edge 1-2 of two of its faces, which become pentagons
CUBE = """v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
v 0.5 0 0
f 1 4 3 2 9
f 5 6 7 8
f 1 9 2 6 5
f 2 3 7 6
f 3 4 8 7
f 4 1 5 8
"""


def _polygons(rng):
  """OBJ text: a tetrahedron (the hull) and n-gons of several kinds in several planes."""
  v = ["v -5 -5 -5", "v 5 -5 -5", "v 0 5 -5", "v 0 0 5"]
  f = ["f 1 3 2", "f 1 2 4", "f 2 3 4", "f 3 1 4"]
  for j in range(24):
    n = int(rng.integers(5, 13))
    kind = j % 4
    if kind == 2:                               # integer grid: ties, collinear, repeats
      p = rng.integers(-3, 4, (n, 2)).astype(float)
    else:
      t = np.sort(rng.uniform(0, 2 * np.pi, n))
      r = np.ones(n) if kind == 0 else rng.uniform(0.3, 1.0, n)   # convex, star-shaped
      if kind == 3:                             # regular, rounded: corners on edges
        t = np.linspace(0, 2 * np.pi, n, endpoint=False)
      p = np.c_[r * np.cos(t), r * np.sin(t)]
      if kind == 3:
        p = np.round(p * 2) / 2
      if j % 3 == 0:
        p = p[::-1]
    p3 = np.c_[p, np.zeros(n)]
    if j % 5 == 1:
      p3 = p3[:, [0, 2, 1]]
    elif j % 5 == 2:
      p3 = p3[:, [2, 0, 1]]
    elif j % 5 == 3:
      q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
      p3 = p3 @ q.T
    if j % 7 == 4:
      p3 *= 1e-3
    base = len(v)
    v += ["v %.9g %.9g %.9g" % tuple(x) for x in p3 + rng.normal(size=3)]
    f.append("f " + " ".join(str(base + 1 + i) for i in range(n)))
  return "\n".join(v + f) + "\n"


def _big_polygon(n):
  """A cone: an n-gon base and its n side triangles."""
  t = np.linspace(0, 2 * np.pi, n, endpoint=False)
  v = ["v 0 0 -1"] + ["v %.6f %.6f 0" % (np.cos(a), np.sin(a)) for a in t]
  f = ["f " + " ".join(str(i + 2) for i in range(n))]
  f += ["f 1 %d %d" % ((i + 1) % n + 2, i + 2) for i in range(n)]
  return "\n".join(v + f) + "\n"


def _check(tmp_path, name, text):
  (tmp_path / name).write_text(text)
  path = tmp_path / (name + ".xml")
  path.write_text(XML.format(name))
  ours = compile_model(str(path))
  mjm = mujoco.MjModel.from_xml_path(str(path))
  np.testing.assert_array_equal(ours[1]["mesh_face"], mjm.mesh_face)
  assert_compiles_as_mujoco(str(path))


def test_pentagon_with_a_corner_on_an_edge(tmp_path):
  _check(tmp_path, "cube.obj", CUBE)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ngons(tmp_path, seed):
  _check(tmp_path, f"ngons{seed}.obj", _polygons(np.random.default_rng(seed)))


@pytest.mark.parametrize("n", [100, 101])
def test_faces_beyond_100_corners_are_dropped(tmp_path, n):
  _check(tmp_path, f"cone{n}.obj", _big_polygon(n))
