"""General convex narrowphase (engine.collision.convex) against MuJoCo 4.0's contacts.

Each scene holds two geoms on free bodies (or a world plane and a free ellipsoid); random
poses are sent through mujoco.mj_forward and MuJoCo's own geom poses go to collide_convex.
Contacts are compared by count and by dist, pos and the full frame (completed with a local
copy of mju_makeFrame). The pair margin is the sum of the geom margins, as MuJoCo 4.0 uses.
"""
import mujoco
import numba
import numpy as np
import pytest

from numjoco.engine.collision.convex import set_obj, split_work, _work_sizes, collide_convex
from numjoco.engine.collision.gjk import polytope as _polytope
from numjoco.engine.collision.primitive import make_frame

_TOL = 1e-6
_SIZE = {
  "sphere": "0.1", "capsule": "0.1 0.15", "ellipsoid": "0.1 0.15 0.2",
  "cylinder": "0.12 0.1", "box": "0.1 0.12 0.15",
}


def _make_frame(normal):
  """MuJoCo's mju_makeFrame for a normal and no tangent."""
  x = normal / np.linalg.norm(normal)
  y = np.array([0.0, 1.0, 0.0]) if -0.5 < x[1] < 0.5 else np.array([0.0, 0.0, 1.0])
  y = y - x * np.dot(x, y)
  y /= np.linalg.norm(y)
  return np.concatenate([x, y, np.cross(x, y)])


def _model(type1, type2, margin, multiccd=True):
  """Two free geoms, or a tilted world plane and a free geom when type1 is plane."""
  flag = "" if multiccd else '<option><flag multiccd="disable"/></option>'
  if type1 == "plane":
    geom1 = f'<geom type="plane" size="1 1 .1" euler="10 20 30" margin="{margin}"/>'
  else:
    geom1 = (f'<body><freejoint/><geom type="{type1}" size="{_SIZE[type1]}" '
             f'margin="{margin}"/></body>')
  xml = f"""<mujoco>{flag}<worldbody>{geom1}
    <body><freejoint/><geom type="{type2}" size="{_SIZE[type2]}" margin="{margin}"/></body>
    </worldbody></mujoco>"""
  return mujoco.MjModel.from_xml_string(xml)


def _random_qpos(rng, nq):
  """Positions and orientations that put the geoms in deep, shallow or no contact."""
  qpos = np.zeros(nq)
  if nq == 7:  # plane scene: one free body near the plane
    qpos[0:3] = rng.normal(size=3) * [0.1, 0.1, 0.15]
    qpos[3:7] = rng.normal(size=4)
  else:
    qpos[3:7] = rng.normal(size=4)
    qpos[7:10] = rng.normal(size=3) * 0.12
    qpos[10:14] = rng.normal(size=4)
    qpos[10:14] /= np.linalg.norm(qpos[10:14])
  qpos[3:7] /= np.linalg.norm(qpos[3:7])
  return qpos


def _cases(type1, type2, margin, multiccd, ncase, seed):
  """Random poses of the pair (`_random_qpos`), MuJoCo's mj_forward and our collide_convex
  at each: yields (MuJoCo's data, our contact count, dist, pos, frame)."""
  m = _model(type1, type2, margin, multiccd)
  d = mujoco.MjData(m)
  rng = np.random.default_rng(seed)
  pair_margin = float(m.geom_margin[0] + m.geom_margin[1])
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  for _ in range(ncase):
    d.qpos[:] = _random_qpos(rng, m.nq)
    mujoco.mj_forward(m, d)
    frame[:] = 0
    n = collide_convex(m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
                       m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1],
                       pair_margin, m.opt.ccd_iterations, m.opt.ccd_tolerance,
                       m.opt.disableflags, dist, pos, frame)
    yield d, n, dist, pos, frame


def _compare(type1, type2, margin=0.0, multiccd=True, ncase=40, seed=0):
  """Per-case contact counts and max errors against MuJoCo: (ours, theirs, err) lists."""
  out = []
  for d, n, dist, pos, frame in _cases(type1, type2, margin, multiccd, ncase, seed):
    err = 0.0
    for i in range(min(n, d.ncon)):
      c = d.contact[i]
      assert (c.geom1, c.geom2) == (0, 1)  # MuJoCo's order: lower geom type first
      err = max(err, abs(c.dist - dist[i]), np.abs(c.pos - pos[i]).max(),
                np.abs(c.frame - _make_frame(frame[i, :3])).max())
      assert np.all(frame[i, 3:6] == 0)
    out.append((n, d.ncon, err))
  return out


def _assert_exact(results):
  """Every case: same count, errors within _TOL; some contacts and some misses."""
  assert all(n == ncon for n, ncon, _ in results), [(n, c) for n, c, _ in results]
  assert max(e for _, _, e in results) <= _TOL
  assert sum(n > 0 for n, _, _ in results) >= len(results) // 2
  assert any(n == 0 for n, _, _ in results) or len(results) < 20


@pytest.mark.parametrize("margin", [0.0, 0.03])
def test_plane_ellipsoid(margin):
  """mjc_PlaneConvex for an ellipsoid matches MuJoCo to round-off."""
  results = _compare("plane", "ellipsoid", margin, ncase=60, seed=1)
  _assert_exact(results)
  assert max(e for _, _, e in results) < 1e-12


@pytest.mark.parametrize("type1,type2", [
  ("ellipsoid", "ellipsoid"), ("ellipsoid", "cylinder"), ("ellipsoid", "box")])
@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_ellipsoid_pairs(type1, type2, margin):
  """GJK + EPA (deep and shallow) match MuJoCo within 1e-6 for ellipsoid pairs."""
  _assert_exact(_compare(type1, type2, margin))


@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_cylinder_cylinder_single_contact(margin):
  """With multiccd disabled, cylinder-cylinder GJK/EPA contacts match MuJoCo."""
  _assert_exact(_compare("cylinder", "cylinder", margin, multiccd=False))


@pytest.mark.parametrize("type1,type2,multiccd", [
  ("sphere", "ellipsoid", True), ("capsule", "ellipsoid", True),
  ("capsule", "cylinder", False), ("cylinder", "box", False)])
def test_near_pairs(type1, type2, multiccd):
  """Pairs where GJK's iterations are ill-conditioned (a segment or an ellipsoid against a
  near-parallel feature): every contact within 1e-6 of MuJoCo's since GJK follows 4.0's
  binary (x_k as the origin's projection on the simplex, its S1D/S2D and loop checks); they
  differed by up to 1e-4 before."""
  _assert_exact(_compare(type1, type2, 0.0, multiccd, ncase=60))


def _assert_as_ccd(m, d, pair_margin, ref, x1, x2):
  """Our one contact of geoms 0 and 1 is 4.0's mjc_ccd result (ref, x1, x2): the distance and
  the midpoint bit for bit, the normal to round-off."""
  dist, pos, frame = np.zeros(50), np.zeros((50, 3)), np.zeros((50, 9))
  n = collide_convex(m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
                     m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1],
                     pair_margin, m.opt.ccd_iterations, m.opt.ccd_tolerance,
                     m.opt.disableflags, dist, pos, frame)
  assert n == 1
  assert dist[0] == pair_margin + ref
  assert tuple(pos[0]) == tuple((np.array(x1) + np.array(x2)) * 0.5)
  normal = np.subtract(x1, x2)
  np.testing.assert_allclose(frame[0, :3], normal / np.linalg.norm(normal), atol=1e-15)


@pytest.mark.parametrize("type1,type2", [
  ("sphere", "ellipsoid"), ("sphere", "cylinder"), ("sphere", "box"), ("capsule", "capsule"),
  ("capsule", "ellipsoid"), ("capsule", "cylinder"), ("capsule", "box")])
@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_gjk_as_mujoco_bit_for_bit(type1, type2, margin):
  """Shallow contacts of a sphere or capsule, which GJK on its core point or segment decides
  (no EPA): the distance and the contact point are the very bits of MuJoCo 4.0's own mjc_ccd,
  called from its library (tests/conformance/mjinternal.py), the normal to round-off."""
  from tests.conformance import mjinternal
  m = _model(type1, type2, margin, multiccd=False)
  d = mujoco.MjData(m)
  rng = np.random.default_rng(11)
  pair_margin = float(m.geom_margin[0] + m.geom_margin[1])
  # the radii and margins GJK on the cores leaves out: deeper is EPA's
  cores = m.geom_size[0, 0] + m.geom_size[1, 0] * (type2 in ("sphere", "capsule")) + pair_margin
  shallow = 0
  for _ in range(80):
    d.qpos[:] = _random_qpos(rng, m.nq)
    mujoco.mj_forward(m, d)
    ref, x1, x2 = mjinternal.ccd(m, d, 0, 1, pair_margin)
    if not -cores + m.opt.ccd_tolerance < ref < 0:   # deep (EPA) or apart
      continue
    _assert_as_ccd(m, d, pair_margin, ref, x1, x2)
    shallow += 1
  assert shallow >= 10, f"only {shallow} shallow contacts"


def _multi_stats(type1, type2, margin, ncase, seed):
  """Count agreement and per-case accuracy of multi-contact results against MuJoCo."""
  cases = count_ok = multi = exact = as_set = 0
  for d, n, dist, pos, frame in _cases(type1, type2, margin, True, ncase, seed):
    if n == 0 and d.ncon == 0:
      continue
    cases += 1
    if n != d.ncon:
      continue
    count_ok += 1
    if n < 2:
      continue
    multi += 1

    def err(i, j):
      c = d.contact[j]
      return max(abs(c.dist - dist[i]), np.abs(c.pos - pos[i]).max(),
                 np.abs(c.frame - _make_frame(frame[i, :3])).max())

    exact += max(err(i, i) for i in range(n)) <= _TOL
    as_set += all(min(err(i, j) for i in range(n)) <= _TOL for j in range(n))
  return cases, count_ok, multi, exact, as_set


@pytest.mark.parametrize("type2", ["box", "cylinder"])
@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_cylinder_multicontact(type2, margin):
  """Default flags: MuJoCo 4.0 clips a cylinder side lying on a box face or on a cylinder
  cap (and a box edge lying on a cap) into two contacts. Every contact list equals MuJoCo's
  to 1e-6, in order (before the cylinder's multicontact followed 4.0's binary, 3 in 4 were in
  order: where the clipped segment yields two copies of one point, MuJoCo's choice between
  them is decided by its round-off)."""
  cases, count_ok, multi, exact, as_set = _multi_stats("cylinder", type2, margin, 300, 7)
  assert cases > 150 and multi >= 10
  assert count_ok == cases
  assert exact == multi


def _two_geoms(type2, size2, qpos, margin):
  """A cylinder (.05 .1) and a second geom on free bodies at qpos, after mj_forward."""
  xml = f"""<mujoco><worldbody>
    <body><freejoint/><geom type="cylinder" size=".05 .1" margin="{margin}"/></body>
    <body><freejoint/><geom type="{type2}" size="{size2}" margin="{margin}"/></body>
    </worldbody></mujoco>"""
  m = mujoco.MjModel.from_xml_string(xml)
  d = mujoco.MjData(m)
  d.qpos[:] = qpos
  mujoco.mj_normalizeQuat(m, d.qpos)
  mujoco.mj_forward(m, d)
  return m, d


@pytest.mark.parametrize("type2,size2,spin,quat2", [
  ("box", ".3 .3 .1", 0.3, [1, 0, 0, 0.1]), ("cylinder", ".3 .1", 0.2, [1, 0.01, 0, 0.3])])
@pytest.mark.parametrize("tilt", [0.0, 0.02, -0.03])
@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_cylinder_lying_on_face(type2, size2, spin, quat2, tilt, margin):
  """A cylinder lying on a large box face or cylinder cap: MuJoCo's two contacts at the ends
  of the side segment, to round-off; one contact with multiccd disabled."""
  quat1 = [np.cos(0.785), np.sin(0.785) * np.cos(tilt), np.sin(0.785) * np.sin(tilt), spin]
  qpos = np.array([0.01, 0.02, 0.0] + quat1 + [0.03, -0.01, -0.14] + quat2)
  m, d = _two_geoms(type2, size2, qpos, margin)
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  args = (m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
          m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1], 2 * margin,
          m.opt.ccd_iterations, m.opt.ccd_tolerance)
  n = collide_convex(*args, m.opt.disableflags, dist, pos, frame)
  assert n == d.ncon == 2
  for i in range(2):
    c = d.contact[i]
    assert abs(c.dist - dist[i]) < 1e-12
    np.testing.assert_allclose(pos[i], c.pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_make_frame(frame[i, :3]), c.frame, rtol=0, atol=1e-12)
  # multiccd disabled: the single EPA contact
  flags = int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)
  assert collide_convex(*args, flags, dist, pos, frame) == 1


@pytest.mark.parametrize("x2,tilt", [(0.19, 0.0), (0.195, 0.0), (0.19, 0.01), (0.185, -0.02)])
def test_parallel_cylinders_side_by_side(x2, tilt):
  """Parallel cylinders touching side to side with coplanar caps: MuJoCo 4.0 keeps EPA's
  single contact across the sides (the single-shot multicontact does not take the caps as
  facing each other)."""
  xml = f"""<mujoco><worldbody>
    <body pos="0 0 .5"><freejoint/><geom type="cylinder" size=".1" fromto="0 -.03 0 0 .03 0"/>
    </body>
    <body pos="{x2} 0 .5" euler="0 {tilt} 0"><freejoint/>
      <geom type="cylinder" size=".1" fromto="0 -.03 0 0 .03 0"/></body>
    </worldbody></mujoco>"""
  m = mujoco.MjModel.from_xml_string(xml)
  d = mujoco.MjData(m)
  mujoco.mj_forward(m, d)
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  n = collide_convex(m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
                     m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1], 0.0,
                     m.opt.ccd_iterations, m.opt.ccd_tolerance, m.opt.disableflags, dist,
                     pos, frame)
  assert n == d.ncon == 1
  c = d.contact[0]
  assert abs(c.dist - dist[0]) < _TOL
  np.testing.assert_allclose(pos[0], c.pos, rtol=0, atol=_TOL)
  np.testing.assert_allclose(_make_frame(frame[0, :3]), c.frame, rtol=0, atol=_TOL)


def test_separated_geoms_have_no_contact():
  """Far-apart geoms give no contact, and a deep overlap gives one with dist < 0."""
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  eye = np.eye(3).ravel()
  size = np.array([0.1, 0.15, 0.2])
  args = (35, 1e-6, 0, dist, pos, frame)
  far = collide_convex(4, size, np.zeros(3), eye, 5, size, np.array([1.0, 0, 0]), eye, 0.0,
                       *args)
  near = collide_convex(4, size, np.zeros(3), eye, 5, size, np.array([0.15, 0, 0]), eye,
                        0.0, *args)
  assert far == 0
  assert near == 1 and dist[0] < 0
  # EPA stops at ccd_tolerance on the depth, so the normal is only good to ~1e-3 here
  np.testing.assert_allclose(frame[0, :3], [1.0, 0.0, 0.0], atol=5e-3)


@pytest.mark.parametrize("type1,type2", [
  ("sphere", "ellipsoid"), ("ellipsoid", "ellipsoid"), ("ellipsoid", "box"),
  ("cylinder", "cylinder")])
def test_coincident_centers(type1, type2):
  """Geoms sharing a center still collide, with MuJoCo's contact."""
  m = _model(type1, type2, 0.0, multiccd=False)
  d = mujoco.MjData(m)
  rng = np.random.default_rng(3)
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  for _ in range(3):
    qpos = _random_qpos(rng, m.nq)
    qpos[7:10] = qpos[0:3]
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    n = collide_convex(m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
                       m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1],
                       0.0, m.opt.ccd_iterations, m.opt.ccd_tolerance, m.opt.disableflags,
                       dist, pos, frame)
    assert n == d.ncon == 1
    c = d.contact[0]
    assert abs(c.dist - dist[0]) <= _TOL
    assert np.abs(c.pos - pos[0]).max() <= _TOL
    assert np.abs(c.frame - _make_frame(frame[0, :3])).max() <= _TOL


# ------------------------------------------------ flat faces: caps and capsules (MuJoCo 4.0)

def _scene(geom1, geom2, pos1, quat1, quat2, margin=0.0):
  """geom1 on a free body at pos1/quat1 over geom2 at the origin/quat2, after mj_forward."""
  xml = f"""<mujoco><worldbody>
    <body><freejoint/><geom {geom1} margin="{margin}"/></body>
    <body><freejoint/><geom {geom2} margin="{margin}"/></body>
    </worldbody></mujoco>"""
  m = mujoco.MjModel.from_xml_string(xml)
  d = mujoco.MjData(m)
  d.qpos[:] = np.concatenate([pos1, quat1, [0, 0, 0], quat2])
  mujoco.mj_normalizeQuat(m, d.qpos)
  mujoco.mj_forward(m, d)
  return m, d


def _collide(m, d, flags=None):
  """Our contacts for the scene's geom pair: (n, dist, pos, frame)."""
  dist = np.zeros(50)
  pos = np.zeros((50, 3))
  frame = np.zeros((50, 9))
  n = collide_convex(m.geom_type[0], m.geom_size[0], d.geom_xpos[0], d.geom_xmat[0],
                     m.geom_type[1], m.geom_size[1], d.geom_xpos[1], d.geom_xmat[1],
                     float(m.geom_margin[0] + m.geom_margin[1]), m.opt.ccd_iterations,
                     m.opt.ccd_tolerance, m.opt.disableflags if flags is None else flags,
                     dist, pos, frame)
  return n, dist, pos, frame


def _max_error(m, d):
  """Our contact count, and the largest dist/pos/frame error against MuJoCo's contacts in
  order (inf when the counts differ)."""
  n, dist, pos, frame = _collide(m, d)
  if n != d.ncon:
    return n, np.inf
  err = 0.0
  for i in range(n):
    c = d.contact[i]
    err = max(err, abs(c.dist - dist[i]), np.abs(c.pos - pos[i]).max(),
              np.abs(c.frame - _make_frame(frame[i, :3])).max())
  return n, err


def _quat(yaw, tilt=0.0, tilt_axis=0.0):
  """Rotation by `yaw` degrees about z after `tilt` degrees about the horizontal axis at
  `tilt_axis` degrees from x."""
  q = np.zeros(4)
  a = np.radians(tilt_axis)
  qt = np.zeros(4)
  mujoco.mju_axisAngle2Quat(qt, [np.cos(a), np.sin(a), 0], np.radians(tilt))
  qy = np.zeros(4)
  mujoco.mju_axisAngle2Quat(qy, [0, 0, 1], np.radians(yaw))
  mujoco.mju_mulQuat(q, qt, qy)
  return q


_CYL = 'type="cylinder" size=".1 .2"'


@pytest.mark.parametrize("geom2,pos1,yaw,tilt,margin,ncon", [
  # the cap inside a large face: the 16-gon reduced to four of its vertices
  ('type="box" size=".3 .3 .1"', [0.01, 0.02, 0.299], 17, 0, 0.0, 4),
  ('type="box" size=".3 .3 .1"', [0.01, 0.02, 0.299], 17, 0, 0.005, 4),
  # separated, within the margin
  ('type="box" size=".3 .3 .1"', [0.01, 0.02, 0.302], 17, 0, 0.005, 4),
  # tilted within the face tolerance: the high side pruned
  ('type="box" size=".3 .3 .1"', [0.01, 0.02, 0.299], 40, 4.5, 0.0, 4),
  # overhanging the box's edge
  ('type="box" size=".3 .3 .1"', [0.35, 0.02, 0.299], 17, 0, 0.0, 4),
  ('type="box" size=".3 .3 .1"', [0.35, 0.33, 0.299], 17, 0, 0.0, 4),
  # a small face inside the cap: its corners, no reduction
  ('type="box" size=".05 .04 .1"', [0.01, 0.02, 0.299], 17, 0, 0.0, 4),
  ('type="box" size=".05 .04 .1"', [0.01, 0.02, 0.299], 17, 2.0, 0.0, 3),
  # cap on cap
  ('type="cylinder" size=".3 .1"', [0.25, 0.02, 0.299], 17, 0, 0.0, 4),
  ('type="cylinder" size=".06 .1"', [0.01, 0.02, 0.299], 17, 0, 0.0, 4),
  ('type="cylinder" size=".06 .1"', [0.01, 0.02, 0.302], 17, 0, 0.005, 4),
])
def test_cap_on_face(geom2, pos1, yaw, tilt, margin, ncon):
  """A cylinder standing on a box face or on another cylinder's cap: MuJoCo 4.0's contacts
  from the cap's 16-gon clipping the other face (projected on the cap's plane), at most four,
  in MuJoCo's order; one contact with multiccd disabled."""
  m, d = _scene(_CYL, geom2, pos1, _quat(yaw, tilt, 30), [1, 0, 0, 0], margin)
  n, err = _max_error(m, d)
  assert n == d.ncon == ncon
  assert err <= _TOL
  assert _collide(m, d, int(mujoco.mjtDisableBit.mjDSBL_MULTICCD))[0] == 1


@pytest.mark.parametrize("kind", ["box", "cylinder"])
@pytest.mark.parametrize("margin", [0.0, 0.005])
def test_cap_on_face_random(kind, margin):
  """Random caps on faces (yaw, offset, tilt within the face tolerance, depth): every contact
  list equals MuJoCo's to 1e-6 in order (it did in 3 of 4 to 7 of 8 of the cases with several
  contacts before the cylinder's multicontact followed 4.0's binary: where the clipped
  polygon has several quadrilaterals of nearly equal area, the four kept depend on its
  round-off)."""
  rng = np.random.default_rng(11)
  cases = count_ok = multi = exact = 0
  for _ in range(100):
    quat1 = _quat(rng.uniform(0, 360), rng.uniform(0, 4) * rng.integers(0, 2),
                  rng.uniform(0, 360))
    pos1 = [*rng.uniform(-0.2, 0.2, 2), 0.299 + rng.uniform(-0.003, 0.002)]
    size = rng.choice([0.3, 0.12, 0.06, 0.09])
    geom2 = (f'type="box" size="{size} {rng.choice([0.3, 0.12, 0.06])} .1"' if kind == "box"
             else f'type="cylinder" size="{size} .1"')
    m, d = _scene(_CYL, geom2, pos1, quat1, _quat(rng.uniform(0, 360)), margin)
    n, err = _max_error(m, d)
    if n == 0 and d.ncon == 0:
      continue
    cases += 1
    count_ok += n == d.ncon
    if d.ncon > 2:
      multi += 1
      exact += err <= _TOL
  assert cases >= 50 and multi >= 40
  assert count_ok == cases
  assert exact == multi, f"{exact} of {multi}"


@pytest.mark.parametrize("geom1,geom2", [
    (_CYL, 'type="box" size=".3 .25 .1"'), (_CYL, 'type="cylinder" size=".25 .1"'),
    ('type="capsule" size=".05 .15"', 'type="cylinder" size=".25 .1"')])
@pytest.mark.parametrize("margin", [0.0, 0.005])
def test_multicontact_as_mujoco_bit_for_bit(geom1, geom2, margin):
  """Cylinders and capsules lying on a face (a cap down, or the side or the capsule along the
  face; level, tilted by 1e-6 or by up to 3 degrees, slightly in or, with a margin, just
  off): our contacts equal MuJoCo 4.0's to the bit, count, dist, pos and normal. Its
  multicontact's cylinder and capsule branches have no published source; they were read from
  its binary (the cap's 16-gon from its cos/sin tables, the side from the support point on
  the cap's rim, a capsule's segment through its witness point). 60 poses each, most with
  several contacts; the frame completed by mju_makeFrame as mj_collision does."""
  rng = np.random.default_rng(3)
  cases = multi = 0
  for trial in range(60):
    side = trial % 2 == 1 or "capsule" in geom1
    tilt = [0.0, 1e-4 * rng.uniform(-1, 1), rng.uniform(-3, 3)][trial % 3]
    quat1 = _quat(rng.uniform(0, 360), (90 if side else 0) + tilt, rng.uniform(0, 360))
    if "capsule" in geom1:
      quat1 = _quat(rng.uniform(0, 360), 90 + tilt, 0)
      up = 0.05
    else:
      up = 0.1 if side else 0.2
    pos1 = [*rng.uniform(-0.2, 0.2, 2), 0.1 + up + rng.uniform(-0.004, 0.004 if margin else 0)]
    m, d = _scene(geom1, geom2, pos1, quat1, _quat(rng.uniform(0, 360)), margin)
    if d.ncon == 0:
      continue
    n, dist, pos, frame = _collide(m, d)
    cases += 1
    multi += d.ncon > 1
    assert n == d.ncon, f"trial {trial}: {n} contacts, MuJoCo {d.ncon}"
    for i in range(n):
      c = d.contact[i]
      assert dist[i] == c.dist and (pos[i] == c.pos).all(), (
          f"trial {trial} contact {i}: {dist[i]} {pos[i]} vs {c.dist} {c.pos}")
      full = np.zeros(9)
      full[:3] = frame[i, :3]
      make_frame(full)   # as the driver and mj_collision complete the frame
      assert (full == c.frame).all(), f"trial {trial} contact {i}: {full} vs {c.frame}"
  assert cases >= 40 and multi >= 25, (cases, multi)


_CAPSULE = 'type="capsule" size=".05 .15"'


@pytest.mark.parametrize("pos1,tilt,margin,ncon", [
  ([0.01, 0.02, 0.149], 0, 0.0, 2),
  ([0.25, 0.02, 0.149], 0, 0.0, 2),      # over the cap's rim
  ([0.01, 0.02, 0.152], 0, 0.005, 2),    # within the margin
  ([0.01, 0.02, 0.149], 2, 0.0, 1),      # far end above the cap
  ([0.01, 0.02, 0.149], 2, 0.02, 2),
  ([0.01, 0.02, 0.149], -4.9, 0.02, 2),
  ([0.01, 0.02, 0.149], 5.2, 0.02, 1),   # past the edge tolerance
])
def test_capsule_on_cap(pos1, tilt, margin, ncon):
  """A capsule lying on a cylinder's cap: MuJoCo 4.0 clips its segment by the cap (two
  contacts, or one where the other end is above the cap beyond the margin)."""
  m, d = _scene(_CAPSULE, 'type="cylinder" size=".3 .1"', pos1, _quat(17, 90 + tilt, 107),
                [1, 0, 0, 0], margin)
  n, err = _max_error(m, d)
  assert n == d.ncon == ncon
  assert err <= _TOL


def _simplices(n):
  """n random segments and triangles of the GJK simplex kinds that decide a contact: generic,
  short or rounded edges, near-collinear and collinear triangles."""
  rng = np.random.default_rng(7)
  for t in range(n):
    kind = t % 5
    a, b, c = rng.normal(size=(3, 3)) * 0.1
    if kind == 1:
      b = a + rng.normal(size=3) * 1e-9
    elif kind == 2:
      a, b = np.round(a, 3), np.round(b, 3)
    elif kind == 3:
      c = a + (b - a) * rng.uniform(-0.5, 1.5) + rng.normal(size=3) * 1e-12
    elif kind == 4:
      c = a + (b - a) * rng.uniform(0, 1)
    yield kind, a, b, c


def test_subdistance_as_mujoco_bit_for_bit():
  """GJK's distance subalgorithm on segments and triangles (S1D, S2D) gives the very numbers of
  MuJoCo 4.0's own S1D/S2D, called from its library (tests/conformance/mjinternal.py): 4.0
  changed both after our reference source (a segment shorter than 1e-15, the far end beyond
  s1, signs tested against the edge cross product, every edge of a degenerate triangle), and
  a last-bit difference in them turns a later GJK iteration another way."""
  from numjoco.engine.collision import gjk
  from tests.conformance import mjinternal
  ends = {(0.0, 1.0): 0, (1.0, 0.0): 0}
  for kind, a, b, c in _simplices(5000):
    lam = mjinternal.s1d(a, b)
    assert gjk.s1d(a, b) == lam, f"S1D kind {kind}: {a}, {b}"
    assert gjk.s2d(a, b, c) == mjinternal.s2d(a, b, c), f"S2D kind {kind}: {a}, {b}, {c}"
    if lam in ends:
      ends[lam] += 1
  assert min(ends.values()) > 100, f"the segments miss an end case: {ends}"


def _polytope_case(rng, kind):
  """Poses and support directions for one EPA start: the geoms overlapping (concentric, or
  offset), the directions spread on a plane, nearly opposite (the origin near an edge), along
  axes (flat faces), or random; 2, 3 or 4 of them."""
  def unit(v):
    return v / np.linalg.norm(v)
  qpos = np.zeros(14)
  for b in range(2):
    qpos[7 * b + 3:7 * b + 7] = unit(rng.normal(size=4))
    if rng.random() < 0.3:
      qpos[7 * b:7 * b + 3] = 0.0 if rng.random() < 0.5 else rng.normal(size=3) * 1e-9
    else:
      qpos[7 * b:7 * b + 3] = rng.uniform(-0.05, 0.05, 3) * rng.choice([1, 4])
  mode = rng.random()
  if kind == 2:
    a = unit(rng.normal(size=3))
    dirs = [a, -a + rng.choice([0.0, 1e-9, 1e-4, 0.3]) * unit(rng.normal(size=3))]
  elif kind == 3:
    nrm = unit(rng.normal(size=3))
    a0 = unit(np.cross(nrm, rng.normal(size=3)))
    b0 = np.cross(nrm, a0)
    if mode < 0.4:
      angs = [0, 2.0944 + rng.normal() * 0.3, 4.1888 + rng.normal() * 0.3]
    elif mode < 0.7:   # nearly a segment: the origin near an edge
      eps = rng.choice([0.0, 10 ** rng.uniform(-8, -1)])
      angs = [0, np.pi + rng.normal() * eps, rng.normal() * eps + rng.choice([0, np.pi])]
    else:
      angs = rng.uniform(0, 6.3, 3)
    dirs = [np.cos(t) * a0 + np.sin(t) * b0 + rng.normal() * 0.05 * nrm for t in angs]
  else:
    dirs = [unit(v) for v in rng.normal(size=(4, 3))]
    dirs[3] = unit(-(dirs[0] + dirs[1] + dirs[2]) + rng.normal(size=3) * 0.3)
  if rng.random() < 0.2:   # along an axis (box faces)
    ax = np.eye(3)[rng.integers(3)] * rng.choice([-1, 1])
    dirs = [ax * rng.choice([-1, 1]) + rng.choice([0, 1e-6, 0.2]) * unit(rng.normal(size=3))
            for _ in dirs]
  return qpos, [tuple(unit(np.asarray(v, float))) for v in dirs]


@numba.njit(cache=False)
def _our_polytope(fbuf, ibuf, niter, types, sizes, poss, mats, margin, tolerance, sxin, siin):
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = split_work(fbuf, ibuf, niter)
  for k in range(2):
    set_obj(objs, objt, k, types[k], sizes[k], poss[k], mats[k], margin)
  ns = sxin.shape[0]
  sx[:ns] = sxin
  si[:ns] = siin
  return _polytope(pt, cnt, ctr, sx, si, objs, objt, tolerance, ns)


@pytest.mark.parametrize("kind", [2, 3, 4])
def test_polytope_as_mujoco_bit_for_bit(kind):
  """EPA's initial polytope from a 2-, 3- or 4-vertex simplex (MuJoCo 4.0's polytope2/3/4,
  which hand over to each other, recover a hexahedron around an edge or build a tetrahedron,
  and swap in a tilted support): the status code, the vertices, faces, their planes and the
  centre equal those of 4.0's own static functions, called from its library
  (tests/conformance/mjinternal.polytope), on the same supports of box, ellipsoid, capsule,
  cylinder and sphere pairs."""
  from tests.conformance import mjinternal
  rng = np.random.default_rng(kind)
  shapes = ["box", "ellipsoid", "capsule", "cylinder", "sphere"]
  niter = 35
  nfloat, nint = _work_sizes(niter)
  rets = set()
  for case in range(150):
    t1, t2 = rng.choice(shapes, 2)
    margin = float(rng.choice([0.0, 0.0, 0.01]))
    tolerance = float(rng.choice([1e-6, 1e-3, 1e-10]))
    m = _model(t1, t2, margin)
    d = mujoco.MjData(m)
    qpos, dirs = _polytope_case(rng, kind)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    ref = mjinternal.polytope(m, d, 0, 1, margin, tolerance, dirs)
    sxin = np.array([np.r_[np.subtract(a, b), a, b] for a, b, _, _ in ref["simplex"]])
    siin = np.array([[i1, i2] for _, _, i1, i2 in ref["simplex"]], dtype=np.int64)
    fbuf, ibuf = np.zeros(nfloat), np.zeros(nint, dtype=np.int64)
    ret = _our_polytope(fbuf, ibuf, niter, m.geom_type.astype(np.int64), m.geom_size,
                        d.geom_xpos, d.geom_xmat, margin, tolerance, sxin, siin)
    what = f"case {case} {t1}-{t2}"
    assert ret == ref["ret"], what
    rets.add(ret)
    objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = split_work(fbuf, ibuf, niter)
    pv, pvi, fv, fd2, fvert, fadj = pt[:6]
    if ret in (4, 5, 6):   # given up before any face
      continue
    assert (cnt[0], cnt[1]) == (ref["nverts"], ref["nfaces"]), what
    assert tuple(ctr) == ref["center"], what
    for i, (v, v1, v2, i1, i2) in enumerate(ref["verts"][:ref["nverts"]]):
      assert tuple(pv[i]) == v + v1 + v2, f"{what} vertex {i}"
    for i, (a, b, c, adj, plane, dist2) in enumerate(ref["faces"]):
      assert tuple(fvert[i]) == (a, b, c) and tuple(fadj[i]) == adj, f"{what} face {i}"
      if dist2 != 0.0 or fd2[i] != 0.0:   # (a degenerate face's plane is left unwritten)
        assert tuple(fv[i]) == plane and fd2[i] == dist2, f"{what} face {i} plane"
    assert cnt[2] == ref["nmap"], what
  assert 0 in rets and len(rets) >= 2, f"only status codes {rets}: the cases miss the paths"


@pytest.mark.parametrize("type1,type2", [
  ("ellipsoid", "ellipsoid"), ("cylinder", "ellipsoid"), ("box", "ellipsoid"),
  ("cylinder", "cylinder"), ("box", "cylinder"), ("capsule", "ellipsoid"),
  ("sphere", "ellipsoid"), ("box", "box"), ("capsule", "box")])
@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_epa_as_mujoco_bit_for_bit(type1, type2, margin):
  """Deep contacts, which EPA decides: the distance and the contact point are the very bits of
  MuJoCo 4.0's own mjc_ccd (its polytope start, horizon threshold, stopping rule and
  barycentric witness points, read from its library), the normal to round-off."""
  from tests.conformance import mjinternal
  m = _model(type1, type2, margin, multiccd=False)
  d = mujoco.MjData(m)
  rng = np.random.default_rng(12)
  pair_margin = float(m.geom_margin[0] + m.geom_margin[1])
  deep = 0
  for _ in range(40):
    d.qpos[:] = _random_qpos(rng, m.nq)
    mujoco.mj_forward(m, d)
    ref, x1, x2 = mjinternal.ccd(m, d, 0, 1, pair_margin)
    if not ref < -0.02:
      continue
    _assert_as_ccd(m, d, pair_margin, ref, x1, x2)
    deep += 1
  assert deep >= 10, f"only {deep} deep contacts"
