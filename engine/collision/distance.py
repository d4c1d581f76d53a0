"""The distance between two geoms, as MuJoCo's mj_geomDistance: the collision sensors'
(distance, normal, fromto) query. It picks the collider through the same type-pair table as the
collision driver (collision/table.py): with native CCD, convex pairs (and box-box) get the GJK
distance of mjc_ccd without margins (mj_geomDistanceCCD); the other pairs run their collision
function with the cutoff as margin and keep the deepest contact.
"""
from numjoco.engine._jit import jit
from numjoco.engine.collision import convex as cvx
from numjoco.engine.collision import driver as drv
from numjoco.engine.collision import libccd as ccd
from numjoco.engine.collision import plane
from numjoco.engine.collision import primitive as prim
from numjoco.engine.collision import table
from numjoco.engine.types import mjtDisableBit, mjtGeom

_DSBL_NATIVECCD = int(mjtDisableBit.NATIVECCD)
_PLANE, _BOX, _MESH, _SDF = int(mjtGeom.PLANE), int(mjtGeom.BOX), int(mjtGeom.MESH), int(mjtGeom.SDF)


@jit
def _distance_ccd(m, d, g1, g2, distmax, fromto):
  """mj_geomDistanceCCD: native CCD of geoms g1, g2 in the caller's order, without margins."""
  iters = min(m.opt_ccd_iterations[0], m.nccd)
  w = cvx.work_views(m, d)
  objs, objt, xw = w[0], w[1], w[6]
  cvx.set_obj(objs, objt, 0, m.geom_type[g1], m.geom_size[g1], d.geom_xpos[g1],
              d.geom_xmat[g1], 0.0)
  cvx.set_obj(objs, objt, 1, m.geom_type[g2], m.geom_size[g2], d.geom_xpos[g2],
              d.geom_xmat[g2], 0.0)
  vert1, ext1, graph1 = cvx.mesh_arrays(m, g1)
  vert2, ext2, graph2 = cvx.mesh_arrays(m, g2)
  if m.geom_type[g2] == _MESH:
    cvx.set_meshes(objs, objt, m.geom_type[g1], vert1, ext1, graph1, vert2, ext2, graph2)
  elif m.geom_type[g1] == _MESH:
    cvx.set_mesh(objs, objt, 0, vert1, ext1, graph1)
  dist, nx = cvx.ccd(w, m.opt_ccd_tolerance[0], iters, distmax)
  if nx > 0:
    for k in range(6):
      fromto[k] = xw[k]
  return dist if dist < distmax else distmax


@jit
def geom_distance(m, d, geom1, geom2, distmax, fromto):
  """Smallest signed distance between two geoms up to distmax, the segment from geom1's
  surface to geom2's in fromto (zeros when none is found) (mj_geomDistance)."""
  for k in range(6):
    fromto[k] = 0.0
  dist = distmax
  flip = m.geom_type[geom1] > m.geom_type[geom2]
  g1, g2 = (geom2, geom1) if flip else (geom1, geom2)
  t1, t2 = m.geom_type[g1], m.geom_type[g2]
  kind = table.collider(t1, t2)
  if kind == table.NONE or t2 == _SDF:
    return dist   # no collider, or an sdf geom (not supported by the distance query)
  if not (m.opt_disableflags[0] & _DSBL_NATIVECCD):
    if (t1 != _PLANE and kind != table.HFIELD
            and (kind != table.PRIMITIVE or (t1 == _BOX and t2 == _BOX))):
      return _distance_ccd(m, d, geom1, geom2, distmax, fromto)
  # the pair's collision function with distmax as margin
  if kind == table.PRIMITIVE:
    n = prim.collide_primitive(t1, t2, m.geom_size[g1], d.geom_xpos[g1], d.geom_xmat[g1],
                               m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2], distmax,
                               d.col_dist, d.col_pos, d.col_frame)
  elif kind == table.HFIELD:
    n = drv.collide_hfield(m, d, g1, g2, distmax, drv.work_views(m, d))
  elif t1 != _PLANE:
    n = ccd.collide(m, d, g1, g2, distmax)
  elif kind == table.MESH:
    n = drv.collide_mesh(m, d, g1, g2, distmax, drv.work_views(m, d))
  else:
    n = plane.plane_convex(m.geom_size[g1], d.geom_xpos[g1], d.geom_xmat[g1], t2,
                         m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2], distmax,
                         d.col_dist, d.col_pos, d.col_frame)
  smallest = -1
  for i in range(n):
    if d.col_dist[i] < dist:
      dist = d.col_dist[i]
      smallest = i
  if smallest >= 0:
    s = -0.5 * dist if not flip else 0.5 * dist
    for k in range(3):
      p, nk = d.col_pos[smallest, k], d.col_frame[smallest, k]
      fromto[k] = p + s * nk
      fromto[3 + k] = p - s * nk
  return dist
