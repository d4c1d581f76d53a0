"""Analytic narrowphase (engine.collision.primitive) against MuJoCo's mj_collision.

Each scene has two geoms: the lower-type one on a mocap body, the other on a free body. Random
poses are set, MuJoCo runs mj_forward, and our pair function is called with MuJoCo's own
geom_xpos, geom_xmat, geom_size and pair margin; contacts are compared in MuJoCo's order.
"""
import zlib

import mujoco
import numpy as np
import pytest

from numjoco.engine.collision import primitive as cp

TOL = 1e-9
_TYPES = {"plane": 0, "sphere": 2, "capsule": 3, "cylinder": 5, "box": 6}


def _model(type1, size1, type2, size2, margin1, margin2, free_first, gap=0.0):
  """Two-geom scene; free_first puts the higher-type (free) geom first in the geom list."""
  def s(v):
    return " ".join(repr(float(x)) for x in v)
  mocap = (f'<body name="a" mocap="true"><geom name="g1" type="{type1}" size="{s(size1)}" '
           f'margin="{margin1}" gap="{gap}"/></body>')
  free = (f'<body name="b" pos="0 0 3"><freejoint/><geom name="g2" type="{type2}" '
          f'size="{s(size2)}" margin="{margin2}"/></body>')
  bodies = free + mocap if free_first else mocap + free
  return mujoco.MjModel.from_xml_string(
      f"<mujoco><option><flag gravity='disable'/></option><worldbody>{bodies}</worldbody>"
      "</mujoco>")


def _random_quat(rng):
  q = rng.normal(size=4)
  return q / np.linalg.norm(q)


def _axis_quat(rng):
  """A rotation by a multiple of 90 degrees about a coordinate axis (exact matrices)."""
  c = np.sqrt(0.5)
  return [np.array([1.0, 0, 0, 0]), np.array([c, c, 0, 0]), np.array([c, 0, c, 0]),
          np.array([c, 0, 0, c]), np.array([0.0, 1, 0, 0]), np.array([0.0, 0, 1, 0])][
              rng.integers(6)]


def _tilt_quat(rng, angle):
  """A random-axis rotation by `angle` (radians)."""
  ax = rng.normal(size=3)
  ax /= np.linalg.norm(ax)
  return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * ax])


def _quat_mul(a, b):
  w1, x1, y1, z1 = a
  w2, x2, y2, z2 = b
  return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                   w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _pose2(rng, scale):
  """Pose of geom 2 relative to a random geom 1 pose: orientation family, offset scale."""
  kind = rng.integers(4)
  if kind == 0:
    q = _random_quat(rng)
  elif kind == 1:
    q = _axis_quat(rng)
  elif kind == 2:
    q = _quat_mul(_axis_quat(rng), _tilt_quat(rng, rng.uniform(0, 0.2)))
  else:
    q = _quat_mul(_axis_quat(rng), _tilt_quat(rng, rng.choice([1e-12, 1e-7, 1e-4])))
  return rng.uniform(-scale, scale, size=3), q


class _Checker:
  """Sets poses in a two-geom scene and compares our contacts with MuJoCo's."""

  def __init__(self, type1, size1, type2, size2, margin1=0.0, margin2=0.0, free_first=False,
               gap=0.0):
    self.m = _model(type1, size1, type2, size2, margin1, margin2, free_first, gap)
    self.d = mujoco.MjData(self.m)
    self.t1, self.t2 = _TYPES[type1], _TYPES[type2]
    # MuJoCo puts the lower type first, and for equal types the lower geom id
    self.g1, self.g2 = (1, 0) if free_first and self.t1 != self.t2 else (0, 1)
    # MuJoCo 4 passes the SUM of the two geom margins plus the sum of their gaps, not the max
    m = self.m
    self.margin = (m.geom_margin[self.g1] + m.geom_margin[self.g2] +
                   m.geom_gap[self.g1] + m.geom_gap[self.g2])
    self.dist = np.zeros(cp._MAXCONPAIR)
    self.pos = np.zeros((cp._MAXCONPAIR, 3))
    self.frame = np.zeros((cp._MAXCONPAIR, 9))

  def check(self, p1, q1, p2, q2):
    """Pose geom 1 at (p1, q1) and geom 2 at (p2, q2); return (ncon, max error)."""
    m, d, g1, g2 = self.m, self.d, self.g1, self.g2
    d.mocap_pos[0] = p1
    d.mocap_quat[0] = q1
    d.qpos[:3] = p2
    d.qpos[3:7] = q2
    mujoco.mj_forward(m, d)
    dist, pos, frame = self.dist, self.pos, self.frame
    frame[:] = 0.0
    n = cp.collide_primitive(self.t1, self.t2, m.geom_size[g1], d.geom_xpos[g1],
                             d.geom_xmat[g1], m.geom_size[g2], d.geom_xpos[g2],
                             d.geom_xmat[g2], self.margin, dist, pos, frame)
    ctx = (f"types {self.t1}-{self.t2} size {m.geom_size[g1]} {m.geom_size[g2]} "
           f"p1 {list(p1)} q1 {list(q1)} p2 {list(p2)} q2 {list(q2)} margin {self.margin}")
    assert n == d.ncon, f"ncon {n} != {d.ncon}: {ctx}"
    maxerr = 0.0
    for k in range(n):
      c = d.contact[k]
      assert tuple(c.geom) == (g1, g2), ctx
      cp.make_frame(frame[k])
      err = max(abs(dist[k] - c.dist), np.max(np.abs(pos[k] - c.pos)),
                np.max(np.abs(frame[k] - c.frame)))
      assert err <= TOL, (f"contact {k} err {err}: {ctx}\n{dist[k]} {c.dist}\n"
                          f"{pos[k]} {c.pos}\n{frame[k]} {c.frame}")
      maxerr = max(maxerr, err)
    return n, maxerr


def _run_pair(type1, type2, sizes, cases, seed, scale):
  """Compare our function with MuJoCo on random poses; return (max error, contact counts)."""
  rng = np.random.default_rng(seed)
  maxerr = 0.0
  counts = {}
  for size1, size2 in sizes:
    for free_first in (False, True):
      margin1, margin2 = rng.choice([0.0, 0.0, 0.01, 0.1], size=2)
      checker = _Checker(type1, size1, type2, size2, margin1, margin2, free_first)
      for _ in range(cases):
        p1 = rng.uniform(-1, 1, size=3)
        q1 = _random_quat(rng) if rng.integers(2) else _axis_quat(rng)
        off, q2 = _pose2(rng, scale)
        if rng.integers(3) == 0:
          q2 = _quat_mul(q1, q2)  # relative to geom 1: exact alignments in its frame
        n, err = checker.check(p1, q1, p1 + off, q2)
        counts[n] = counts.get(n, 0) + 1
        maxerr = max(maxerr, err)
  return maxerr, counts


_PLANE = (2.0, 2.0, 0.1)
_CASES = {
    # name: (type1, type2, [(size1, size2)], offset scale, required contact counts)
    "plane-sphere": ("plane", "sphere", [(_PLANE, (0.3, 0, 0))], 0.5, {0, 1}),
    "plane-capsule": ("plane", "capsule", [(_PLANE, (0.1, 0.4, 0))], 0.6, {0, 1, 2}),
    "plane-cylinder": ("plane", "cylinder", [(_PLANE, (0.3, 0.2, 0)), (_PLANE, (0.1, 0.5, 0))],
                       0.6, {0, 1, 2, 3, 4}),
    "plane-box": ("plane", "box", [(_PLANE, (0.1, 0.2, 0.3))], 0.5, {0, 1, 2, 4}),
    "sphere-sphere": ("sphere", "sphere", [((0.2, 0, 0), (0.3, 0, 0))], 0.6, {0, 1}),
    "sphere-capsule": ("sphere", "capsule", [((0.2, 0, 0), (0.1, 0.4, 0))], 0.7, {0, 1}),
    "sphere-cylinder": ("sphere", "cylinder", [((0.2, 0, 0), (0.3, 0.2, 0)),
                                               ((0.1, 0, 0), (0.1, 0.4, 0))], 0.6, {0, 1}),
    "sphere-box": ("sphere", "box", [((0.2, 0, 0), (0.1, 0.2, 0.3))], 0.5, {0, 1}),
    "capsule-capsule": ("capsule", "capsule", [((0.1, 0.3, 0), (0.2, 0.4, 0))], 0.6,
                        {0, 1, 2}),
    "capsule-box": ("capsule", "box", [((0.1, 0.3, 0), (0.2, 0.3, 0.4)),
                                       ((0.05, 0.5, 0), (0.3, 0.3, 0.1))], 0.6, {0, 1, 2}),
    "box-box": ("box", "box", [((0.2, 0.3, 0.4), (0.3, 0.2, 0.1)),
                               ((0.5, 0.5, 0.05), (0.2, 0.2, 0.2))], 0.6, {0, 1, 2, 4}),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_pair_matches_mujoco(name):
  """Counts, dist, pos and completed frame of every contact match mj_collision."""
  type1, type2, sizes, scale, required = _CASES[name]
  maxerr, counts = _run_pair(type1, type2, sizes, 300, seed=zlib.crc32(name.encode()), scale=scale)
  print(f"{name}: max err {maxerr:.2e}, contact counts {dict(sorted(counts.items()))}")
  missing = required - set(counts)
  assert not missing, f"poses never produced {missing} contacts: {counts}"


def _make_frame_reference(f):
  """mju_makeFrame in numpy, for the unit test."""
  f = f.copy()
  x = f[:3] / np.linalg.norm(f[:3])
  y = f[3:6]
  if y @ y < 0.25:
    y = np.array([0.0, 1, 0]) if -0.5 < x[1] < 0.5 else np.array([0.0, 0, 1])
  y = y - x * (x @ y)
  y = y / np.linalg.norm(y)
  return np.concatenate([x, y, np.cross(x, y)])


def test_make_frame():
  """Normal only, normal near +-y, and a tangent hint: orthonormal and as mju_makeFrame."""
  rng = np.random.default_rng(0)
  rows = [np.array([0.0, 1, 0, 0, 0, 0, 0, 0, 0]), np.array([0.0, -0.8, 0.6, 0, 0, 0, 0, 0, 0]),
          np.array([2.0, 0, 0, 0.1, 0.1, 0.1, 0, 0, 0]), np.array([0, 0, 1.0, 1, 1, 1, 0, 0, 0])]
  for _ in range(50):
    r = np.zeros(9)
    r[:3] = rng.normal(size=3)
    if rng.integers(2):
      r[3:6] = rng.normal(size=3)
    rows.append(r)
  for r in rows:
    f = r.copy()
    cp.make_frame(f)
    np.testing.assert_allclose(f, _make_frame_reference(r), atol=1e-14)
    np.testing.assert_allclose(f.reshape(3, 3) @ f.reshape(3, 3).T, np.eye(3), atol=1e-14)
  f = np.array([0.0, 0, 1, 1, 0, 0, 0, 0, 0])
  cp.make_frame(f)
  np.testing.assert_array_equal(f, [0, 0, 1, 1, 0, 0, 0, 1, 0])


def test_unhandled_pair():
  """Convex pairs are left to the convex collider: -1."""
  z3, z9 = np.zeros(3), np.eye(3).ravel()
  out = np.zeros(50), np.zeros((50, 3)), np.zeros((50, 9))
  assert cp.collide_primitive(3, 5, z3, z3, z9, z3, z3, z9, 0.0, *out) == -1
  assert cp.collide_primitive(0, 4, z3, z3, z9, z3, z3, z9, 0.0, *out) == -1


def test_capsule_capsule_near_parallel():
  """(Nearly) parallel capsules: MuJoCo 4.0 puts a contact at each end of the axial overlap."""
  rng = np.random.default_rng(7)
  dist = np.zeros(cp._MAXCONPAIR)
  pos = np.zeros((cp._MAXCONPAIR, 3))
  frame = np.zeros((cp._MAXCONPAIR, 9))
  counts = {}
  maxerr = 0.0
  for size1, size2 in [((0.1, 0.3, 0), (0.2, 0.4, 0)), ((0.1, 0.5, 0), (0.05, 0.2, 0))]:
    for margin1 in (0.0, 0.05):
      m = _model("capsule", size1, "capsule", size2, margin1, 0.0, False)
      d = mujoco.MjData(m)
      for _ in range(300):
        q1 = _random_quat(rng)
        q2 = _quat_mul(q1, _tilt_quat(rng, rng.choice([0.0, 1e-9, 1e-6, 5e-5, 2e-4])))
        if rng.integers(2):
          q2 = _quat_mul(q2, np.array([0.0, 1, 0, 0]))  # antiparallel
        rot1 = np.zeros(9)
        mujoco.mju_quat2Mat(rot1, q1)
        off = np.array([*rng.uniform(-0.35, 0.35, 2), rng.uniform(-1, 1)])
        d.mocap_quat[0] = q1
        d.qpos[:3] = rot1.reshape(3, 3) @ off
        d.qpos[3:7] = q2
        mujoco.mj_forward(m, d)
        frame[:] = 0.0
        n = cp.capsule_capsule(m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0], m.geom_size[1],
                               d.geom_xpos[1], d.geom_xmat[1], margin1, dist, pos, frame)
        assert n == d.ncon, f"{n} != {d.ncon}: {q1} {d.qpos[:7]}"
        counts[n] = counts.get(n, 0) + 1
        for k in range(n):
          cp.make_frame(frame[k])
          c = d.contact[k]
          err = max(abs(dist[k] - c.dist), np.max(np.abs(pos[k] - c.pos)),
                    np.max(np.abs(frame[k] - c.frame)))
          assert err <= TOL, f"contact {k}: {dist[k]} {c.dist} {pos[k]} {c.pos}"
          maxerr = max(maxerr, err)
  print(f"near-parallel capsules: max err {maxerr:.2e}, contact counts {counts}")
  assert {0, 1, 2} <= set(counts)


_ID = np.array([1.0, 0, 0, 0])
_C = np.sqrt(0.5)
_C8, _S8 = np.cos(np.pi / 8), np.sin(np.pi / 8)  # 45 degrees
_DEGENERATE = [
    # (type1, size1, type2, size2, p1, q1, p2, q2, expected ncon without margin, -1: any)
    # concentric spheres: normal from the cross product of the z axes, or (1, 0, 0)
    ("sphere", (0.2, 0, 0), "sphere", (0.1, 0, 0), (0, 0, 0), _ID, (0, 0, 0), [_C, _C, 0, 0], 1),
    ("sphere", (0.2, 0, 0), "sphere", (0.1, 0, 0), (0, 0, 0), _ID, (0, 0, 0), _ID, 1),
    # sphere center on a capsule axis; crossing capsule axes
    ("sphere", (0.2, 0, 0), "capsule", (0.1, 0.3, 0), (0, 0, 0.1), _ID, (0, 0, 0), _ID, 1),
    ("capsule", (0.1, 0.3, 0), "capsule", (0.1, 0.3, 0), (0, 0, 0), _ID, (0, 0, 0),
     [_C, _C, 0, 0], 1),
    # sphere at a cylinder's center, on its axis, inside near the side
    ("sphere", (0.1, 0, 0), "cylinder", (0.3, 0.2, 0), (0, 0, 0), _ID, (0, 0, 0), _ID, 1),
    ("sphere", (0.1, 0, 0), "cylinder", (0.3, 0.2, 0), (0, 0, 0.25), _ID, (0, 0, 0), _ID, 1),
    ("sphere", (0.1, 0, 0), "cylinder", (0.3, 0.2, 0), (0.25, 0, 0), _ID, (0, 0, 0), _ID, 1),
    # sphere at a box center and inside near a face
    ("sphere", (0.1, 0, 0), "box", (0.3, 0.2, 0.1), (0, 0, 0), _ID, (0, 0, 0), _ID, 1),
    ("sphere", (0.1, 0, 0), "box", (0.3, 0.2, 0.1), (0.25, 0.01, 0), _ID, (0, 0, 0), _ID, 1),
    # cylinder flat on a plane (3 contacts), upright, lying on its side
    ("plane", (1, 1, 0.1), "cylinder", (0.3, 0.2, 0), (0, 0, 0), _ID, (0, 0, 0.19), _ID, 3),
    ("plane", (1, 1, 0.1), "cylinder", (0.3, 0.2, 0), (0, 0, 0), _ID, (0, 0, 0.29),
     [_C, _C, 0, 0], 2),
    # capsule resting parallel to the plane and to a box face; capsule along a box edge
    ("plane", (1, 1, 0.1), "capsule", (0.1, 0.3, 0), (0, 0, 0), _ID, (0, 0, 0.09),
     [_C, 0, _C, 0], 2),
    ("capsule", (0.1, 0.3, 0), "box", (0.5, 0.5, 0.1), (0, 0, 0.19), [_C, 0, _C, 0],
     (0, 0, 0), _ID, 2),
    ("capsule", (0.1, 0.3, 0), "box", (0.2, 0.2, 0.1), (0.22, 0, 0.19), [_C, _C, 0, 0],
     (0, 0, 0), _ID, -1),
    # capsule through a box along its z edges: MuJoCo finds no contact (ends outside)
    ("capsule", (0.1, 0.3, 0), "box", (0.2, 0.2, 0.1), (0, 0, 0), _ID, (0, 0, 0), _ID, 0),
    # stacked boxes: aligned, equal footprint, rotated 45 degrees (8 contacts), deep overlap
    ("box", (0.2, 0.2, 0.1), "box", (0.2, 0.2, 0.1), (0, 0, 0), _ID, (0, 0, 0.19), _ID, 4),
    ("box", (0.3, 0.3, 0.1), "box", (0.25, 0.25, 0.1), (0, 0, 0), _ID, (0, 0, 0.19),
     [_C8, 0, 0, _S8], 8),
    ("box", (0.2, 0.3, 0.1), "box", (0.1, 0.2, 0.3), (0, 0, 0), _ID, (0.01, 0.02, 0.03), _ID,
     4),
    # incident edges through the reference face corners
    ("box", (0.2, 0.2, 0.1), "box", (0.2 * _C * 2, 0.2 * _C * 2, 0.1), (0, 0, 0), _ID,
     (0, 0, 0.19), [_C8, 0, 0, _S8], 4),
    # crossed edges: box 1 turned 45 degrees about x, box 2 about y, touching edge to edge
    ("box", (0.2, 0.2, 0.2), "box", (0.2, 0.2, 0.2), (0, 0, 0), [_C8, _S8, 0, 0],
     (0, 0, 0.2 * np.sqrt(2) * 2 - 0.01), [_C8, 0, _S8, 0], 1),
]


@pytest.mark.parametrize("case", range(len(_DEGENERATE)))
def test_degenerate_poses(case):
  """Hand-placed poses on the branch boundaries (coincident centers, exact alignments)."""
  type1, size1, type2, size2, p1, q1, p2, q2, expected = _DEGENERATE[case]
  for margin in (0.0, 0.05):
    checker = _Checker(type1, size1, type2, size2, margin, 0.0)
    n, _ = checker.check(np.array(p1, float), np.array(q1, float), np.array(p2, float),
                         np.array(q2, float))
    if margin == 0.0 and expected >= 0:
      assert n == expected


@pytest.mark.parametrize("type1,size1,type2,size2", [
    ("plane", (1, 1, 0.1), "box", (0.1, 0.2, 0.3)),
    ("box", (0.2, 0.3, 0.4), "box", (0.3, 0.2, 0.1)),
    ("sphere", (0.2, 0, 0), "capsule", (0.1, 0.4, 0)),
])
def test_gap_widens_narrowphase_margin(type1, size1, type2, size2):
  """With a geom gap MuJoCo generates contacts out to margin + gap (they are then excluded)."""
  rng = np.random.default_rng(3)
  checker = _Checker(type1, size1, type2, size2, 0.05, 0.02, gap=0.1)
  beyond = 0
  for _ in range(300):
    p1 = rng.uniform(-1, 1, size=3)
    q1 = _random_quat(rng)
    off, q2 = _pose2(rng, 0.8)
    n, _ = checker.check(p1, q1, p1 + off, q2)
    beyond += int(np.any(checker.d.contact.dist[:n] > 0.07))
  assert beyond > 0
