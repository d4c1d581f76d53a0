"""Height-field collisions: MuJoCo's mjc_ConvexHField.

A height field is a union of triangular prisms, two per grid cell, from the base (-size[3]) up
to the elevation (data * size[2]). A geom is tested against the prisms of the sub-grid under
its bounding box (computed with its support function in the height field's frame), one
GJK/EPA penetration per prism (libccd's MPR with native CCD disabled: collision.libccd), at most
mjMAXCONPAIR (50) contacts. With a margin, MuJoCo 4.0 inflates both the prism and the geom by
half of it and reports the distance (the published source raises the prism tops by the margin
instead): a sphere at gap g < margin above a flat top or beside a side wall gets dist = g, its
point midway (tests/test_hfield.py).

The prism is a six-vertex polytope for the convex solver of `collision.convex` (its support
is MuJoCo's: the best of the top three vertices when the direction points up, else of the
bottom three; the vertices are stored top first so ties pick the top as MuJoCo's does).
"""
import math

import numpy as np

from numjoco.engine.collision import convex as cvx
from numjoco.engine.collision import support
from numjoco.engine.collision import libccd as ccd
from numjoco.engine.collision import work as wk
from numjoco.engine._jit import jit
from numjoco.engine.types import MAXCONPAIR, mjtDisableBit, mjtGeom

_DSBL_NATIVECCD = int(mjtDisableBit.NATIVECCD)
_MESH = int(mjtGeom.MESH)
_HFIELD = int(mjtGeom.HFIELD)


@jit
def _add_prism_vert(prism, data, ncol, r, c, i, dx, dy, s0, s1, s2):
  """Shift the prism's vertex window and add grid vertex (r + 1 - i, c) (addPrismVert)."""
  for k in range(3):
    prism[0, k] = prism[1, k]
    prism[1, k] = prism[2, k]
    prism[3, k] = prism[4, k]
    prism[4, k] = prism[5, k]
  dr = 1 - i
  x = dx * c - s0
  y = dy * (r + dr) - s1
  prism[2, 0] = prism[5, 0] = x
  prism[2, 1] = prism[5, 1] = y
  prism[5, 2] = float(data[(r + dr) * ncol + c]) * s2


@jit
def _load_prism(objs, prism, row):
  """Object 0 := the prism, vertices relative to its centroid (top three first)."""
  c0 = c1 = c2 = 0.0
  for v in range(6):
    c0 += prism[v, 0]
    c1 += prism[v, 1]
    c2 += prism[v, 2]
  c0 *= 1.0 / 6.0
  c1 *= 1.0 / 6.0
  c2 *= 1.0 / 6.0
  objs[0, wk.POS] = c0
  objs[0, wk.POS + 1] = c1
  objs[0, wk.POS + 2] = c2
  for j in range(6):
    v = j + 3 if j < 3 else j - 3
    objs[row, 3 * j] = prism[v, 0] - c0
    objs[row, 3 * j + 1] = prism[v, 1] - c1
    objs[row, 3 * j + 2] = prism[v, 2] - c2


@jit
def collide_hfield(hsize, nrow, ncol, data, pos1, mat1, type2, size2, pos2, mat2, rbound2,
                   vert2, ext2, graph2, margin, ccd_iterations, ccd_tolerance, flags, dist, pos,
                   frame, fbuf, ibuf, w):
  """Contacts of height field geom 1 (hsize (4,), data its nrow*ncol elevations) with geom 2
  (vert2/ext2/graph2: its mesh's vertices, mesh_extrema row and mesh_graph block, empty for a
  primitive); returns the count. flags: m.opt.disableflags (NATIVECCD picks libccd's MPR,
  on fbuf/ibuf); w: `cvx.split_work`'s views of the same buffers, made once for every pair of
  a collision pass (the prism goes to row 2, a mesh to the mesh cache).

  Writes dist, pos and the normal in frame[i, 0:3] (zero tangents) as `collide_convex`."""
  s0, s1, s2, s3 = hsize[0], hsize[1], hsize[2], hsize[3]
  # geom 2 in the height field's frame
  d0, d1, d2 = pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]
  lp0 = mat1[0] * d0 + mat1[3] * d1 + mat1[6] * d2
  lp1 = mat1[1] * d0 + mat1[4] * d1 + mat1[7] * d2
  lp2 = mat1[2] * d0 + mat1[5] * d1 + mat1[8] * d2
  radius = rbound2 + margin
  if (s0 < lp0 - radius or -s0 > lp0 + radius or s1 < lp1 - radius or -s1 > lp1 + radius
      or s2 < lp2 - radius or -s3 > lp2 + radius):
    return 0

  objs, objt = w.objs, w.objt
  # geom 2 with its local rotation mat1^T mat2 (margin 0 for its bounding box)
  cvx.set_obj(objs, objt, 1, type2, size2, pos2, mat2, 0.0)
  for a in range(3):
    for b in range(3):
      objs[1, wk.MAT + 3 * a + b] = (mat1[a] * mat2[b] + mat1[3 + a] * mat2[3 + b]
                                       + mat1[6 + a] * mat2[6 + b])
  objs[1, wk.POS] = lp0
  objs[1, wk.POS + 1] = lp1
  objs[1, wk.POS + 2] = lp2
  if type2 == _MESH:
    cvx.set_mesh(objs, objt, 1, vert2, ext2, graph2)
  libccd = flags & _DSBL_NATIVECCD
  if libccd:
    ccd.hfield_begin(objs[1], type2, pos2, mat2, margin, fbuf, ibuf)
  return _prisms(hsize, nrow, ncol, data, pos1, mat1, vert2, graph2, margin, ccd_iterations,
                 ccd_tolerance, libccd, dist, pos, frame, fbuf, ibuf, w)


@jit
def collide_hfield_elem(hsize, nrow, ncol, data, pos1, mat1, x, vid2, n2, r2, center2,
                        margin, ccd_iterations, ccd_tolerance, dist, pos, frame, fbuf, ibuf, w):
  """Contacts of height field geom 1 with a flex element (rows vid2[0:n2] of x, radius r2,
  center2 its box center; MuJoCo's mjc_HFieldElem): the element in the height field's frame
  against the prisms under it, as `collide_hfield` (4.0's margin too: a cloth at gap g < margin
  above a flat top gets dist = g). Native CCD only; w as `collide_hfield`'s (the element goes
  to row 3)."""
  objs, objt = w.objs, w.objt
  # the element, then its vertices moved into the height field's frame
  cvx.set_flex_obj(objs, objt, 1, 3, x, vid2, n2, r2, margin)
  for i in range(n2):
    d0 = objs[3, 3 * i] - pos1[0]
    d1 = objs[3, 3 * i + 1] - pos1[1]
    d2 = objs[3, 3 * i + 2] - pos1[2]
    objs[3, 3 * i] = mat1[0] * d0 + mat1[3] * d1 + mat1[6] * d2
    objs[3, 3 * i + 1] = mat1[1] * d0 + mat1[4] * d1 + mat1[7] * d2
    objs[3, 3 * i + 2] = mat1[2] * d0 + mat1[5] * d1 + mat1[8] * d2
  # its center: the global box center moved into the frame (MuJoCo moves flexelem_aabb's)
  d0, d1, d2 = center2[0] - pos1[0], center2[1] - pos1[1], center2[2] - pos1[2]
  objs[1, wk.POS] = mat1[0] * d0 + mat1[3] * d1 + mat1[6] * d2
  objs[1, wk.POS + 1] = mat1[1] * d0 + mat1[4] * d1 + mat1[7] * d2
  objs[1, wk.POS + 2] = mat1[2] * d0 + mat1[5] * d1 + mat1[8] * d2
  # (the empty mesh arrays only fill the libccd arguments, unused here)
  return _prisms(hsize, nrow, ncol, data, pos1, mat1, x[0:0], vid2[0:0], margin,
                 ccd_iterations, ccd_tolerance, 0, dist, pos, frame, fbuf, ibuf, w)


@jit
def _prisms(hsize, nrow, ncol, data, pos1, mat1, vert2, graph2, margin, ccd_iterations,
            ccd_tolerance, libccd, dist, pos, frame, fbuf, ibuf, w):
  """The prisms of the sub-grid under object 1 (set in the height field's frame, margin
  `margin`) against it, at most MAXCONPAIR contacts in world coordinates; libccd: MPR with
  the state `ccd.hfield_begin` set (a geom only). w: the caller's views of the work buffers
  (`cvx.split_work`)."""
  objs, objt = w.objs, w.objt
  s0, s1, s2, s3 = hsize[0], hsize[1], hsize[2], hsize[3]
  # bounding box of object 1 from its support function
  xmax = support.support(objs, objt, 1, 1.0, 0.0, 0.0)[0]
  xmin = support.support(objs, objt, 1, -1.0, 0.0, 0.0)[0]
  ymax = support.support(objs, objt, 1, 0.0, 1.0, 0.0)[1]
  ymin = support.support(objs, objt, 1, 0.0, -1.0, 0.0)[1]
  zmax = support.support(objs, objt, 1, 0.0, 0.0, 1.0)[2]
  zmin = support.support(objs, objt, 1, 0.0, 0.0, -1.0)[2]
  if (xmin - margin > s0 or xmax + margin < -s0 or ymin - margin > s1
      or ymax + margin < -s1 or zmin - margin > s2 or zmax + margin < -s3):
    return 0

  # the sub-grid under the geom's box grown by the margin (4.0's margin contacts reach the
  # prisms beside it)
  cmin = int(math.floor((xmin - margin + s0) / (2.0 * s0) * (ncol - 1)))
  cmax = int(math.ceil((xmax + margin + s0) / (2.0 * s0) * (ncol - 1)))
  rmin = int(math.floor((ymin - margin + s1) / (2.0 * s1) * (nrow - 1)))
  rmax = int(math.ceil((ymax + margin + s1) / (2.0 * s1) * (nrow - 1)))
  cmin = max(0, cmin)
  cmax = min(ncol - 1, cmax)
  rmin = max(0, rmin)
  rmax = min(nrow - 1, rmax)

  # object 0: the prism, a six-vertex polytope at its centroid (set per prism); both objects
  # inflated by half the margin (MuJoCo 4.0, see the module docstring)
  objt[0, 0] = _HFIELD   # searched like a mesh; its support reports no vertex index
  objt[0, 1] = wk.MODE_GEOM
  for k in range(wk.OBJ_COLS):
    objs[0, k] = 0.0
  objs[0, wk.MAT] = objs[0, wk.MAT + 4] = objs[0, wk.MAT + 8] = 1.0
  objs[0, wk.VADR] = 2
  objs[0, wk.VNUM] = 6
  objs[0, wk.GADR] = -1.0   # no hull graph: exhaustive support
  objs[0, wk.MARGIN] = margin
  objs[1, wk.MARGIN] = margin
  prism = np.zeros((6, 3))

  dx = (2.0 * s0) / (ncol - 1)
  dy = (2.0 * s1) / (nrow - 1)
  prism[0, 2] = prism[1, 2] = prism[2, 2] = -s3

  ncon = 0
  for r in range(rmin, rmax):
    _add_prism_vert(prism, data, ncol, r, cmin, 0, dx, dy, s0, s1, s2)
    _add_prism_vert(prism, data, ncol, r, cmin, 1, dx, dy, s0, s1, s2)
    for c in range(cmin + 1, cmax + 1):
      for i in range(2):
        _add_prism_vert(prism, data, ncol, r, c, i, dx, dy, s0, s1, s2)
        if (prism[3, 2] + margin < zmin and prism[4, 2] + margin < zmin
            and prism[5, 2] + margin < zmin):
          continue
        if libccd:
          ncon += ccd.hfield_prism(prism, vert2, graph2, pos1, mat1, margin, ccd_tolerance,
                                   ccd_iterations, ncon, dist, pos, frame, fbuf, ibuf)
          if ncon >= MAXCONPAIR:
            return ncon
          continue
        _load_prism(objs, prism, 2)
        if cvx.penetration(w, ccd_tolerance, ccd_iterations, margin, ncon, dist, pos, frame):
          # back to the world frame
          ccd.contact_to_world(frame, pos, ncon, mat1, pos1)
          ncon += 1
          if ncon >= MAXCONPAIR:
            return ncon
  return ncon
