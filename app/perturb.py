"""Mouse perturbation, the UI's half: pick a body with a ray (mjv_select) and move the drag's
reference with the mouse (mjv_movePerturb).

The UI thread picks on snapshot poses and moves its `Perturb`; the worker writes the reference
into Data's d.pert_* fields (app/sim.py's perturb_* commands) and the engine applies MuJoCo's
spring-damper every substep (engine/perturb.py: mjv_initPerturb, mjv_applyPerturbPose/Force).
"""
import dataclasses
import math

import numpy as np

from numjoco.engine.rotation import axis_angle, conj, quat_mul, rotvec
from numjoco.engine.types import mjtGeom


TRANSLATE, ROTATE = 1, 2   # mjtPertBit


@dataclasses.dataclass
class Perturb:
  """mjvPerturb: selected body, grab point, reference pose and which drag is active."""
  select: int = -1
  localpos: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
  refselpos: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
  refquat: np.ndarray = dataclasses.field(default_factory=lambda: np.array([1.0, 0, 0, 0]))
  active: int = TRANSLATE
  scale: float = 1.0

  def move(self, action, reldx, reldy, forward, xiquat=None):
    """mjv_movePerturb: `action` a render.camera.Mouse value; reldx, reldy as MuJoCo passes
    them (fractions of the window height, y up: reldy = -dy_up / height as simulate does);
    `forward` the camera's; `xiquat` the body's inertial frame (limits rotation to 90 deg)."""
    from numjoco.render.camera import Mouse
    action = Mouse(int(action))
    vec = convert2d(action, reldx, reldy, forward)
    if action in (Mouse.MOVE_V, Mouse.MOVE_H):
      self.refselpos = self.refselpos + self.scale * vec
    elif action in (Mouse.ROTATE_V, Mouse.ROTATE_H):
      scl = float(np.linalg.norm(vec))
      if scl == 0:
        return
      q1 = axis_angle(vec / scl, scl * 2 * math.pi)
      q = quat_mul(q1, self.refquat)
      self.refquat = q / np.linalg.norm(q)
      if xiquat is not None:
        dif = rotvec(quat_mul(conj(xiquat), self.refquat))
        ang = float(np.linalg.norm(dif))
        if ang > math.pi / 2:
          self.refquat = quat_mul(xiquat, axis_angle(dif / ang, math.pi / 2))


def convert2d(action, dx, dy, forward):
  """convert2D of engine_vis_interact.c: a mouse motion as a world vector aligned to the camera
  (mjv_alignToCamera: the camera's horizontal heading turns the x/y components)."""
  from numjoco.render.camera import Mouse
  action = Mouse(int(action))
  vec = {Mouse.ROTATE_V: (dy, 0.0, dx), Mouse.ROTATE_H: (dy, dx, 0.0),
         Mouse.MOVE_V: (dx, 0.0, -dy), Mouse.MOVE_H: (dx, -dy, 0.0)}.get(action, (0.0, 0.0, 0.0))
  yx, yy = forward[0], forward[1]
  n = math.hypot(yx, yy)
  yx, yy = (yx / n, yy / n) if n > 1e-10 else (0.0, 0.0)
  return np.array([vec[0] * yy + vec[1] * yx, -vec[0] * yx + vec[1] * yy, vec[2]])


def ray_geom(p, u, gtype, size, pos, mat):
  """Distance along the unit ray (p, u) to a geom, or inf (MuJoCo's mj_rayGeom for primitives;
  meshes and height fields use their bounding box)."""
  R = mat.reshape(3, 3)
  lp = R.T @ (p - pos)
  lu = R.T @ u
  if gtype == mjtGeom.PLANE:
    if abs(lu[2]) < 1e-12:
      return math.inf
    t = -lp[2] / lu[2]
    x, y = lp[:2] + t * lu[:2]
    inside = (size[0] <= 0 or abs(x) <= size[0]) and (size[1] <= 0 or abs(y) <= size[1])
    return t if t >= 0 and inside else math.inf
  if gtype == mjtGeom.SPHERE:
    return _ray_ellipsoid(lp, lu, np.full(3, size[0]))
  if gtype == mjtGeom.ELLIPSOID:
    return _ray_ellipsoid(lp, lu, size)
  if gtype == mjtGeom.CAPSULE:
    r, h = size[0], size[1]
    best = _ray_cylinder_side(lp, lu, r, h)
    for zc in (-h, h):
      best = min(best, _ray_ellipsoid(lp - [0, 0, zc], lu, np.full(3, r)))
    return best
  if gtype == mjtGeom.CYLINDER:
    r, h = size[0], size[1]
    best = _ray_cylinder_side(lp, lu, r, h)
    if abs(lu[2]) > 1e-12:
      for zc in (-h, h):
        t = (zc - lp[2]) / lu[2]
        if t >= 0 and np.hypot(*(lp[:2] + t * lu[:2])) <= r:
          best = min(best, t)
    return best
  return _ray_box(lp, lu, size)


def _ray_ellipsoid(lp, lu, s):
  a, b = lp / s, lu / s
  qa, qb, qc = b @ b, 2 * a @ b, a @ a - 1
  disc = qb * qb - 4 * qa * qc
  if disc < 0 or qa <= 0:
    return math.inf
  sq = math.sqrt(disc)
  for t in ((-qb - sq) / (2 * qa), (-qb + sq) / (2 * qa)):
    if t >= 0:
      return t
  return math.inf


def _ray_cylinder_side(lp, lu, r, h):
  qa = lu[0] ** 2 + lu[1] ** 2
  if qa < 1e-12:
    return math.inf
  qb = 2 * (lp[0] * lu[0] + lp[1] * lu[1])
  qc = lp[0] ** 2 + lp[1] ** 2 - r * r
  disc = qb * qb - 4 * qa * qc
  if disc < 0:
    return math.inf
  sq = math.sqrt(disc)
  for t in ((-qb - sq) / (2 * qa), (-qb + sq) / (2 * qa)):
    if t >= 0 and abs(lp[2] + t * lu[2]) <= h:
      return t
  return math.inf


def _ray_box(lp, lu, s):
  t0, t1 = -math.inf, math.inf
  for k in range(3):
    if abs(lu[k]) < 1e-12:
      if abs(lp[k]) > s[k]:
        return math.inf
      continue
    a, b = (-s[k] - lp[k]) / lu[k], (s[k] - lp[k]) / lu[k]
    t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
  if t0 > t1 or t1 < 0:
    return math.inf
  return t0 if t0 >= 0 else t1


def select(m, snap, origin, direction, geom_groups=None, skip_static=True, skins=None,
           skin_visible=None, *, return_skin=False):
  """(body, world point) hit first by the ray, or (-1, None): mjv_select on geoms (static
  bodies, welded to the world, skipped unless `skip_static` is False) and, given `skins`
  (render.skin.SkinModel of m), on the skins `skin_visible` (bool per skin): a skin hit
  selects the bone body weighing most on the hit face's nearest vertex, at that vertex.
  With `return_skin`, (body, point, skin): the skin hit (mjv_select's skinid), else -1."""
  best, geom = math.inf, -1
  for g in range(m.ngeom):
    if geom_groups is not None:
      grp = int(m.geom_group[g])
      if 0 <= grp < len(geom_groups) and not geom_groups[grp]:
        continue
    if m.geom_rgba[g, 3] == 0:
      continue
    b = int(m.geom_bodyid[g])
    if skip_static and m.body_weldid[b] == 0:
      continue
    gtype = int(m.geom_type[g])
    size = m.geom_aabb[g, 3:] if gtype in (mjtGeom.MESH, mjtGeom.HFIELD, mjtGeom.SDF) else \
        m.geom_size[g]
    pos = snap.geom_xpos[g]
    if gtype in (mjtGeom.MESH, mjtGeom.HFIELD, mjtGeom.SDF):
      pos = pos + snap.geom_xmat[g].reshape(3, 3) @ m.geom_aabb[g, :3]
    t = ray_geom(origin, direction, gtype, size, pos, snap.geom_xmat[g])
    if t < best:
      best, geom = t, g
  if skins is not None and skins.nskin:
    vert, _ = skins.update(snap.xpos, snap.xquat, skin_visible)
    t, body, vid = skins.ray(vert, origin, direction, skin_visible)
    if 0 <= t < best:        # a geom at the same distance wins, as in mjv_select
      point = vert[vid].astype(np.float64)
      return (body, point, int(skins.skin_of_vert[vid])) if return_skin else (body, point)
  hit = (-1, None) if geom < 0 else (int(m.geom_bodyid[geom]), origin + best * direction)
  return hit + (-1,) if return_skin else hit
