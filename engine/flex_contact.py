"""The two sides of a flex contact: which bodies a side moves and with what weights, as MuJoCo's
contact Jacobian, mj_diagApprox and mj_flexBody see them. A side is a geom (contact_geom >= 0),
a flex vertex (contact_vert >= 0) or a flex element (contact_elem >= 0) of contact_flex.
It imports only engine._jit and engine.types, so constraint.py, sensor.py and sleep.py can use
it without cycles; collision/flex.py re-exports contact_weights."""
import numpy as np

from numjoco.engine._jit import inline, jit
from numjoco.engine.types import MINVAL as _MINVAL


@jit
def contact_body(m, d, c, side):
  """The body of one side of contact c (MuJoCo's geom body, else mj_flexBody: a vertex's
  body, an element's first vertex's body)."""
  g = d.contact_geom[c, side]
  if g >= 0:
    return m.geom_bodyid[g]
  f = d.contact_flex[c, side]
  v = d.contact_vert[c, side]
  if v >= 0:
    return m.flex_vertbodyid[m.flex_vertadr[f] + v]
  adr = m.flex_elemdataadr[f] + d.contact_elem[c, side] * (m.flex_dim[f] + 1)
  return m.flex_vertbodyid[m.flex_vertadr[f] + m.flex_elem[adr]]


@jit
def side_bodies(m, d, c, side, body, weight, vert):
  """Bodies and weights (summing to 1) of one side of contact c into body[:n], weight[:n]
  (vert: int scratch of 4); returns n. A geom side is its body with weight 1."""
  g = d.contact_geom[c, side]
  if g >= 0:
    body[0] = m.geom_bodyid[g]
    weight[0] = 1.0
    return 1
  n = contact_weights(m, d, c, side, vert, weight)
  for i in range(n):
    body[i] = m.flex_vertbodyid[vert[i]]
  return n


#------------------------------------ contact weights -------------------------------------------

@jit
def _closest_segment(px, py, pz, ax, ay, az, bx, by, bz):
  """Barycentric (wa, wb) of the point of segment ab closest to p."""
  ux, uy, uz = bx - ax, by - ay, bz - az
  uu = ux * ux + uy * uy + uz * uz
  t = 0.0
  if uu > _MINVAL:
    t = ((px - ax) * ux + (py - ay) * uy + (pz - az) * uz) / uu
  t = min(1.0, max(0.0, t))
  return 1.0 - t, t


@inline
def _edge_dots(ab, ac, p, q):
  """(ab . (p - q), ac . (p - q)) of 3-tuples."""
  qp = (p[0] - q[0], p[1] - q[1], p[2] - q[2])
  return (ab[0] * qp[0] + ab[1] * qp[1] + ab[2] * qp[2],
          ac[0] * qp[0] + ac[1] * qp[1] + ac[2] * qp[2])


@inline
def _corner_edge(d1, d2, e1, e2):
  """Ericson's test of corner x (b or c) of triangle abc and of edge ax, from the dots (d1, d2)
  of p - a and (e1, e2) of p - x with ax and with the other edge: (found, weights of a and x,
  Ericson's barycentric area vc (x = b) or vb (x = c))."""
  if e1 >= 0 and e2 <= e1:
    return True, 0.0, 1.0, 0.0
  area = d1 * e2 - e1 * d2
  if area <= 0 and d1 >= 0 and e1 <= 0:
    v = d1 / (d1 - e1)
    return True, 1.0 - v, v, area
  return False, 0.0, 0.0, area


@jit
def closest_triangle(p, a, b, c):
  """Barycentric (wa, wb, wc) of the point of triangle abc closest to p (Ericson's regions);
  p, a, b, c are 3-tuples."""
  ab = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
  ac = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
  d1, d2 = _edge_dots(ab, ac, p, a)
  if d1 <= 0 and d2 <= 0:
    return 1.0, 0.0, 0.0
  d3, d4 = _edge_dots(ab, ac, p, b)
  found, wa, wb, vc = _corner_edge(d1, d2, d3, d4)
  if found:
    return wa, wb, 0.0
  d5, d6 = _edge_dots(ab, ac, p, c)
  found, wa, wc, vb = _corner_edge(d2, d1, d6, d5)
  if found:
    return wa, 0.0, wc
  va = d3 * d6 - d5 * d4
  if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
    w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    return 0.0, 1.0 - w, w
  den = va + vb + vc
  if abs(den) < _MINVAL:
    return 1.0, 0.0, 0.0
  v = vb / den
  w = vc / den
  return 1.0 - v - w, v, w


@jit
def row3(x, i):
  return (x[i, 0], x[i, 1], x[i, 2])


@jit
def _closest_tetra(p, x, i0, i1, i2, i3, w):
  """Barycentric weights w[0:4] of the point of tetrahedron (i0..i3 rows of x) closest to p:
  p's own coordinates inside, else the closest point on the nearest face."""
  a, b, c, e = row3(x, i0), row3(x, i1), row3(x, i2), row3(x, i3)
  # solve [b-a, c-a, e-a] l = p - a
  m00, m10, m20 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
  m01, m11, m21 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
  m02, m12, m22 = e[0] - a[0], e[1] - a[1], e[2] - a[2]
  r0, r1, r2 = p[0] - a[0], p[1] - a[1], p[2] - a[2]
  det = (m00 * (m11 * m22 - m12 * m21) - m01 * (m10 * m22 - m12 * m20)
         + m02 * (m10 * m21 - m11 * m20))
  if abs(det) > _MINVAL:
    l1 = (r0 * (m11 * m22 - m12 * m21) - m01 * (r1 * m22 - m12 * r2)
          + m02 * (r1 * m21 - m11 * r2)) / det
    l2 = (m00 * (r1 * m22 - m12 * r2) - r0 * (m10 * m22 - m12 * m20)
          + m02 * (m10 * r2 - r1 * m20)) / det
    l3 = (m00 * (m11 * r2 - r1 * m21) - m01 * (m10 * r2 - r1 * m20)
          + r0 * (m10 * m21 - m11 * m20)) / det
    l0 = 1.0 - l1 - l2 - l3
    if l0 >= 0 and l1 >= 0 and l2 >= 0 and l3 >= 0:
      w[0], w[1], w[2], w[3] = l0, l1, l2, l3
      return
  best = np.inf
  pts = (a, b, c, e)
  for face in range(4):
    # face opposite vertex `face`
    j0, j1, j2 = (1, 2, 3) if face == 0 else ((0, 2, 3) if face == 1 else
                                              ((0, 1, 3) if face == 2 else (0, 1, 2)))
    q0, q1, q2 = pts[j0], pts[j1], pts[j2]
    u0, u1, u2 = closest_triangle(p, q0, q1, q2)
    cx = u0 * q0[0] + u1 * q1[0] + u2 * q2[0]
    cy = u0 * q0[1] + u1 * q1[1] + u2 * q2[1]
    cz = u0 * q0[2] + u1 * q1[2] + u2 * q2[2]
    dd = (cx - p[0]) ** 2 + (cy - p[1]) ** 2 + (cz - p[2]) ** 2
    if dd < best:
      best = dd
      w[0] = w[1] = w[2] = w[3] = 0.0
      w[j0], w[j1], w[j2] = u0, u1, u2


@jit
def contact_weights(m, d, c, side, vert, weight):
  """Flex vertices (global ids into vert) and weights of side `side` of contact c, as MuJoCo's
  contact Jacobian distributes it (MuJoCo 4.0 changelog, item 22): 1 on a vertex contact's vertex;
  for an element, the barycentric coordinates of the element point closest to contact_pos.
  Returns the count (0 when that side is a geom)."""
  f = d.contact_flex[c, side]
  if f < 0:
    return 0
  v = d.contact_vert[c, side]
  if v >= 0:
    vert[0] = m.flex_vertadr[f] + v
    weight[0] = 1.0
    return 1
  e = d.contact_elem[c, side]
  dim = m.flex_dim[f]
  adr = m.flex_elemdataadr[f] + e * (dim + 1)
  for i in range(dim + 1):
    vert[i] = m.flex_vertadr[f] + m.flex_elem[adr + i]
  x = d.flexvert_xpos
  p = (d.contact_pos[c, 0], d.contact_pos[c, 1], d.contact_pos[c, 2])
  if dim == 1:
    a, b = row3(x, vert[0]), row3(x, vert[1])
    weight[0], weight[1] = _closest_segment(p[0], p[1], p[2], a[0], a[1], a[2], b[0], b[1],
                                            b[2])
  elif dim == 2:
    weight[0], weight[1], weight[2] = closest_triangle(p, row3(x, vert[0]),
                                                        row3(x, vert[1]), row3(x, vert[2]))
  else:
    _closest_tetra(p, x, vert[0], vert[1], vert[2], vert[3], weight)
  return dim + 1
