"""Analytic narrowphase (engine.collision_primitive) against MuJoCo's mj_collision.

Each scene has two geoms: the lower-type one on a mocap body, the other on a free body. Random
poses are set, MuJoCo runs mj_forward, and our pair function is called with MuJoCo's own
geom_xpos, geom_xmat, geom_size and pair margin; contacts are compared in MuJoCo's order.
"""
import zlib

import mujoco
import numpy as np
import pytest

from engine import collision_primitive as cp

TOL = 1e-9
_TYPES = {"plane": 0, "sphere": 2, "capsule": 3, "cylinder": 5, "box": 6}


def _model(type1, size1, type2, size2, margin1, margin2, free_first):
  """Two-geom scene; free_first puts the higher-type (free) geom first in the geom list."""
  def s(v):
    return " ".join(repr(float(x)) for x in v)
  mocap = (f'<body name="a" mocap="true"><geom name="g1" type="{type1}" size="{s(size1)}" '
           f'margin="{margin1}"/></body>')
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


def _run_pair(type1, type2, sizes, cases, seed, scale):
  """Compare our function with MuJoCo on random poses; return (max error, contact counts)."""
  rng = np.random.default_rng(seed)
  t1, t2 = _TYPES[type1], _TYPES[type2]
  dist = np.zeros(cp._MAXCONPAIR)
  pos = np.zeros((cp._MAXCONPAIR, 3))
  frame = np.zeros((cp._MAXCONPAIR, 9))
  maxerr = 0.0
  counts = {}
  for size1, size2 in sizes:
    for free_first in (False, True):
      margin1, margin2 = rng.choice([0.0, 0.0, 0.01, 0.1], size=2)
      m = _model(type1, size1, type2, size2, margin1, margin2, free_first)
      d = mujoco.MjData(m)
      # MuJoCo puts the lower type first, and for equal types the lower geom id
      g1, g2 = (1, 0) if free_first and t1 != t2 else (0, 1)
      # MuJoCo 4 passes the SUM of the two geom margins (plus gaps, zero here), not the max
      margin = m.geom_margin[g1] + m.geom_margin[g2]
      for _ in range(cases):
        p1 = rng.uniform(-1, 1, size=3)
        q1 = _random_quat(rng) if rng.integers(2) else _axis_quat(rng)
        off, q2 = _pose2(rng, scale)
        if rng.integers(3) == 0:
          q2 = _quat_mul(q1, q2)  # relative to geom 1: exact alignments in its frame
        d.mocap_pos[0] = p1
        d.mocap_quat[0] = q1
        d.qpos[:3] = p1 + off
        d.qpos[3:7] = q2
        mujoco.mj_forward(m, d)
        frame[:] = 0.0
        n = cp.collide_primitive(t1, t2, m.geom_size[g1], d.geom_xpos[g1], d.geom_xmat[g1],
                                 m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2], margin,
                                 dist, pos, frame)
        ctx = f"{type1}-{type2} size {size1} {size2} q1 {q1} p2 {d.qpos[:7]} margin {margin}"
        assert n == d.ncon, f"ncon {n} != {d.ncon}: {ctx}"
        counts[n] = counts.get(n, 0) + 1
        for k in range(n):
          c = d.contact[k]
          assert tuple(c.geom) == (g1, g2), ctx
          cp.make_frame(frame[k])
          err = max(abs(dist[k] - c.dist), np.max(np.abs(pos[k] - c.pos)),
                    np.max(np.abs(frame[k] - c.frame)))
          assert err <= TOL, f"contact {k} err {err}: {ctx}\n{dist[k]} {c.dist}\n" \
                             f"{pos[k]} {c.pos}\n{frame[k]} {c.frame}"
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
