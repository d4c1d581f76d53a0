"""Which collider handles a pair of geom types, and how many contacts it may return.

`COLLIDER[type1, type2]` (type1 <= type2) is MuJoCo's mjCOLLISIONFUNC table
(engine_collision_driver.c) with a collider family in each cell instead of a function pointer:

- PRIMITIVE: an analytic function of collision/primitive.py (plane, sphere, capsule, box pairs
  and plane-cylinder, sphere-cylinder);
- CONVEX: mjc_Convex on two primitives (plane-ellipsoid: mjc_PlaneConvex), collision/convex.py;
- MESH: mjc_Convex / mjc_PlaneConvex with a mesh as geom 2 (an SDF geom under a plane is
  collided as its mesh);
- HFIELD: mjc_ConvexHField; SDF: mjc_SDF; MESH_SDF: mjc_MeshSDF;
- NONE: no collider (plane-plane, plane-hfield, hfield-hfield, hfield-sdf): the pair is dropped.

With native CCD disabled, the CONVEX and MESH cells whose type1 is not a plane use libccd's
MPR (collision/libccd.py). The collision driver and the distance query (collision/distance.py)
both dispatch through this table; `max_contact` is mj_maxContact.
"""
import numpy as np

from numjoco.engine._jit import jit
from numjoco.engine.types import MAXCONPAIR, mjtDisableBit, mjtGeom

NONE, PRIMITIVE, CONVEX, MESH, HFIELD, SDF, MESH_SDF = range(7)
NAMES = ("none", "primitive", "convex", "mesh", "hfield", "sdf", "mesh_sdf")

_ = NONE
P, C, M, H = PRIMITIVE, CONVEX, MESH, HFIELD
# rows type1, columns type2; the lower triangle mirrors the upper
#        plane hfield sphere capsule ellipsoid cylinder box mesh sdf
_UPPER = ((_,    _,     P,     P,      C,        P,       P,  M,   M),          # plane
          (_,    _,     H,     H,      H,        H,       H,  H,   _),          # hfield
          (_,    _,     P,     P,      C,        P,       P,  M,   SDF),        # sphere
          (_,    _,     _,     P,      C,        C,       P,  M,   SDF),        # capsule
          (_,    _,     _,     _,      C,        C,       C,  M,   SDF),        # ellipsoid
          (_,    _,     _,     _,      _,        C,       C,  M,   SDF),        # cylinder
          (_,    _,     _,     _,      _,        _,       P,  M,   SDF),        # box
          (_,    _,     _,     _,      _,        _,       _,  M,   MESH_SDF),   # mesh
          (_,    _,     _,     _,      _,        _,       _,  _,   SDF))        # sdf
COLLIDER = np.array(_UPPER, dtype=np.int8)
COLLIDER = np.maximum(COLLIDER, COLLIDER.T)
del _, P, C, M, H

# mj_maxContact: the contacts a pair may return; SDF pairs are bounded by opt.sdf_initpoints,
# the general convex colliders return 5 with multiccd and 1 without
_FROM_SDF, _MULTICCD = -1, -2
_MAXCON = np.full((9, 9), _MULTICCD, dtype=np.int64)
_G = mjtGeom
for _t in range(9):
  for _u in range(_t, 9):
    if _G.SDF in (_t, _u):
      _n = _FROM_SDF
    elif _t == _G.HFIELD:
      _n = MAXCONPAIR
    elif _G.SPHERE in (_t, _u) or _G.ELLIPSOID in (_t, _u):
      _n = 1
    elif (_t, _u) in ((_G.BOX, _G.BOX), (_G.CAPSULE, _G.BOX)):
      _n = 8 if _t == _G.BOX else 4
    elif (_t, _u) == (_G.CAPSULE, _G.CAPSULE):
      _n = 2
    elif _t == _G.PLANE:
      _n = {_G.CAPSULE: 2, _G.CYLINDER: 4, _G.BOX: 4, _G.MESH: 4}.get(_u, 0)
    else:
      continue
    _MAXCON[_t, _u] = _MAXCON[_u, _t] = _n
del _G, _t, _u, _n

_DSBL_MULTICCD = int(mjtDisableBit.MULTICCD)


@jit
def collider(type1, type2):
  """The collider family of a geom type pair (either order)."""
  return COLLIDER[type1, type2]


@jit
def max_contact(m, type1, type2):
  """Most contacts one geom pair may produce (MuJoCo's mj_maxContact)."""
  n = _MAXCON[type1, type2]
  if n == _FROM_SDF:
    return min(m.opt_sdf_initpoints[0], MAXCONPAIR)   # MAXCONPAIR: the col_* buffers
  if n == _MULTICCD:
    return 1 if m.opt_disableflags[0] & _DSBL_MULTICCD else 5
  return n
