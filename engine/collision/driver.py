"""Collision driver: body-pair broadphase, filters, explicit pairs, narrowphase dispatch and
contact parameters, in the order MuJoCo's mj_collision produces contacts.

MuJoCo's broadphase sweeps covariance-aligned boxes; which body pairs survive it does not change
the contacts (a pruned pair cannot have geoms within margin), only the work. We test body pairs
in signature order with world-aligned boxes, so contacts come out in MuJoCo's order: body pairs
by signature, explicit <pair>s merged in by signature, geoms in id order within a body pair.
Flexes take part as MuJoCo's "bodyflex" ids nbody + f: a body : flex pair sorts after the
body's body pairs, flex : flex pairs after all of them, and each flex's self-collision comes
last (engine/collision/flex.py collides them).
"""

import numpy as np

from numjoco.engine.collision import convex as cvx
from numjoco.engine.collision import flex as cf
from numjoco.engine.collision import hfield as hf
from numjoco.engine.collision import libccd as ccd
from numjoco.engine import constraint as cn
from numjoco.engine.collision import plane
from numjoco.engine.collision import primitive as prim
from numjoco.engine.collision import table
from numjoco.engine.collision import sdf as sdf
from numjoco.engine import sleep as sl
from numjoco.engine import timer as tm
from numjoco.engine._borrow import borrowed as _b
from numjoco.engine._jit import inline, jit
from numjoco.engine import types as t
from numjoco.engine._sig import unit, M, D, i8, f8, NEEDS_CONVEX, NEEDS_HFIELD, NEEDS_MESH, WORK

_DSBL_CONSTRAINT = int(t.mjtDisableBit.CONSTRAINT)
_DSBL_CONTACT = int(t.mjtDisableBit.CONTACT)
_DSBL_FILTERPARENT = int(t.mjtDisableBit.FILTERPARENT)
_DSBL_MULTICCD = int(t.mjtDisableBit.MULTICCD)
_DSBL_NATIVECCD = int(t.mjtDisableBit.NATIVECCD)
_DSBL_MIDPHASE = int(t.mjtDisableBit.MIDPHASE)
_ENBL_OVERRIDE = int(t.mjtEnableBit.OVERRIDE)
_ENBL_SLEEP = int(t.mjtEnableBit.SLEEP)
_PLANE = int(t.mjtGeom.PLANE)
_HFIELD = int(t.mjtGeom.HFIELD)
_SPHERE = int(t.mjtGeom.SPHERE)
_CAPSULE = int(t.mjtGeom.CAPSULE)
_ELLIPSOID = int(t.mjtGeom.ELLIPSOID)
_CYLINDER = int(t.mjtGeom.CYLINDER)
_BOX = int(t.mjtGeom.BOX)
_MESH = int(t.mjtGeom.MESH)
_SDF = int(t.mjtGeom.SDF)
_CONTACTFULL = int(t.mjtWarning.CONTACTFULL)
# Rows of Model/Data fields taken in the per-pair tests and passed to the colliders are
# borrowed (`_b`, engine/_borrow.py): a plain view is reference counted (a runtime call, even
# on its NULL meminfo) wherever it is bound or passed, and these run for every candidate pair.


@inline
def _filter_sphere(m, d, g1, g2, margin):
  """True when the bounding spheres (or a plane and a sphere) are farther apart than margin."""
  r1, r2 = m.geom_rbound[g1], m.geom_rbound[g2]
  p1, p2 = _b(d.geom_xpos[g1]), _b(d.geom_xpos[g2])
  if r1 > 0 and r2 > 0:
    dx, dy, dz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    bound = r1 + r2 + margin
    return dx * dx + dy * dy + dz * dz > bound * bound
  if m.geom_type[g1] == _PLANE and r2 > 0:
    mat = _b(d.geom_xmat[g1])
    dist = (p2[0] - p1[0]) * mat[2] + (p2[1] - p1[1]) * mat[5] + (p2[2] - p1[2]) * mat[8]
    if dist > margin + r2:
      return True
  if m.geom_type[g2] == _PLANE and r1 > 0:
    mat = _b(d.geom_xmat[g2])
    dist = (p1[0] - p2[0]) * mat[2] + (p1[1] - p2[1]) * mat[5] + (p1[2] - p2[2]) * mat[8]
    if dist > margin + r1:
      return True
  return False


@inline
def _margin(m, g1, g2, ipair):
  if ipair >= 0:
    return cn.assign_margin(m, m.pair_margin[ipair])
  return cn.assign_margin(m, m.geom_margin[g1] + m.geom_margin[g2])


@inline
def _gap(m, g1, g2, ipair):
  if ipair >= 0:
    return m.pair_gap[ipair]
  return m.geom_gap[g1] + m.geom_gap[g2]


@inline
def _keep_pair(m, d, g1, g2, ipair, merged, start, stop):
  """MuJoCo's filterCollisionPair: False discards the geom pair."""
  if merged:
    for k in range(start, stop):
      if ((m.pair_geom1[k] == g1 and m.pair_geom2[k] == g2)
          or (m.pair_geom1[k] == g2 and m.pair_geom2[k] == g1)):
        return False
  if ipair >= 0 and (m.opt_enableflags[0] & _ENBL_SLEEP):
    # an explicit pair with no awake side: skipped (engine/sleep.py)
    if d.body_awake[m.geom_bodyid[g1]] != 1 and d.body_awake[m.geom_bodyid[g2]] != 1:
      return False
  if ipair < 0:
    if (not (m.geom_contype[g1] & m.geom_conaffinity[g2])
        and not (m.geom_contype[g2] & m.geom_conaffinity[g1])):
      return False
  if _filter_sphere(m, d, g1, g2, _margin(m, g1, g2, ipair) + _gap(m, g1, g2, ipair)):
    return False
  return table.collider(m.geom_type[g1], m.geom_type[g2]) != table.NONE


@jit
def _contact_param(m, g1, g2, ipair, out):
  """condim and mixed parameters of a geom pair (mj_contactParam), into out[0:15]:
  friction[5], solref[2], solreffriction[2], solimp[5], adhesion; returns condim.
  Adhesion: the pair's, else the higher-priority geom's, else the sum of both (the mixing is
  collision.flex.contact_param's, which also mixes flex sides)."""
  for i in range(15):
    out[i] = 0.0
  if ipair >= 0:
    for i in range(5):
      out[i] = m.pair_friction[ipair, i]
      out[9 + i] = m.pair_solimp[ipair, i]
    for i in range(2):
      out[5 + i] = m.pair_solref[ipair, i]
      out[7 + i] = m.pair_solreffriction[ipair, i]
    out[14] = m.pair_adhesion[ipair]
    return m.pair_dim[ipair]
  return cf.contact_param(m, g1, g2, -1, -1, out)   # the geom : geom case of the mixer


@unit((M, D, i8, i8, f8, WORK), i8, needs=NEEDS_MESH)
def collide_mesh(m, d, g1, g2, margin, w):
  """Narrowphase of a pair whose geom 2 is a mesh, or an SDF geom's mesh under a plane
  (mjc_PlaneConvex / mjc_Convex); w: the work buffers' views (`work_views`)."""
  vert2, ext2, graph2 = cvx.mesh_arrays(m, g2)
  poly2 = cvx.mesh_polys(m, g2)
  if m.geom_type[g1] == _PLANE:
    return plane.plane_mesh(d.geom_xpos[g1], d.geom_xmat[g1], d.geom_xpos[g2], d.geom_xmat[g2],
                          vert2, ext2, graph2, poly2, margin, d.col_dist, d.col_pos, d.col_frame)
  vert1, ext1, graph1 = cvx.mesh_arrays(m, g1)
  return cvx.collide_mesh_views(
      m.geom_type[g1], m.geom_size[g1], d.geom_xpos[g1], d.geom_xmat[g1], vert1, ext1, graph1,
      cvx.mesh_polys(m, g1), m.geom_type[g2], m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2],
      vert2, ext2, graph2, poly2, margin, min(m.opt_ccd_iterations[0], m.nccd), m.opt_ccd_tolerance[0],
      m.opt_disableflags[0], d.col_dist, d.col_pos, d.col_frame, w, d.col_ibuf)


work_views = cvx.work_views


@unit((M, D, i8, i8, f8, WORK), i8, needs=NEEDS_HFIELD)
def collide_hfield(m, d, g1, g2, margin, w):
  """Narrowphase of height field g1 with any convex geom g2 (mjc_ConvexHField); w: the work
  buffers' views (`work_views`)."""
  h = m.geom_dataid[g1]
  adr = m.hfield_adr[h]
  nrow, ncol = m.hfield_nrow[h], m.hfield_ncol[h]
  vert2, ext2, graph2 = cvx.mesh_arrays(m, g2)
  return hf.collide_hfield(
      m.hfield_size[h], nrow, ncol, m.hfield_data[adr:adr + nrow * ncol], d.geom_xpos[g1],
      d.geom_xmat[g1], m.geom_type[g2], m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2],
      m.geom_rbound[g2], vert2, ext2, graph2, margin, min(m.opt_ccd_iterations[0], m.nccd),
      m.opt_ccd_tolerance[0], m.opt_disableflags[0], d.col_dist, d.col_pos, d.col_frame,
      d.col_fbuf, d.col_ibuf, w)


@jit
def _obb_separated(m, d, g1, g2, margin):
  """True when the geoms' oriented bounding boxes (geom_aabb in each geom's frame) are farther
  apart than margin along one of their six face normals (the test of MuJoCo's mj_collideOBB).
  Geoms with an infinite box (planes) are never separated."""
  a1, a2 = _b(m.geom_aabb[g1]), _b(m.geom_aabb[g2])
  if a1[3] >= 1e10 or a1[4] >= 1e10 or a1[5] >= 1e10:
    return False
  if a2[3] >= 1e10 or a2[4] >= 1e10 or a2[5] >= 1e10:
    return False
  p1, p2, r1, r2 = (_b(d.geom_xpos[g1]), _b(d.geom_xpos[g2]), _b(d.geom_xmat[g1]),
                    _b(d.geom_xmat[g2]))
  # box centers in the world
  c10 = p1[0] + r1[0] * a1[0] + r1[1] * a1[1] + r1[2] * a1[2]
  c11 = p1[1] + r1[3] * a1[0] + r1[4] * a1[1] + r1[5] * a1[2]
  c12 = p1[2] + r1[6] * a1[0] + r1[7] * a1[1] + r1[8] * a1[2]
  c20 = p2[0] + r2[0] * a2[0] + r2[1] * a2[1] + r2[2] * a2[2]
  c21 = p2[1] + r2[3] * a2[0] + r2[4] * a2[1] + r2[5] * a2[2]
  c22 = p2[2] + r2[6] * a2[0] + r2[7] * a2[1] + r2[8] * a2[2]
  d0, d1, d2 = c20 - c10, c21 - c11, c22 - c12
  for j in range(2):
    rj = r1 if j == 0 else r2
    for k in range(3):
      # face normal k of box j: column k of its rotation
      n0, n1, n2 = rj[k], rj[3 + k], rj[6 + k]
      rad = 0.0
      for l in range(3):
        rad += (abs(a1[3 + l] * (r1[l] * n0 + r1[3 + l] * n1 + r1[6 + l] * n2))
                + abs(a2[3 + l] * (r2[l] * n0 + r2[3 + l] * n1 + r2[6 + l] * n2)))
      if rad + margin < abs(d0 * n0 + d1 * n1 + d2 * n2):
        return True
  return False


@unit((M, D, i8, i8, f8, WORK), i8, needs=NEEDS_CONVEX)
def collide_convex(m, d, g1, g2, margin, w):
  """Narrowphase of two convex primitives without an analytic collider, one of them an
  ellipsoid or a cylinder (GJK/EPA and multicontact, mjc_Convex); w: the work buffers' views
  (`work_views`). A unit apart from `collide_mesh`: a model without meshes compiles only this
  one, a model of spheres, capsules and boxes neither."""
  return cvx.collide_convex_views(m.geom_type[g1], m.geom_size[g1], d.geom_xpos[g1],
                                  d.geom_xmat[g1], m.geom_type[g2], m.geom_size[g2],
                                  d.geom_xpos[g2], d.geom_xmat[g2], margin,
                                  min(m.opt_ccd_iterations[0], m.nccd), m.opt_ccd_tolerance[0],
                                  m.opt_disableflags[0], d.col_dist, d.col_pos, d.col_frame, w,
                                  d.col_ibuf)


@inline
def _collide(m, d, g1, g2, kind, margin, w):
  """Run the collider `kind` (collision/table.py) on geoms g1, g2 (g1 of the lower type) with
  the margin (pair margin plus gap); contacts into d.col_*, returns their count."""
  type1, type2 = m.geom_type[g1], m.geom_type[g2]
  if kind == table.PRIMITIVE:
    return prim.collide_primitive(type1, type2, _b(m.geom_size[g1]), _b(d.geom_xpos[g1]),
                                  _b(d.geom_xmat[g1]), _b(m.geom_size[g2]),
                                  _b(d.geom_xpos[g2]), _b(d.geom_xmat[g2]), margin, d.col_dist,
                                  d.col_pos, d.col_frame)
  if kind == table.HFIELD:
    return collide_hfield(m, d, g1, g2, margin, w)
  if kind == table.MESH_SDF:
    return sdf.collide_mesh_sdf(m, d, g1, g2, d.col_dist, d.col_pos, d.col_frame)
  if kind == table.SDF:
    return sdf.collide_sdf(m, d, g1, g2, d.col_dist, d.col_pos, d.col_frame)
  if type1 != _PLANE and m.opt_disableflags[0] & _DSBL_NATIVECCD:
    return ccd.collide(m, d, g1, g2, margin)   # libccd's MPR (nativeccd disabled)
  if kind == table.MESH:
    return collide_mesh(m, d, g1, g2, margin, w)   # an sdf geom under a plane: its mesh
  return collide_convex(m, d, g1, g2, margin, w)


@inline
def _narrowphase(m, d, g1, g2, ipair, w):
  """Collide one geom pair (g1 has the lower type) and append its contacts to d.contact_*;
  w: the work buffers' views (`work_views`)."""
  margin = _margin(m, g1, g2, ipair)
  gap = _gap(m, g1, g2, ipair)
  type1, type2 = m.geom_type[g1], m.geom_type[g2]
  kind = table.collider(type1, type2)
  if kind == table.NONE:
    return
  # the general colliders are costly: skip pairs whose oriented boxes are apart (they cannot
  # have points within margin + gap, so no contact is lost)
  if kind != table.PRIMITIVE and _obb_separated(m, d, g1, g2, margin + gap):
    return
  for i in range(table.max_contact(m, type1, type2)):   # tangents default to zero
    for k in range(3, 9):
      d.col_frame[i, k] = 0.0
  n = _collide(m, d, g1, g2, kind, margin + gap, w)
  if n <= 0:
    return
  n = min(n, table.max_contact(m, type1, type2))
  nconmax = d.contact_dist.shape[0]
  if d.ncon[0] + n > nconmax:
    d.warning_number[_CONTACTFULL] += 1
    d.warning_lastinfo[_CONTACTFULL] = d.ncon[0]
    return
  par = d.scratch_small
  condim = _contact_param(m, g1, g2, ipair, par)
  for j in range(n):
    c = d.ncon[0]
    d.ncon[0] = c + 1
    d.contact_dist[c] = d.col_dist[j]
    for k in range(3):
      d.contact_pos[c, k] = d.col_pos[j, k]
    for k in range(9):
      d.contact_frame[c, k] = d.col_frame[j, k]
    d.contact_geom1[c] = g1
    d.contact_geom2[c] = g2
    d.contact_geom[c, 0] = g1
    d.contact_geom[c, 1] = g2
    for k in range(2):
      d.contact_flex[c, k] = -1
      d.contact_elem[c, k] = -1
      d.contact_vert[c, k] = -1
    cf.set_params(m, d, c, margin, condim, par)
    _surface_velocity(m, d, c)
    d.contact_efc_address[c] = -1
    d.contact_mu[c] = 0.0
    for k in range(36):
      d.contact_H[c, k] = 0.0


@jit
def _surface_velocity(m, d, c):
  """contact_surfacevel of contact c: the material velocity of geom2's surface minus geom1's
  at the contact point (each geom's surfacevel v + w x (p - geom_xpos), mj_geomSurfaceVelocity)
  in the contact frame: (tangent1, tangent2, spin)."""
  v0 = v1 = v2 = w0 = w1 = w2 = 0.0
  for side in range(2):
    g = d.contact_geom2[c] if side else d.contact_geom1[c]
    sv = _b(m.geom_surfacevel[g])
    if (sv[0] == 0.0 and sv[1] == 0.0 and sv[2] == 0.0 and sv[3] == 0.0 and sv[4] == 0.0
        and sv[5] == 0.0):
      continue
    R = _b(d.geom_xmat[g])
    l0 = R[0] * sv[0] + R[1] * sv[1] + R[2] * sv[2]
    l1 = R[3] * sv[0] + R[4] * sv[1] + R[5] * sv[2]
    l2 = R[6] * sv[0] + R[7] * sv[1] + R[8] * sv[2]
    a0 = R[0] * sv[3] + R[1] * sv[4] + R[2] * sv[5]
    a1 = R[3] * sv[3] + R[4] * sv[4] + R[5] * sv[5]
    a2 = R[6] * sv[3] + R[7] * sv[4] + R[8] * sv[5]
    r0 = d.contact_pos[c, 0] - d.geom_xpos[g, 0]
    r1 = d.contact_pos[c, 1] - d.geom_xpos[g, 1]
    r2 = d.contact_pos[c, 2] - d.geom_xpos[g, 2]
    l0 += a1 * r2 - a2 * r1
    l1 += a2 * r0 - a0 * r2
    l2 += a0 * r1 - a1 * r0
    s = 1.0 if side else -1.0
    v0 += s * l0
    v1 += s * l1
    v2 += s * l2
    w0 += s * a0
    w1 += s * a1
    w2 += s * a2
  f = d.contact_frame[c]
  d.contact_surfacevel[c, 0] = f[3] * v0 + f[4] * v1 + f[5] * v2
  d.contact_surfacevel[c, 1] = f[6] * v0 + f[7] * v1 + f[8] * v2
  d.contact_surfacevel[c, 2] = f[0] * w0 + f[1] * w1 + f[2] * w2


@jit
def _can_collide(m, b):
  return m.body_contype[b] != 0 or m.body_conaffinity[b] != 0


@jit
def _has_plane(m, b):
  for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
    if m.geom_type[g] == _PLANE:
      return True
  return False


@jit
def _filter_body_pair(m, d, b1, b2, filterparent, sleeping):
  """MuJoCo's filterBodyPair: True discards the body pair (`sleeping`: some tree sleeps; a
  sleeping body meets no sleeping body and nothing welded to the world)."""
  w1, w2 = m.body_weldid[b1], m.body_weldid[b2]
  if w1 == w2:
    return True
  if m.body_dofnum[w1] == 0 and m.body_dofnum[w2] == 0:
    return True
  if sleeping:
    a1, a2 = d.body_awake[b1] == 0, d.body_awake[b2] == 0
    if (a1 and a2) or (a1 and w2 == 0) or (a2 and w1 == 0):
      return True
  p1 = m.body_weldid[m.body_parentid[w1]]
  p2 = m.body_weldid[m.body_parentid[w2]]
  if filterparent and w1 != 0 and w2 != 0 and (w1 == p2 or w2 == p1):
    return True
  return False


# slack on the geom boxes of `_body_boxes`: a pair that touches exactly at the margin stays
# in, whatever the rounding of the boxes
_BOX_SLACK = 1e-9


@jit
def _body_boxes(m, d, box):
  """World-aligned box of every body's geoms, grown by each geom's margin + gap (MuJoCo's
  makeAAMM in the world frame: the tighter of the bounding sphere and the geom's own box).
  Also each geom's own box in d.col_geombox, grown by its share of a geom pair's margin and
  gap (half of opt.o_margin under the override flag, as mj_assignMargin gives the pair all of
  it), plus _BOX_SLACK; infinite for a plane (rbound 0)."""
  override = m.opt_enableflags[0] & _ENBL_OVERRIDE
  gbox = d.col_geombox
  for b in range(m.nbody):
    for j in range(3):
      box[b, j] = np.inf
      box[b, 3 + j] = -np.inf
    for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
      margin = 0.5 * m.opt_o_margin[0] if override else m.geom_margin[g] + m.geom_gap[g]
      grow = (0.5 * m.opt_o_margin[0] if override else m.geom_margin[g]) + m.geom_gap[g]
      xp, xm, ab = _b(d.geom_xpos[g]), _b(d.geom_xmat[g]), _b(m.geom_aabb[g])
      r = m.geom_rbound[g]
      for j in range(3):
        cen = xp[j] + xm[3 * j] * ab[0] + xm[3 * j + 1] * ab[1] + xm[3 * j + 2] * ab[2]
        half = (abs(ab[3] * xm[3 * j]) + abs(ab[4] * xm[3 * j + 1])
                + abs(ab[5] * xm[3 * j + 2]))
        lo = max(xp[j] - r, cen - half)
        hi = min(xp[j] + r, cen + half)
        box[b, j] = min(box[b, j], lo - margin)
        box[b, 3 + j] = max(box[b, 3 + j], hi + margin)
        if r > 0:
          gbox[g, j] = lo - grow - _BOX_SLACK
          gbox[g, 3 + j] = hi + grow + _BOX_SLACK
        else:
          gbox[g, j] = -np.inf
          gbox[g, 3 + j] = np.inf


@jit
def _swap_contacts(d, i, j):
  for k in range(3):
    d.contact_pos[i, k], d.contact_pos[j, k] = d.contact_pos[j, k], d.contact_pos[i, k]
  for k in range(9):
    d.contact_frame[i, k], d.contact_frame[j, k] = d.contact_frame[j, k], d.contact_frame[i, k]
  for k in range(5):
    a, b = d.contact_friction[i, k], d.contact_friction[j, k]
    d.contact_friction[i, k], d.contact_friction[j, k] = b, a
    a, b = d.contact_solimp[i, k], d.contact_solimp[j, k]
    d.contact_solimp[i, k], d.contact_solimp[j, k] = b, a
  for k in range(2):
    a, b = d.contact_solref[i, k], d.contact_solref[j, k]
    d.contact_solref[i, k], d.contact_solref[j, k] = b, a
    a, b = d.contact_solreffriction[i, k], d.contact_solreffriction[j, k]
    d.contact_solreffriction[i, k], d.contact_solreffriction[j, k] = b, a
  for k in range(3):
    a, b = d.contact_surfacevel[i, k], d.contact_surfacevel[j, k]
    d.contact_surfacevel[i, k], d.contact_surfacevel[j, k] = b, a
  d.contact_adhesion[i], d.contact_adhesion[j] = d.contact_adhesion[j], d.contact_adhesion[i]
  d.contact_dist[i], d.contact_dist[j] = d.contact_dist[j], d.contact_dist[i]
  a, b = d.contact_includemargin[i], d.contact_includemargin[j]
  d.contact_includemargin[i], d.contact_includemargin[j] = b, a
  d.contact_dim[i], d.contact_dim[j] = d.contact_dim[j], d.contact_dim[i]
  d.contact_geom1[i], d.contact_geom1[j] = d.contact_geom1[j], d.contact_geom1[i]
  d.contact_geom2[i], d.contact_geom2[j] = d.contact_geom2[j], d.contact_geom2[i]
  for k in range(2):   # geom contacts only: their flex, elem and vert are all -1
    a, b = d.contact_geom[i, k], d.contact_geom[j, k]
    d.contact_geom[i, k], d.contact_geom[j, k] = b, a
  d.contact_exclude[i], d.contact_exclude[j] = d.contact_exclude[j], d.contact_exclude[i]


@jit
def _sort_contacts(d, start):
  """Stable sort of contacts [start, ncon) by (geom1, geom2): the order MuJoCo's midphase
  leaves (it sorts each multi-geom body pair's contacts)."""
  for i in range(start + 1, d.ncon[0]):
    j = i
    while j > start and (d.contact_geom1[j - 1] > d.contact_geom1[j]
                         or (d.contact_geom1[j - 1] == d.contact_geom1[j]
                             and d.contact_geom2[j - 1] > d.contact_geom2[j])):
      _swap_contacts(d, j - 1, j)
      j -= 1


@inline
def _collide_body_pair(m, d, b1, b2, merged, start, stop, w):
  """All geom pairs of two bodies, in geom id order; multi-geom pairs then sorted as MuJoCo's
  midphase leaves them. MuJoCo's midphase (mj_collideTree) also drops the pairs of
  primitives whose oriented boxes are apart, as `_narrowphase` does for the general
  colliders: no contact is lost (the boxes hold the geoms) and box-box or capsule-box
  colliders are spared, the most of a robot's geom pairs that pass the bounding spheres."""
  c0 = d.ncon[0]
  midphase = ((m.body_geomnum[b1] > 1 or m.body_geomnum[b2] > 1)
              and not (m.opt_disableflags[0] & _DSBL_MIDPHASE))
  gbox = d.col_geombox
  for g1 in range(m.body_geomadr[b1], m.body_geomadr[b1] + m.body_geomnum[b1]):
    for g2 in range(m.body_geomadr[b2], m.body_geomadr[b2] + m.body_geomnum[b2]):
      # geoms whose boxes (each grown by its share of the pair's margin and gap) are apart
      # have no points within margin + gap: no collider gives them a contact
      if _boxes_apart(gbox[g1], gbox[g2]):
        continue
      if _keep_pair(m, d, g1, g2, -1, merged, start, stop):
        if (midphase and table.collider(m.geom_type[g1], m.geom_type[g2]) == table.PRIMITIVE
                and _obb_separated(m, d, g1, g2, _margin(m, g1, g2, -1) + _gap(m, g1, g2, -1))):
          continue
        if m.geom_type[g1] > m.geom_type[g2]:
          _narrowphase(m, d, g2, g1, -1, w)
        else:
          _narrowphase(m, d, g1, g2, -1, w)
  if midphase:
    _sort_contacts(d, c0)


@inline
def _explicit_pair(m, d, k, w):
  g1, g2 = m.pair_geom1[k], m.pair_geom2[k]
  if _keep_pair(m, d, g1, g2, k, False, 0, 0):
    if m.geom_type[g1] > m.geom_type[g2]:
      _narrowphase(m, d, g2, g1, k, w)
    else:
      _narrowphase(m, d, g1, g2, k, w)


@inline
def _push(sig, ns, value):
  """Append `value` to the growing int64 buffer `sig` holding `ns` values; returns the buffer."""
  if ns == sig.shape[0]:
    grown = np.empty(max(16, 2 * sig.shape[0]), np.int64)
    grown[:ns] = sig[:ns]
    sig = grown
  sig[ns] = value
  return sig


_SMALL_SORT = 32   # sorts of up to this many items: insertion sort (no call, no stack array)


@inline
def _argsort_small(keys, order, n):
  """order[:n] = the indices of keys[:n] in ascending order (insertion sort)."""
  for i in range(n):
    order[i] = i
  for i in range(1, n):
    k = order[i]
    v = keys[k]
    j = i - 1
    while j >= 0 and keys[order[j]] > v:
      order[j + 1] = order[j]
      j -= 1
    order[j + 1] = k


@inline
def _sort_small(a, n):
  """a[:n] sorted ascending in place (insertion sort)."""
  for i in range(1, n):
    v = a[i]
    j = i - 1
    while j >= 0 and a[j] > v:
      a[j + 1] = a[j]
      j -= 1
    a[j + 1] = v


@jit
def _candidate_pairs(m, d, box, always, filterparent, sleeping):
  """Signatures (b1 << 16) + b2 (b1 < b2), ascending and unique, of the body pairs MuJoCo's
  broadphase keeps: both bodies can collide, MuJoCo's body filter passes, and their boxes
  overlap or one of them pairs with every body. A sweep along the axis where the boxes spread
  most: O(n log n + pairs) where testing every pair of bodies was O(n^2) (1.2 ms of a 1.8 ms
  step on 22 humanoids, 353 bodies). `sleeping`: some body sleeps (sleep enabled). Works in
  Data's col_body / col_low / col_pair (a bigger copy of col_pair when the pairs outgrow it)."""
  n = m.nbody
  ids, order, lows = _b(d.col_body[0]), _b(d.col_body[1]), d.col_low
  nc = 0
  for b in range(n):
    if _can_collide(m, b) and m.body_geomnum[b] > 0:
      ids[nc] = b
      nc += 1
  sig = d.col_pair
  ns = 0
  if nc + m.nflex < 2:
    return sig, 0
  if nc < 2:
    return _flex_pairs(m, d, box, always, ids, nc, sig, 0, sleeping)
  axis, spread = 0, -1.0
  for j in range(3):
    lo, hi = np.inf, -np.inf
    for i in range(nc):
      c = box[ids[i], j] + box[ids[i], 3 + j]
      lo = min(lo, c)
      hi = max(hi, c)
    if hi - lo > spread:
      axis, spread = j, hi - lo
  for i in range(nc):
    lows[i] = box[ids[i], axis]
  if nc <= _SMALL_SORT:
    _argsort_small(lows, order, nc)
  else:
    order[:nc] = np.argsort(lows[:nc])
  for i in range(nc):
    bi = ids[order[i]]
    if always[bi, 0] != 0.0:
      continue
    top = box[bi, 3 + axis]
    for k in range(i + 1, nc):
      bk = ids[order[k]]
      if box[bk, axis] > top:
        break
      if always[bk, 0] != 0.0:
        continue
      if _boxes_apart(box[bi], box[bk]):
        continue
      b1, b2 = min(bi, bk), max(bi, bk)
      if not _filter_body_pair(m, d, b1, b2, filterparent, sleeping):
        sig = _push(sig, ns, (b1 << 16) + b2)
        ns += 1
  for i in range(nc):
    ba = ids[i]
    if always[ba, 0] == 0.0:
      continue
    for k in range(nc):
      bk = ids[k]
      if bk == ba or (always[bk, 0] != 0.0 and bk < ba):   # two such bodies: once
        continue
      b1, b2 = min(ba, bk), max(ba, bk)
      if not _filter_body_pair(m, d, b1, b2, filterparent, sleeping):
        sig = _push(sig, ns, (b1 << 16) + b2)
        ns += 1
  if m.nflex:
    sig, ns = _flex_pairs(m, d, box, always, ids, nc, sig, ns, sleeping)
  if ns <= _SMALL_SORT:
    _sort_small(sig, ns)
  else:
    sig[:ns].sort()
  return sig, ns


@jit
def _flex_box(m, d, f, out):
  """World box of flex f's vertices grown by its radius, margin and gap (makeAAMM)."""
  if m.opt_enableflags[0] & _ENBL_OVERRIDE:
    bound = m.flex_radius[f] + 0.5 * m.opt_o_margin[0]
  else:
    bound = m.flex_radius[f] + m.flex_margin[f] + m.flex_gap[f]
  for j in range(3):
    out[j] = np.inf
    out[3 + j] = -np.inf
  x = d.flexvert_xpos
  for v in range(m.flex_vertadr[f], m.flex_vertadr[f] + m.flex_vertnum[f]):
    for j in range(3):
      out[j] = min(out[j], x[v, j] - bound)
      out[3 + j] = max(out[3 + j], x[v, j] + bound)


@inline
def _boxes_apart(a, b):
  """True when the boxes a and b (low corner, then high corner) do not overlap."""
  return (a[0] > b[3] or b[0] > a[3] or a[1] > b[4] or b[1] > a[4] or a[2] > b[5]
          or b[2] > a[5])


@jit
def _flex_pairs(m, d, box, always, ids, nc, sig, ns, sleeping):
  """Append the signatures of MuJoCo's bodyflex pairs: body b : flex f as (b << 16) + nbody + f
  and flex f1 : flex f2 as ((nbody + f1) << 16) + nbody + f2, where the bitmasks match and
  the boxes overlap (a body pairing with every body pairs with every flex); with sleeping
  trees, a pair needs an awake side."""
  nb = m.nbody
  fbox = np.empty((m.nflex, 6))
  for f in range(m.nflex):
    _flex_box(m, d, f, fbox[f])
  for f in range(m.nflex):
    if not (m.flex_contype[f] or m.flex_conaffinity[f]):
      continue
    fawake = not sleeping or sl.flex_awake(m, d, f)
    for i in range(nc):
      b = ids[i]
      if not cf.can_collide_body_flex(m, b, f):
        continue
      if always[b, 0] != 0.0:
        if not fawake:
          continue
      else:
        if _boxes_apart(box[b], fbox[f]):
          continue
        if sleeping and not fawake and not (d.body_awake[b] != 0 and m.body_treeid[b] >= 0):
          continue
      sig = _push(sig, ns, (b << 16) + nb + f)
      ns += 1
    for f2 in range(f + 1, m.nflex):
      if not (m.flex_contype[f] & m.flex_conaffinity[f2]) and not (
          m.flex_contype[f2] & m.flex_conaffinity[f]):
        continue
      if _boxes_apart(fbox[f], fbox[f2]):
        continue
      if sleeping and not fawake and not sl.flex_awake(m, d, f2):
        continue
      sig = _push(sig, ns, ((nb + f) << 16) + nb + f2)
      ns += 1
  return sig, ns


@unit((M, D))
def collision(m, d):
  """Fill d.ncon and d.contact_* (MuJoCo's mj_collision for primitive geoms), timed as MuJoCo
  times it (POS_COLLISION, its broad and narrow phases COL_BROAD, COL_NARROW)."""
  t0 = tm.start(d)
  d.ncon[0] = 0
  dis = m.opt_disableflags[0]
  if (dis & _DSBL_CONSTRAINT) or (dis & _DSBL_CONTACT) or m.nbody + m.nflex < 2:
    tm.end(d, tm.POS_COLLISION, t0)
    return
  filterparent = not (dis & _DSBL_FILTERPARENT)
  box = d.scratch_nbody[0]
  always = d.scratch_nbody[1]   # column 0: 1 for bodies MuJoCo pairs with every body
  _body_boxes(m, d, box)
  for b in range(m.nbody):
    always[b, 0] = 1.0 if ((b == 0 and m.body_geomnum[b] > 0) or (
        m.body_dofnum[m.body_weldid[b]] == 0 and _has_plane(m, b))) else 0.0
  sleeping = (m.opt_enableflags[0] & _ENBL_SLEEP) != 0 and d.nbody_awake[0] < m.nbody
  sig, ns = _candidate_pairs(m, d, box, always, filterparent, sleeping)
  t = tm.end(d, tm.COL_BROAD, t0)
  w = work_views(m, d)
  pairadr = 0
  for i in range(ns):
    signature = sig[i]
    if i > 0 and signature == sig[i - 1]:
      continue
    b1, b2 = signature >> 16, signature & 0xFFFF
    if b2 >= m.nbody:   # bodyflex pair (the explicit pairs before it are body pairs)
      while pairadr < m.npair and m.pair_signature[pairadr] <= signature:
        _explicit_pair(m, d, pairadr, w)
        pairadr += 1
      if b1 < m.nbody:
        cf.collide_body_flex(m, d, b1, b2 - m.nbody)
      else:
        cf.collide_flex_flex(m, d, b1 - m.nbody, b2 - m.nbody)
      continue
    merged = False
    start = pairadr
    while pairadr < m.npair and m.pair_signature[pairadr] <= signature:
      merged = m.pair_signature[pairadr] == signature
      _explicit_pair(m, d, pairadr, w)
      pairadr += 1
    # body-level bitmask (union over each body's geoms)
    if (not (m.body_contype[b1] & m.body_conaffinity[b2])
        and not (m.body_contype[b2] & m.body_conaffinity[b1])):
      continue
    excluded = False
    for k in range(m.nexclude):
      if m.exclude_signature[k] == signature:
        excluded = True
        break
    if excluded:
      continue
    _collide_body_pair(m, d, b1, b2, merged, start, pairadr, w)
  while pairadr < m.npair:
    _explicit_pair(m, d, pairadr, w)
    pairadr += 1
  for f in range(m.nflex):   # self-collisions last
    if not sleeping or sl.flex_awake(m, d, f):
      cf.collide_flex_self(m, d, f)
  tm.end(d, tm.COL_NARROW, t)
  tm.end(d, tm.POS_COLLISION, t0)
