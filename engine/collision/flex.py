"""Flex collision detection, as MuJoCo 4.0's flex parts of engine_collision_driver.c and
engine_collision_flex.c: plane : vertex, geom : element, element : element (other flex and
self-collision) and 4.0's barycentric contact weights. Unlike the published source, MuJoCo 4.0
keeps every flex contact of a pair (no filterFlexContacts limit of mjMAXCONPAIR).

How the driver calls it (`m`, `d` are anything with MuJoCo's field names as attributes: the
engine's Model/Data structrefs, or the namedtuples of tests/test_collision_flex.py):

- body : flex. For every bodyflex pair (b, nbody + f) the broadphase passes, in MuJoCo's
  signature order (after the body : body pairs with the same first body b, since
  nbody + f > every body id), and which passes the bodyflex bitmask (`can_collide_body_flex`)
  and the exclude list: `collide_body_flex(m, d, b, f)`. It collides b's plane geoms with
  f's vertices, b's other geoms with f's elements, sorts its contacts by (geom, element or vertex) as 4.0's
  midphase path does.
- flex : flex (f1 < f2, after the body pairs): `collide_flex_flex(m, d, f1, f2)`.
- self-collision, after every pair: `collide_flex_self(m, d, f)` for each flex.

Each appends to d.contact_* at d.ncon[0] and advances it; a full buffer drops the pair's extra
contacts (warning CONTACTFULL). Fields written besides the geom contact's ones:
contact_geom, contact_flex, contact_elem, contact_vert (nconmax, 2) int32, as mjContact's
geom[2], flex[2], elem[2], vert[2]; contact_geom1/geom2 are geom[0]/geom[1] (-1 for a flex
side). Scratch: d.col_dist (50,), d.col_pos (50, 3), d.col_frame (50, 9) as the driver's.

Model fields read: the flex_* arrays by 4.0's names (flex_dim, flex_vertadr, flex_vertnum,
flex_elemadr, flex_elemnum, flex_elemdataadr, flex_elem, flex_vertbodyid, flex_radius,
flex_margin, flex_gap, flex_contype, flex_conaffinity, flex_priority, flex_condim,
flex_solmix, flex_solref, flex_solimp, flex_friction, flex_rigid, flex_selfcollide,
flex_activelayers, flex_elemlayer, flex_bvhadr), geom_* contact fields,
body_geomadr/body_geomnum, body_dofnum, body_weldid, opt_disableflags, opt_ccd_iterations,
opt_ccd_tolerance and the opt override fields; d.flexvert_xpos, d.geom_xpos,
d.geom_xmat.

`contact_weights(m, d, c, side, vert, weight)` gives the flex vertices (global ids) and
weights a contact's Jacobian uses on one side (4.0: barycentric coordinates of the element
point closest to the contact; 1 on the vertex of a vertex contact).

General convex geom : element and element : element pairs go through our GJK/EPA (MuJoCo's
mjc_ConvexElem; not on the libccd path, nativeccd disabled, where they give no contacts);
sphere/capsule : tetrahedron are 4.0's analytic pair. Not here yet: mesh, height field and
SDF : flex (load_model refuses them), interpolated flexes, vertex : element self-contacts.
"""
import math

import numpy as np

from numjoco.engine import constraint as cn
from numjoco.engine.collision import convex as cvx
from numjoco.engine.collision import hfield as hf
from numjoco.engine.collision import libccd as ccdlib
from numjoco.engine.collision import primitive as prim
from numjoco.engine.collision import flex_mid as mid
from numjoco.engine import math as mm
from numjoco.engine.flex_contact import closest_triangle, row3, contact_weights   # noqa: F401
from numjoco.engine._borrow import borrowed as _b
from numjoco.engine._jit import inline
from numjoco.engine.smooth import jit
from numjoco.engine.types import mjtWarning
from numjoco.engine._sig import unit, M, D, i8, NEEDS_FLEX
from numjoco.engine.types import MINVAL as _MINVAL
from numjoco.engine.types import MAXCONPAIR as _MAXCONPAIR

_CONTACTFULL = int(mjtWarning.CONTACTFULL)
_PLANE, _HFIELD, _SPHERE, _CAPSULE, _BOX, _MESH, _SDF = 0, 1, 2, 3, 6, 7, 8
_DSBL_NATIVECCD = 1 << 17
_FLEXSELF_NONE, _FLEXSELF_NARROW, _FLEXSELF_BVH, _FLEXSELF_SAP, _FLEXSELF_AUTO = 0, 1, 2, 3, 4
_DSBL_MIDPHASE = 1 << 14


#------------------------------------ small helpers ---------------------------------------------

@jit
def _norm3(x, y, z):
  """(unit vector, norm), (1, 0, 0) below mjMINVAL: mju_normalize3."""
  n = math.sqrt(x * x + y * y + z * z)
  if n < _MINVAL:
    return 1.0, 0.0, 0.0, n
  return x / n, y / n, z / n, n


@jit
def _sign(x):
  """mju_sign: -1, 0 or 1."""
  return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


@jit
def _bitmask_filtered(t1, a1, t2, a2):
  """MuJoCo's filterBitmask: 1 when neither contype matches the other's conaffinity."""
  return not (t1 & a2) and not (t2 & a1)


@jit
def can_collide_body_flex(m, b, f):
  """Bodyflex-level bitmask test of body b against flex f (the broadphase's add_pair)."""
  t = 0
  a = 0
  for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
    t |= m.geom_contype[g]
    a |= m.geom_conaffinity[g]
  return not _bitmask_filtered(t, a, m.flex_contype[f], m.flex_conaffinity[f])


@inline
def _side_param(m, g, f):
  """(priority, condim, solmix, adhesion, solref, solimp, friction) of one side of a contact:
  flex f when f >= 0, else geom g. A flex has no adhesion."""
  if f < 0:
    return (m.geom_priority[g], m.geom_condim[g], m.geom_solmix[g], m.geom_adhesion[g],
            _b(m.geom_solref[g]), _b(m.geom_solimp[g]), _b(m.geom_friction[g]))
  return (m.flex_priority[f], m.flex_condim[f], m.flex_solmix[f], 0.0,
          _b(m.flex_solref[f]), _b(m.flex_solimp[f]), _b(m.flex_friction[f]))


@jit
def contact_param(m, g1, g2, f1, f2, out):
  """mj_contactParam with flexes: side i is flex fi when fi >= 0, else geom gi. Writes
  friction[5], solref[2], solreffriction[2] (zero), solimp[5], adhesion into out[0:15] and
  returns condim. A flex has no adhesion."""
  for i in range(15):
    out[i] = 0.0
  p1, c1, s1, ad1, sr1, si1, fr1 = _side_param(m, g1, f1)
  p2, c2, s2, ad2, sr2, si2, fr2 = _side_param(m, g2, f2)
  if p1 != p2:
    hi = p1 > p2
    condim = c1 if hi else c2
    out[14] = ad1 if hi else ad2
    for i in range(2):
      out[5 + i] = sr1[i] if hi else sr2[i]
    for i in range(5):
      out[9 + i] = si1[i] if hi else si2[i]
    a0, a1, a2 = (fr1[0], fr1[1], fr1[2]) if hi else (fr2[0], fr2[1], fr2[2])
  else:
    out[14] = ad1 + ad2
    condim = max(c1, c2)
    if s1 >= _MINVAL and s2 >= _MINVAL:
      mix = s1 / (s1 + s2)
    elif s1 < _MINVAL and s2 < _MINVAL:
      mix = 0.5
    elif s1 < _MINVAL:
      mix = 0.0
    else:
      mix = 1.0
    if sr1[0] > 0 and sr2[0] > 0:
      for i in range(2):
        out[5 + i] = mix * sr1[i] + (1 - mix) * sr2[i]
    else:
      for i in range(2):
        out[5 + i] = min(sr1[i], sr2[i])
    for i in range(5):
      out[9 + i] = mix * si1[i] + (1 - mix) * si2[i]
    a0, a1, a2 = max(fr1[0], fr2[0]), max(fr1[1], fr2[1]), max(fr1[2], fr2[2])
  out[0] = a0
  out[1] = a0
  out[2] = a1
  out[3] = a2
  out[4] = a2
  return condim


#------------------------------------ element geometry ------------------------------------------

@jit
def _make_capsule(m, d, f, e, pos, mat, size):
  """The capsule of 1D element e of flex f (mj_makeCapsule): center, z axis along the edge
  (mju_quatZ2Vec of v0 - v1, as a matrix), radius flex_radius and half-length."""
  adr = m.flex_elemdataadr[f] + 2 * e
  va = m.flex_vertadr[f] + m.flex_elem[adr]
  vb = m.flex_vertadr[f] + m.flex_elem[adr + 1]
  x = d.flexvert_xpos
  dx, dy, dz = x[va, 0] - x[vb, 0], x[va, 1] - x[vb, 1], x[va, 2] - x[vb, 2]
  nx, ny, nz, n = _norm3(dx, dy, dz)
  size[0] = m.flex_radius[f]
  size[1] = 0.5 * n
  size[2] = 0.0
  for k in range(3):
    pos[k] = 0.5 * (x[va, k] + x[vb, k])
  q0, q1, q2, q3 = 1.0, 0.0, 0.0, 0.0
  if n >= _MINVAL:
    # axis = z x vn, angle between z and vn
    ax, ay, az, s = _norm3(-ny, nx, 0.0)
    if abs(s) < _MINVAL:
      if nz < 0:
        q0, q1 = 0.0, 1.0
    else:
      a = math.atan2(s, nz)
      if a != 0:
        sn = math.sin(a * 0.5)
        q0, q1, q2, q3 = math.cos(a * 0.5), ax * sn, ay * sn, az * sn
  mm.quat2mat(mat, q0, q1, q2, q3)


@jit
def _point_segment_2d(px, py, ux, uy, vx, vy):
  """Nearest point to p on segment (u, v) in the plane, and its distance (pointSegment)."""
  ax, ay = vx - ux, vy - uy
  bx, by = px - ux, py - uy
  a = (ax * bx + ay * by) / max(_MINVAL, ax * ax + ay * ay)
  if a <= 0:
    rx, ry = ux, uy
  elif a >= 1:
    rx, ry = vx, vy
  else:
    rx, ry = ux + a * ax, uy + a * ay
  return rx, ry, math.sqrt((rx - px) * (rx - px) + (ry - py) * (ry - py))


@jit
def _area_sign(p1x, p1y, p2x, p2y, p3x, p3y):
  """Sign of the signed area of a planar triangle (areaSign)."""
  return _sign((p1x - p3x) * (p2y - p3y) - (p2x - p3x) * (p1y - p3y))


@jit
def sphere_triangle(margin, s0, s1, s2, rs, x, i1, i2, i3, rt, dist, pos, frame, k):
  """Sphere (center s, radius rs) : triangle of rows i1, i2, i3 of x with radius rt
  (mjraw_SphereTriangle); normal from sphere to triangle; writes contact k, returns 0 or 1."""
  rbound = margin + rs + rt
  t0, t1, t2 = x[i1, 0], x[i1, 1], x[i1, 2]
  sx, sy, sz = s0 - t0, s1 - t1, s2 - t2
  ax, ay, az = x[i2, 0] - t0, x[i2, 1] - t1, x[i2, 2] - t2
  bx, by, bz = x[i3, 0] - t0, x[i3, 1] - t1, x[i3, 2] - t2
  nx, ny, nz, _ = _norm3(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)
  dst_s = nx * sx + ny * sy + nz * sz
  if abs(dst_s) > rbound:
    return 0
  px, py, pz = sx - dst_s * nx, sy - dst_s * ny, sz - dst_s * nz
  v1x, v1y, v1z, len_a = _norm3(ax, ay, az)
  v2x, v2y, v2z, _ = _norm3(ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax)
  # 2D triangle (o, a, b) and point p in the plane axes (V1, V2)
  qax, qay = len_a, 0.0
  qbx, qby = v1x * bx + v1y * by + v1z * bz, v2x * bx + v2y * by + v2z * bz
  qpx, qpy = v1x * px + v1y * py + v1z * pz, v2x * px + v2y * py + v2z * pz
  sg1 = _area_sign(qpx, qpy, 0.0, 0.0, qax, qay)
  sg2 = _area_sign(qpx, qpy, qax, qay, qbx, qby)
  sg3 = _area_sign(qpx, qpy, qbx, qby, 0.0, 0.0)
  if sg1 == sg2 and sg2 == sg3:
    cx, cy, cz = px, py, pz
  else:
    r0x, r0y, d0 = _point_segment_2d(qpx, qpy, 0.0, 0.0, qax, qay)
    r1x, r1y, d1 = _point_segment_2d(qpx, qpy, qax, qay, qbx, qby)
    r2x, r2y, d2 = _point_segment_2d(qpx, qpy, qbx, qby, 0.0, 0.0)
    if d0 < d1 and d0 < d2:
      rx, ry = r0x, r0y
    elif d1 < d2:
      rx, ry = r1x, r1y
    else:
      rx, ry = r2x, r2y
    cx = v1x * rx + v2x * ry
    cy = v1y * rx + v2y * ry
    cz = v1z * rx + v2z * ry
  ux, uy, uz, dst = _norm3(cx - sx, cy - sy, cz - sz)
  if dst > rbound:
    return 0
  dd = dst - rs - rt
  h = rs + dd / 2
  prim.put_contact(dist, pos, frame, k, dd, s0 + h * ux, s1 + h * uy, s2 + h * uz, ux, uy, uz)
  return 1


@jit
def box_triangle(margin, bpos, bmat, bsize, x, i1, i2, i3, rt, dist, pos, frame):
  """Box : triangle with radius rt (mjraw_BoxTriangle): triangle vertices inside the grown box
  against its nearest face, then box corners against the triangle; normal from box to
  triangle. Returns the number of contacts (at most mjMAXCONPAIR)."""
  cnt = 0
  for t in range(3):
    i = i1 if t == 0 else (i2 if t == 1 else i3)
    dx, dy, dz = x[i, 0] - bpos[0], x[i, 1] - bpos[1], x[i, 2] - bpos[2]
    l0 = bmat[0] * dx + bmat[3] * dy + bmat[6] * dz
    l1 = bmat[1] * dx + bmat[4] * dy + bmat[7] * dz
    l2 = bmat[2] * dx + bmat[5] * dy + bmat[8] * dz
    maxaxis = 0
    maxval = abs(l0) - bsize[0]
    v = abs(l1) - bsize[1]
    if v > maxval:
      maxval, maxaxis = v, 1
    v = abs(l2) - bsize[2]
    if v > maxval:
      maxval, maxaxis = v, 2
    if maxval - rt > margin:
      continue
    if (abs(l0) > bsize[0] + margin + rt or abs(l1) > bsize[1] + margin + rt
        or abs(l2) > bsize[2] + margin + rt):
      continue
    if cnt < _MAXCONPAIR:
      lv = l0 if maxaxis == 0 else (l1 if maxaxis == 1 else l2)
      sg = 1.0 if lv > 0 else -1.0
      nx, ny, nz = bmat[maxaxis] * sg, bmat[3 + maxaxis] * sg, bmat[6 + maxaxis] * sg
      dd = maxval - rt
      off = rt + dd * 0.5
      prim.put_contact(dist, pos, frame, cnt, dd, x[i, 0] - off * nx, x[i, 1] - off * ny,
           x[i, 2] - off * nz, nx, ny, nz)
      cnt += 1
  for i in range(8):
    if cnt >= _MAXCONPAIR:
      break
    v0 = bsize[0] if i & 1 else -bsize[0]
    v1 = bsize[1] if i & 2 else -bsize[1]
    v2 = bsize[2] if i & 4 else -bsize[2]
    c0 = bmat[0] * v0 + bmat[1] * v1 + bmat[2] * v2 + bpos[0]
    c1 = bmat[3] * v0 + bmat[4] * v1 + bmat[5] * v2 + bpos[1]
    c2 = bmat[6] * v0 + bmat[7] * v1 + bmat[8] * v2 + bpos[2]
    cnt += sphere_triangle(margin, c0, c1, c2, 0.0, x, i1, i2, i3, rt, dist, pos, frame, cnt)
  return cnt


@jit
def capsule_triangle(margin, cpos, cmat, csize, x, i1, i2, i3, rt, dist, pos, frame):
  """Capsule : triangle with radius rt (mjraw_CapsuleTriangle): both capsule ends as spheres,
  then triangle vertices projecting inside the capsule segment; normal from capsule to
  triangle."""
  radius, hl = csize[0], csize[1]
  a0, a1, a2 = cmat[2], cmat[5], cmat[8]
  p10, p11, p12 = cpos[0] - hl * a0, cpos[1] - hl * a1, cpos[2] - hl * a2
  p20, p21, p22 = cpos[0] + hl * a0, cpos[1] + hl * a1, cpos[2] + hl * a2
  cnt = sphere_triangle(margin, p10, p11, p12, radius, x, i1, i2, i3, rt, dist, pos, frame, 0)
  cnt += sphere_triangle(margin, p20, p21, p22, radius, x, i1, i2, i3, rt, dist, pos, frame,
                         cnt)
  abx, aby, abz = p20 - p10, p21 - p11, p22 - p12
  for t in range(3):
    i = i1 if t == 0 else (i2 if t == 1 else i3)
    tt = ((x[i, 0] - p10) * abx + (x[i, 1] - p11) * aby + (x[i, 2] - p12) * abz) / (4 * hl * hl)
    if tt <= _MINVAL or tt >= 1 - _MINVAL:
      continue
    q0, q1, q2 = p10 + abx * tt, p11 + aby * tt, p12 + abz * tt
    ux, uy, uz, dd = _norm3(x[i, 0] - q0, x[i, 1] - q1, x[i, 2] - q2)
    if dd > radius + rt + margin:
      continue
    s = radius - rt
    prim.put_contact(dist, pos, frame, cnt, dd - radius - rt, 0.5 * (q0 + x[i, 0] + s * ux),
         0.5 * (q1 + x[i, 1] + s * uy), 0.5 * (q2 + x[i, 2] + s * uz), ux, uy, uz)
    cnt += 1
  return cnt


#------------------------------------ sphere/capsule : tetrahedron -------------------------------

@jit
def _sub(a, b):
  return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def _dot(a, b):
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def _lerp(a, u, t):
  """a + t * u."""
  return (a[0] + t * u[0], a[1] + t * u[1], a[2] + t * u[2])


@jit
def _seg_seg(p1, q1, p2, q2):
  """Closest points of segments p1q1 and p2q2 and their squared distance (Ericson 5.1.9)."""
  d1 = _sub(q1, p1)
  d2 = _sub(q2, p2)
  r = _sub(p1, p2)
  a = _dot(d1, d1)
  e = _dot(d2, d2)
  f = _dot(d2, r)
  if a <= _MINVAL and e <= _MINVAL:
    s = t = 0.0
  elif a <= _MINVAL:
    s = 0.0
    t = min(1.0, max(0.0, f / e))
  else:
    c = _dot(d1, r)
    if e <= _MINVAL:
      t = 0.0
      s = min(1.0, max(0.0, -c / a))
    else:
      b = _dot(d1, d2)
      den = a * e - b * b
      s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > 0 else 0.0
      t = (b * s + f) / e
      if t < 0:
        t = 0.0
        s = min(1.0, max(0.0, -c / a))
      elif t > 1:
        t = 1.0
        s = min(1.0, max(0.0, (b - c) / a))
  c1 = _lerp(p1, d1, s)
  c2 = _lerp(p2, d2, t)
  w = _sub(c1, c2)
  return c1, c2, _dot(w, w)


@jit
def _point_tri(p, a, b, c):
  """Point of triangle abc closest to p and the squared distance."""
  wa, wb, wc = closest_triangle(p, a, b, c)
  q = (wa * a[0] + wb * b[0] + wc * c[0], wa * a[1] + wb * b[1] + wc * c[1],
       wa * a[2] + wb * b[2] + wc * c[2])
  w = _sub(p, q)
  return q, _dot(w, w)


@jit
def _inside_tetra(p, a, b, c, e):
  """True when p is in the closed tetrahedron abce (same side of every face as the opposite
  vertex)."""
  for face in range(4):
    if face == 0:
      u, v, w, o = b, c, e, a
    elif face == 1:
      u, v, w, o = a, c, e, b
    elif face == 2:
      u, v, w, o = a, b, e, c
    else:
      u, v, w, o = a, b, c, e
    n = _cross3(_sub(v, u), _sub(w, u))
    if _dot(n, _sub(p, u)) * _dot(n, _sub(o, u)) < 0:
      return False
  return True


@jit
def _cross3(a, b):
  return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def _seg_crosses_tri(p, q, a, b, c):
  """True when segment pq meets triangle abc (Moller-Trumbore on the segment)."""
  d = _sub(q, p)
  e1 = _sub(b, a)
  e2 = _sub(c, a)
  h = _cross3(d, e2)
  det = _dot(e1, h)
  if abs(det) < _MINVAL:
    return False
  s = _sub(p, a)
  u = _dot(s, h) / det
  if u < 0 or u > 1:
    return False
  qq = _cross3(s, e1)
  v = _dot(d, qq) / det
  if v < 0 or u + v > 1:
    return False
  t = _dot(e2, qq) / det
  return 0 <= t <= 1


@jit
def _segment_tetra(p, q, a, b, c, e):
  """Closest points (on segment pq, on the solid tetrahedron abce) and the squared distance;
  distance -1 when the segment meets the tetrahedron (penetration: left to GJK/EPA)."""
  if _inside_tetra(p, a, b, c, e) or _inside_tetra(q, a, b, c, e):
    return p, p, -1.0
  best = np.inf
  c1 = p
  c2 = p
  pts = (a, b, c, e)
  for face in range(4):
    j0, j1, j2 = (1, 2, 3) if face == 0 else ((0, 2, 3) if face == 1 else
                                              ((0, 1, 3) if face == 2 else (0, 1, 2)))
    u, v, w = pts[j0], pts[j1], pts[j2]
    if _seg_crosses_tri(p, q, u, v, w):
      return p, p, -1.0
    for end in range(2):
      pe = p if end == 0 else q
      r, d2 = _point_tri(pe, u, v, w)
      if d2 < best:
        best, c1, c2 = d2, pe, r
    for k in range(3):
      s0 = u if k == 0 else (v if k == 1 else w)
      s1 = v if k == 0 else (w if k == 1 else u)
      x1, x2, d2 = _seg_seg(p, q, s0, s1)
      if d2 < best:
        best, c1, c2 = d2, x1, x2
  return c1, c2, best


@jit
def round_tetra(margin, p, q, rs, x, i0, i1, i2, i3, rt, dist, pos, frame):
  """Sphere (p == q) or capsule (segment pq) of radius rs : tetrahedron (rows i0..i3 of x)
  with radius rt, from the closest points of the core and the solid tetrahedron (4.0's
  analytic sphere/capsule : 3D element, changelog item 26); normal from the geom to the
  element. Returns 0 or 1, or -1 when the core meets the tetrahedron."""
  c1, c2, d2 = _segment_tetra(p, q, row3(x, i0), row3(x, i1), row3(x, i2), row3(x, i3))
  if d2 < 0:
    return -1
  nx, ny, nz, dd = _norm3(c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2])
  if dd - rs - rt > margin:
    return 0
  cd = dd - rs - rt
  h = rs + cd / 2
  prim.put_contact(dist, pos, frame, 0, cd, c1[0] + h * nx, c1[1] + h * ny, c1[2] + h * nz, nx, ny, nz)
  return 1


#------------------------------------ pair functions --------------------------------------------

@jit
def _same_body(m, f, e, b):
  """1 when element e of flex f has a vertex on body b (b >= 0)."""
  dim = m.flex_dim[f]
  adr = m.flex_elemdataadr[f] + e * (dim + 1)
  if b < 0:
    return False
  for i in range(dim + 1):
    if m.flex_vertbodyid[m.flex_vertadr[f] + m.flex_elem[adr + i]] == b:
      return True
  return False


@jit
def scratch(m, d):
  """Work of the pair functions, borrowed views of Data (no reference count as a pair function
  takes them out of the tuple, per element pair): capsule pos (6,), mat (18,), size (6,) for
  two elements, element vertex ids (8,), the views of Data's GJK/EPA work buffers
  (`cvx.split_work`: the elements' vertices in rows 2 and 3, meshes in its mesh cache), made
  once for all the element pairs (making them per pair costs more than the pair's GJK;
  `cvx.work_views`, as the driver's), and a geom row (1, 16) for fix_normal."""
  f = d.col_flexf
  f[47] = 0.0
  return (_b(f[0:6]), _b(f[6:24]), _b(f[24:30]), _b(d.col_flexi[0:8]), cvx.work_views(m, d),
          _b(f[32:48].reshape((1, 16))))


@jit
def _elem_vids(m, f, e, vid, off):
  """Global vertex ids of element e of flex f into vid[off:]; returns their count."""
  dim = m.flex_dim[f]
  adr = m.flex_elemdataadr[f] + e * (dim + 1)
  for i in range(dim + 1):
    vid[off + i] = m.flex_vertadr[f] + m.flex_elem[adr + i]
  return dim + 1


@inline
def _convex(m, d, g, f1, e1, f2, e2, margin, dist, pos, frame, ws):
  """General convex geom g (g >= 0) or element e1 of flex f1 against element e2 of flex f2
  (mjc_ConvexElem, GJK/EPA); -1 where that is not available here (height field and SDF
  geoms; libccd when native CCD is disabled)."""
  if m.opt_disableflags[0] & _DSBL_NATIVECCD:
    return -1
  vid, w = ws[3], ws[4]
  n2 = _elem_vids(m, f2, e2, vid, 4)
  if g >= 0:
    typ = m.geom_type[g]
    if typ == _HFIELD or typ == _SDF:
      return -1
    if typ == _MESH:
      # the mesh's hull needs the driver's mesh-sized buffers; no normal fix for meshes
      vert, ext, graph = cvx.mesh_arrays(m, g)
      return cvx.collide_mesh_flex_elem(
          m.geom_size[g], d.geom_xpos[g], d.geom_xmat[g], vert, ext, graph, d.flexvert_xpos,
          vid[4:8], n2, m.flex_radius[f2], margin, min(m.opt_ccd_iterations[0], m.nccd),
          m.opt_ccd_tolerance[0], dist, pos, frame, w)
    n = cvx.collide_flex_elem(typ, m.geom_size[g], d.geom_xpos[g], d.geom_xmat[g],
                              d.flexvert_xpos, vid[0:4], 0, 0.0, vid[4:8], n2,
                              m.flex_radius[f2], margin, min(m.opt_ccd_iterations[0], m.nccd),
                              m.opt_ccd_tolerance[0], dist, pos, frame, w)
    if n > 0 and m.flex_dim[f2] == 2:
      # MuJoCo: on a 2D flex, the normal of a curved geom is its analytic surface normal
      # at the contact point (mjc_fixNormal on the geom side)
      ob = ws[5]
      for j in range(3):
        ob[0, j] = m.geom_size[g, j]
        ob[0, 3 + j] = d.geom_xpos[g, j]
      for j in range(9):
        ob[0, 6 + j] = d.geom_xmat[g, j]
      ccdlib.fix_normal(ob, typ, 0, -1, 0, frame, pos, 0)
    return n
  n1 = _elem_vids(m, f1, e1, vid, 0)
  return cvx.collide_flex_elem(-1, m.flex_radius, d.flexvert_xpos[0], m.flex_radius,
                               d.flexvert_xpos, vid[0:4], n1, m.flex_radius[f1], vid[4:8], n2,
                               m.flex_radius[f2], margin,
                               min(m.opt_ccd_iterations[0], m.nccd), m.opt_ccd_tolerance[0],
                               dist, pos, frame, w)


@inline
def geom_elem(m, d, g, f, e, margin, dist, pos, frame, ws):
  """Pre-contacts of geom g against element e of flex f (mj_collideGeomElem's narrow phase)
  into dist/pos/frame, normal from geom to element; `margin` is margin + gap; ws from
  `scratch`. Returns the count; -1 for a pair type not handled here."""
  dim = m.flex_dim[f]
  typ = m.geom_type[g]
  if _same_body(m, f, e, m.geom_bodyid[g]):
    return 0
  cpos, cmat, csize = ws[0][0:3], ws[1][0:9], ws[2][0:3]
  gpos, gmat, gsize = d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g]
  if dim == 1 and (typ == _SPHERE or typ == _CAPSULE or typ == _BOX):
    _make_capsule(m, d, f, e, cpos, cmat, csize)
    if typ == _SPHERE:
      return prim.sphere_capsule(gsize, gpos, gmat, csize, cpos, cmat, margin, dist, pos, frame)
    if typ == _CAPSULE:
      return prim.capsule_capsule(gsize, gpos, gmat, csize, cpos, cmat, margin, dist, pos,
                                  frame)
    n = prim.capsule_box(csize, cpos, cmat, gsize, gpos, gmat, margin, dist, pos, frame)
    for i in range(n):     # the box is the second geom of capsule : box
      for k in range(3):
        frame[i, k] = -frame[i, k]
    return n
  if typ == _HFIELD:
    if m.opt_disableflags[0] & _DSBL_NATIVECCD:
      return -1
    vid = ws[3]
    n = _elem_vids(m, f, e, vid, 0)
    h = m.geom_dataid[g]
    adr = m.hfield_adr[h]
    nrow, ncol = m.hfield_nrow[h], m.hfield_ncol[h]
    return hf.collide_hfield_elem(
        m.hfield_size[h], nrow, ncol, m.hfield_data[adr:adr + nrow * ncol], gpos, gmat,
        d.flexvert_xpos, vid[0:4], n, m.flex_radius[f],
        d.flexelem_aabb[m.flex_elemadr[f] + e], margin, min(m.opt_ccd_iterations[0], m.nccd),
        m.opt_ccd_tolerance[0], dist, pos, frame, d.col_fbuf, d.col_ibuf, ws[4])
  if dim == 2 and (typ == _SPHERE or typ == _CAPSULE or typ == _BOX):
    adr = m.flex_elemdataadr[f] + 3 * e
    va = m.flex_vertadr[f]
    i1 = va + m.flex_elem[adr]
    i2 = va + m.flex_elem[adr + 1]
    i3 = va + m.flex_elem[adr + 2]
    rt = m.flex_radius[f]
    x = d.flexvert_xpos
    if typ == _SPHERE:
      return sphere_triangle(margin, gpos[0], gpos[1], gpos[2], gsize[0], x, i1, i2, i3, rt,
                             dist, pos, frame, 0)
    if typ == _BOX:
      return box_triangle(margin, gpos, gmat, gsize, x, i1, i2, i3, rt, dist, pos, frame)
    return capsule_triangle(margin, gpos, gmat, gsize, x, i1, i2, i3, rt, dist, pos, frame)
  if dim == 3 and (typ == _SPHERE or typ == _CAPSULE):
    adr = m.flex_elemdataadr[f] + 4 * e
    va = m.flex_vertadr[f]
    hl = gsize[1] if typ == _CAPSULE else 0.0
    a0, a1, a2 = gmat[2] * hl, gmat[5] * hl, gmat[8] * hl
    n = round_tetra(margin, (gpos[0] - a0, gpos[1] - a1, gpos[2] - a2),
                    (gpos[0] + a0, gpos[1] + a1, gpos[2] + a2), gsize[0], d.flexvert_xpos,
                    va + m.flex_elem[adr], va + m.flex_elem[adr + 1], va + m.flex_elem[adr + 2],
                    va + m.flex_elem[adr + 3], m.flex_radius[f], dist, pos, frame)
    if n >= 0:
      return n
  return _convex(m, d, g, -1, -1, f, e, margin, dist, pos, frame, ws)


@inline
def elem_elem(m, d, f1, e1, f2, e2, margin, dist, pos, frame, ws):
  """Pre-contacts of element e1 of flex f1 against element e2 of flex f2 (mj_collideElems'
  narrow phase, after its box filter), normal from e1 to e2; ws from `scratch`. Returns the
  count; -1 for a pair type not handled here."""
  cpos, cmat, csize = ws[0], ws[1], ws[2]
  dim1, dim2 = m.flex_dim[f1], m.flex_dim[f2]
  adr1 = m.flex_elemdataadr[f1] + e1 * (dim1 + 1)
  adr2 = m.flex_elemdataadr[f2] + e2 * (dim2 + 1)
  for i1 in range(dim1 + 1):
    b1 = m.flex_vertbodyid[m.flex_vertadr[f1] + m.flex_elem[adr1 + i1]]
    for i2 in range(dim2 + 1):
      if b1 >= 0 and b1 == m.flex_vertbodyid[m.flex_vertadr[f2] + m.flex_elem[adr2 + i2]]:
        return 0
  if dim1 == 1 and dim2 == 1:
    _make_capsule(m, d, f1, e1, cpos[0:3], cmat[0:9], csize[0:3])
    _make_capsule(m, d, f2, e2, cpos[3:6], cmat[9:18], csize[3:6])
    return prim.capsule_capsule(csize[0:3], cpos[0:3], cmat[0:9], csize[3:6], cpos[3:6],
                                cmat[9:18], margin, dist, pos, frame)
  return _convex(m, d, -1, f1, e1, f2, e2, margin, dist, pos, frame, ws)


@jit
def _sphere_elem_apart(m, d, f, e, p, r):
  """True when the ball (p, r) misses element e's box (mid.elem_range) along some axis."""
  for k in range(3):
    lo, hi = mid.elem_range(m, d, f, e, k)
    if p[k] + r < lo or p[k] - r > hi:
      return True
  return False


#------------------------------------ contact buffer --------------------------------------------

@jit
def _append(d, n, g1, g2, f1, f2, el1, el2, v1, v2):
  """Append pre-contacts 0..n-1 of d.col_* with these ids; returns False when full."""
  nconmax = d.contact_dist.shape[0]
  c0 = d.ncon[0]
  if c0 + n > nconmax:
    d.warning_number[_CONTACTFULL] += 1
    d.warning_lastinfo[_CONTACTFULL] = c0
    return False
  for j in range(n):
    c = c0 + j
    d.contact_dist[c] = d.col_dist[j]
    for k in range(3):
      d.contact_pos[c, k] = d.col_pos[j, k]
    for k in range(6):
      d.contact_frame[c, k] = d.col_frame[j, k]
    d.contact_geom[c, 0] = g1
    d.contact_geom[c, 1] = g2
    d.contact_flex[c, 0] = f1
    d.contact_flex[c, 1] = f2
    d.contact_elem[c, 0] = el1
    d.contact_elem[c, 1] = el2
    d.contact_vert[c, 0] = v1
    d.contact_vert[c, 1] = v2
  d.ncon[0] = c0 + n
  return True


@jit
def _swap_rows(a, i, j):
  """Swap rows i and j of the 2D array a."""
  for k in range(a.shape[1]):
    t = a[i, k]
    a[i, k] = a[j, k]
    a[j, k] = t


@jit
def _swap(d, i, j):
  """Swap contacts i and j (geometry and ids: parameters are set after filtering)."""
  t = d.contact_dist[i]
  d.contact_dist[i] = d.contact_dist[j]
  d.contact_dist[j] = t
  for a in (d.contact_pos, d.contact_frame):
    _swap_rows(a, i, j)
  for a in (d.contact_geom, d.contact_flex, d.contact_elem, d.contact_vert):
    _swap_rows(a, i, j)


@jit
def _sort_key(d, c, side):
  """contactcompare's object id of one side: geom, else element, else vertex."""
  if d.contact_geom[c, side] >= 0:
    return d.contact_geom[c, side]
  if d.contact_elem[c, side] >= 0:
    return d.contact_elem[c, side]
  return d.contact_vert[c, side]


@jit
def sort_pair_contacts(d, start):
  """Stable sort of the contacts from `start` by (side-0 id, side-1 id), as 4.0's contactSort
  after a midphase pair (insertion sort: stable, and the runs are short)."""
  for i in range(start + 1, d.ncon[0]):
    j = i
    while j > start:
      a0, a1 = _sort_key(d, j - 1, 0), _sort_key(d, j - 1, 1)
      b0, b1 = _sort_key(d, j, 0), _sort_key(d, j, 1)
      if a0 < b0 or (a0 == b0 and a1 <= b1):
        break
      _swap(d, j - 1, j)
      j -= 1


@jit
def set_params(m, d, c, margin, condim, par):
  """Contact c's parameters from the mixed `par` (contact_param's layout) as mj_setContact
  sets them: condim, includemargin, friction, solref, solreffriction, solimp (with the opt
  override), adhesion; a contact in the gap is excluded, unless adhesive (it pulls across the
  gap, normal-only there); the frame completed from its normal. For geom and flex contacts."""
  d.contact_dim[c] = condim
  d.contact_includemargin[c] = margin
  cn.assign_friction(m, _b(d.contact_friction[c]), _b(par[0:5]))
  cn.assign_ref(m, _b(d.contact_solref[c]), _b(par[5:7]))
  cn.assign_ref(m, _b(d.contact_solreffriction[c]), _b(par[7:9]))
  cn.assign_imp(m, _b(d.contact_solimp[c]), _b(par[9:14]))
  adhesion = par[14]
  d.contact_adhesion[c] = adhesion
  in_gap = d.contact_dist[c] >= margin
  d.contact_exclude[c] = 1 if in_gap and adhesion == 0.0 else 0
  if in_gap and adhesion != 0.0:
    d.contact_dim[c] = 1
  prim.make_frame(_b(d.contact_frame[c]))


@jit
def _finish(m, d, start, stop, margin, condim, par):
  """Parameters of flex contacts start..stop-1 (set_params), geom1/geom2 from their sides."""
  for c in range(start, stop):
    set_params(m, d, c, margin, condim, par)
    d.contact_geom1[c] = d.contact_geom[c, 0]
    d.contact_geom2[c] = d.contact_geom[c, 1]
    d.contact_efc_address[c] = -1
    d.contact_mu[c] = 0.0
    for k in range(36):
      d.contact_H[c, k] = 0.0
    for k in range(3):
      d.contact_surfacevel[c, k] = 0.0


#------------------------------------ pair drivers ----------------------------------------------

@jit
def plane_flex(m, d, g, f):
  """Plane geom g against every vertex of flex f (mj_collidePlaneFlex): contacts appended
  with parameters, not filtered."""
  margin = cn.assign_margin(m, m.geom_margin[g] + m.flex_margin[f])
  gap = m.geom_gap[g] + m.flex_gap[f]
  radius = m.flex_radius[f]
  p, mat = d.geom_xpos[g], d.geom_xmat[g]
  n0, n1, n2 = mat[2], mat[5], mat[8]
  start = d.ncon[0]
  x = d.flexvert_xpos
  for i in range(m.flex_vertnum[f]):
    v = m.flex_vertadr[f] + i
    dd = (x[v, 0] - p[0]) * n0 + (x[v, 1] - p[1]) * n1 + (x[v, 2] - p[2]) * n2
    if dd > margin + gap + radius:
      continue
    cd = dd - radius
    s = -cd * 0.5 - radius
    prim.put_contact(d.col_dist, d.col_pos, d.col_frame, 0, cd, x[v, 0] + s * n0, x[v, 1] + s * n1,
         x[v, 2] + s * n2, n0, n1, n2)
    if not _append(d, 1, g, -1, -1, f, -1, -1, -1, i):
      break
  par = d.scratch_small
  condim = contact_param(m, g, -1, -1, f, par)
  _finish(m, d, start, d.ncon[0], margin, condim, par)


@inline
def collide_geom_elem(m, d, g, f, e, ws):
  """Geom g against element e of flex f (mj_collideGeomElem): contacts appended with
  parameters. Returns -1 for a pair type not handled here, else the count."""
  margin = cn.assign_margin(m, m.geom_margin[g] + m.flex_margin[f])
  gap = m.geom_gap[g] + m.flex_gap[f]
  n = geom_elem(m, d, g, f, e, margin + gap, d.col_dist, d.col_pos, d.col_frame, ws)
  if n <= 0:
    return n
  start = d.ncon[0]
  if not _append(d, n, g, -1, -1, f, -1, e, -1, -1):
    return 0
  par = d.scratch_small
  condim = contact_param(m, g, -1, -1, f, par)
  _finish(m, d, start, d.ncon[0], margin, condim, par)
  return n


@jit
def _elems_margin_gap(m, f1, f2):
  """Margin and gap of an element pair of flexes f1, f2 (mj_collideElems: both zero in
  self-collision, so that neighbouring elements are not in permanent contact)."""
  if f1 == f2:
    return 0.0, 0.0
  return (cn.assign_margin(m, m.flex_margin[f1] + m.flex_margin[f2]),
          m.flex_gap[f1] + m.flex_gap[f2])


@inline
def collide_elems(m, d, f1, e1, f2, e2, ws):
  """Element e1 of flex f1 against element e2 of flex f2 (mj_collideElems; margin and gap are
  ignored in self-collision). Returns -1 for a pair type not handled here, else the count."""
  margin, gap = _elems_margin_gap(m, f1, f2)
  if mid.boxes_apart(m, d, f1, e1, f2, e2, margin + gap):
    return 0
  n = elem_elem(m, d, f1, e1, f2, e2, margin + gap, d.col_dist, d.col_pos, d.col_frame, ws)
  if n <= 0:
    return n
  start = d.ncon[0]
  if not _append(d, n, -1, -1, f1, f2, e1, e2, -1, -1):
    return 0
  par = d.scratch_small
  condim = contact_param(m, -1, -1, f1, f2, par)
  _finish(m, d, start, d.ncon[0], margin, condim, par)
  return n


@unit((M, D, i8, i8), i8, needs=NEEDS_FLEX)
def collide_body_flex(m, d, b, f):
  """Body b against flex f (a bodyflex pair of MuJoCo's broadphase): plane geoms against the
  vertices, other geoms (passing the geom-flex bitmask) against every active element
  (`mid.elem_active`: all of 1D/2D flexes, 3D ones below flex_activelayers). As 4.0's midphase
  path (the default): planes only on bodies without dofs, contacts sorted by (geom, element
  or vertex); with midphase disabled: planes of any body, generation order. No per-pair limit: MuJoCo 4.0 keeps them
  all (e.g. 81 plane : vertex contacts on pancake, 119 cylinder : tetrahedron on floppy). Returns the number of
  geom : element tests of a type not handled here (0 when complete)."""
  start = d.ncon[0]
  ws = scratch(m, d)
  missing = 0
  g0, g1 = m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]
  # MuJoCo's midphase (BVH) path when enabled; it collides planes only on bodies without
  # dofs, and sorts the pair's contacts
  midphase = not (m.opt_disableflags[0] & _DSBL_MIDPHASE) and m.flex_bvhadr[f] >= 0
  planes = not midphase or m.body_dofnum[m.body_weldid[b]] == 0
  for g in range(g0, g1):
    if planes and m.geom_type[g] == _PLANE and not _bitmask_filtered(
        m.geom_contype[g], m.geom_conaffinity[g], m.flex_contype[f], m.flex_conaffinity[f]):
      plane_flex(m, d, g, f)
  for g in range(g0, g1):
    typ = m.geom_type[g]
    if typ == _PLANE or _bitmask_filtered(m.geom_contype[g], m.geom_conaffinity[g],
                                          m.flex_contype[f], m.flex_conaffinity[f]):
      continue
    if typ == _SDF:
      missing += 1
      continue
    # the midphase's box test: the geom's bounding sphere grown by margin + gap against each
    # element's box (a pair it rejects has no point within margin + gap)
    reach = (m.geom_rbound[g] + cn.assign_margin(m, m.geom_margin[g] + m.flex_margin[f])
             + m.geom_gap[g] + m.flex_gap[f])
    gp = d.geom_xpos[g]
    for e in range(m.flex_elemnum[f]):
      # MuJoCo 4.0's flex BVH holds only the active elements
      if not mid.elem_active(m, f, e) or _sphere_elem_apart(m, d, f, e, gp, reach):
        continue
      if collide_geom_elem(m, d, g, f, e, ws) < 0:
        missing += 1
  if midphase:
    sort_pair_contacts(d, start)
  return missing


@unit((M, D, i8, i8), i8, needs=NEEDS_FLEX)
def collide_flex_flex(m, d, f1, f2):
  """Active elements of flex f1 against active elements of flex f2 (f1 < f2). As MuJoCo: with
  the midphase (both flexes have a BVH, midphase not disabled) the pairs whose boxes overlap
  (`_collide_near`; mj_collideTree) and the contacts sorted as a midphase bodyflex pair;
  with midphase disabled every pair, in generation order (`_collide_all`). Returns the number
  of element pairs not handled here."""
  start = d.ncon[0]
  ws = scratch(m, d)
  if (not (m.opt_disableflags[0] & _DSBL_MIDPHASE) and m.flex_bvhadr[f1] >= 0
      and m.flex_bvhadr[f2] >= 0):
    missing = _collide_near(m, d, f1, f2, ws)
    sort_pair_contacts(d, start)
    return missing
  return _collide_all(m, d, f1, f2, ws)


@jit
def _collide_all(m, d, f1, f2, ws):
  """Every pair of active elements e1 of flex f1 and e2 of flex f2 (e1 < e2 when f1 == f2),
  e1 then e2 ascending: MuJoCo's direct loops (no midphase). Returns the number of pairs not
  handled here."""
  missing = 0
  for e1 in range(m.flex_elemnum[f1]):
    if not mid.elem_active(m, f1, e1):
      continue
    for e2 in range(e1 + 1 if f1 == f2 else 0, m.flex_elemnum[f2]):
      if mid.elem_active(m, f2, e2) and collide_elems(m, d, f1, e1, f2, e2, ws) < 0:
        missing += 1
  return missing


@jit
def _collide_near(m, d, f1, f2, ws):
  """The pairs of `_collide_all` whose element boxes, grown by the pair's margin + gap, overlap
  (engine/collision.flex_mid.py), in the same order: the same contacts, without testing the
  pairs filterBox rejects. Returns the number of pairs not handled here."""
  margin, gap = _elems_margin_gap(m, f1, f2)
  ne = m.flex_elemnum[f2]
  order, slo, smax = np.empty(ne, np.int64), np.empty(ne), np.empty(ne)
  near = np.empty(ne, np.int64)
  ax = mid.longest_axis(m, d, f2)
  n = mid.sweep_index(m, d, f2, ax, order, slo, smax)
  missing = 0
  for e1 in range(m.flex_elemnum[f1]):
    if not mid.elem_active(m, f1, e1):
      continue
    k = mid.overlaps(m, d, f1, e1, f2, ax, order, slo, smax, n, margin + gap,
                     e1 if f1 == f2 else -1, near)
    for i in range(k):
      if collide_elems(m, d, f1, e1, f2, near[i], ws) < 0:
        missing += 1
  return missing


@jit
def _collide_sap(m, d, f, ws):
  """Self-collision of the active elements of flex f in MuJoCo's mj_collideFlexSAP order: sweep
  and prune along the longest axis of the flex's box on float32 bounds (stable sort), each
  pair collided as (element met first, element met second) when the sweep meets it. Returns
  the number of pairs not handled here."""
  ne = m.flex_elemnum[f]
  elid = np.empty(ne, np.int64)
  n = 0
  for e in range(ne):
    if mid.elem_active(m, f, e):
      elid[n] = e
      n += 1
  lo = np.empty((3, n))
  hi = np.empty((3, n))
  for k in range(3):
    for i in range(n):
      lo[k, i], hi[k, i] = mid.elem_range(m, d, f, elid[i], k)
  ax = mid.longest_axis(m, d, f)
  ay, az = (1, 2) if ax == 0 else ((0, 2) if ax == 1 else (0, 1))
  vals = np.empty(2 * n, np.float32)
  for i in range(n):
    vals[2 * i] = np.float32(lo[ax, i])
    vals[2 * i + 1] = np.float32(hi[ax, i])
  order = np.argsort(vals, kind="mergesort")
  active = np.empty(n, np.int64)
  cnt = 0
  missing = 0
  for s in range(2 * n):
    i = order[s] // 2
    if order[s] % 2 == 0:
      for j in range(cnt):
        a = active[j]
        if (lo[ay, a] > hi[ay, i] or lo[ay, i] > hi[ay, a] or lo[az, a] > hi[az, i]
            or lo[az, i] > hi[az, a]):
          continue
        if collide_elems(m, d, f, elid[a], f, elid[i], ws) < 0:
          missing += 1
      active[cnt] = i
      cnt += 1
    else:
      for j in range(cnt):
        if active[j] == i:
          for k in range(j, cnt - 1):
            active[k] = active[k + 1]
          cnt -= 1
          break
  return missing


@unit((M, D, i8), i8, needs=NEEDS_FLEX)
def collide_flex_self(m, d, f):
  """Self-collision of flex f (non-rigid, contype & conaffinity, selfcollide not none):
  pairs of active elements sharing no body, by MuJoCo's modes. With the midphase (not
  disabled, the flex has a BVH, selfcollide not narrow): sap, or auto on a 1D/2D flex, in
  mj_collideFlexSAP's order and orientation (`_collide_sap`); bvh, or auto on a 3D flex, the
  pairs e1 < e2 whose boxes overlap (`_collide_near`: the set MuJoCo's BVH traversal finds,
  in the order of the all-pairs loop). Otherwise every pair e1 < e2 (`_collide_all`). Returns
  the number of element pairs not handled here."""
  if m.flex_rigid[f] or not (m.flex_contype[f] & m.flex_conaffinity[f]):
    return 0
  mode = m.flex_selfcollide[f]
  if mode == _FLEXSELF_NONE:
    return 0
  ws = scratch(m, d)
  if (m.opt_disableflags[0] & _DSBL_MIDPHASE or mode == _FLEXSELF_NARROW
      or m.flex_bvhadr[f] < 0):
    return _collide_all(m, d, f, f, ws)
  if mode == _FLEXSELF_BVH or (mode == _FLEXSELF_AUTO and m.flex_dim[f] == 3):
    return _collide_near(m, d, f, f, ws)
  return _collide_sap(m, d, f, ws)
