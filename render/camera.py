"""The abstract camera of MuJoCo's viewer (mjvCamera): free, tracking or one of the model's.

Pose, mouse motion and the view volume follow engine_vis_interact.c / engine_vis_visualize.c
(mjv_cameraFrame, mjv_moveCamera, mjv_cameraFrustum, mjv_defaultFreeCamera) and the classic
renderer's setView: perspective or orthographic (fovy then is the height in length units),
and a model camera with a sensor size has the off-centre frustum of its intrinsics.
"""
import enum
import math

import numpy as np

from numjoco.render.visual import visual_for


class CameraType(enum.IntEnum):
  """mjtCamera."""
  FREE = 0
  TRACKING = 1
  FIXED = 2


class Mouse(enum.IntEnum):
  """mjtMouse: what a mouse drag does to the camera."""
  NONE = 0
  ROTATE_V = 1
  ROTATE_H = 2
  MOVE_V = 3
  MOVE_H = 4
  ZOOM = 5


ROTATE_V, ROTATE_H, MOVE_V, MOVE_H, ZOOM = (Mouse.ROTATE_V, Mouse.ROTATE_H, Mouse.MOVE_V,
                                            Mouse.MOVE_H, Mouse.ZOOM)


def _enum(kind, value):
  """An enum member from a member, its int value or its name ('rotate_h', 'TRACKING')."""
  if isinstance(value, str):
    try:
      return kind[value.upper()]
    except KeyError:
      raise ValueError(f"unknown {kind.__name__} {value!r}: expected one of "
                       f"{[k.name for k in kind]}") from None
  try:
    return kind(int(value))
  except ValueError:
    raise ValueError(f"unknown {kind.__name__} {value!r}") from None


class Camera:
  """mjvCamera plus the model constants it needs (extent, fovy, clip planes, fixed cameras)."""

  FREE, TRACKING, FIXED = CameraType.FREE, CameraType.TRACKING, CameraType.FIXED
  ROTATE_V, ROTATE_H, MOVE_V, MOVE_H, ZOOM = (Mouse.ROTATE_V, Mouse.ROTATE_H, Mouse.MOVE_V,
                                              Mouse.MOVE_H, Mouse.ZOOM)

  def __init__(self, m=None):
    self.type = CameraType.FREE
    self.lookat = np.zeros(3)
    self.distance = 2.0
    self.azimuth = 90.0
    self.elevation = -45.0
    self.trackbodyid = -1
    self.fixedcamid = -1
    self.extent = 2.0
    self.fovy = 45.0
    self.znear_scale, self.zfar_scale = 0.01, 50.0
    self.orthographic = False     # the free/tracking camera's projection (global/orthographic)
    self.cam_fovy = np.zeros(0)
    self.cam_projection = np.zeros(0, int)
    self.cam_intrinsic = np.zeros((0, 4))
    self.cam_sensorsize = np.zeros((0, 2))
    self.nbody = 1
    if m is not None:
      self.set_model(m)

  @classmethod
  def default_for(cls, m):
    """mjv_defaultFreeCamera: look at the model's center from 1.5 extents away."""
    cam = cls(m)
    vis = visual_for(m)
    cam.lookat = np.array(vis.stat.center, dtype=float)
    cam.distance = 1.5 * vis.stat.extent
    cam.azimuth = vis.global_.azimuth
    cam.elevation = vis.global_.elevation
    return cam

  def set_model(self, m):
    """Take the model constants (keeps the pose: a reload keeps the view)."""
    vis = visual_for(m)
    self.extent = float(vis.stat.extent)
    self.fovy = float(vis.global_.fovy)
    self.znear_scale, self.zfar_scale = float(vis.map.znear), float(vis.map.zfar)
    self.orthographic = bool(getattr(vis.global_, "orthographic", 0))
    self.cam_fovy = np.array(m.cam_fovy, dtype=float)
    ncam = len(self.cam_fovy)
    self.cam_projection = np.array(getattr(m, "cam_projection", np.zeros(ncam)), dtype=int)
    self.cam_intrinsic = np.array(getattr(m, "cam_intrinsic", np.zeros((ncam, 4))), dtype=float)
    self.cam_sensorsize = np.array(getattr(m, "cam_sensorsize", np.zeros((ncam, 2))), dtype=float)
    self.nbody = m.nbody
    if self.type == CameraType.FIXED and not 0 <= self.fixedcamid < m.ncam:
      self.type, self.fixedcamid = CameraType.FREE, -1
    if self.type == CameraType.TRACKING and not 0 <= self.trackbodyid < m.nbody:
      self.type, self.trackbodyid = CameraType.FREE, -1

  def copy(self):
    """An independent copy."""
    c = Camera.__new__(Camera)
    c.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v)
                       for k, v in self.__dict__.items()})
    return c

  # ------------------------------------------------------------------------------- frame

  def _frame_free(self):
    ca, sa = math.cos(math.radians(self.azimuth)), math.sin(math.radians(self.azimuth))
    ce, se = math.cos(math.radians(self.elevation)), math.sin(math.radians(self.elevation))
    forward = np.array([ce * ca, ce * sa, se])
    up = np.array([-se * ca, -se * sa, ce])
    return forward, up

  def pose(self, snapshot=None, m=None):
    """(eye, forward, up) in world coordinates (mjv_cameraFrame); tracking updates lookat."""
    self.type = _enum(CameraType, self.type)
    if self.type == CameraType.FIXED:
      if snapshot is None or not 0 <= self.fixedcamid < len(snapshot.cam_xpos):
        raise ValueError(f"fixed camera {self.fixedcamid} needs a snapshot of a model that has it")
      mat = snapshot.cam_xmat[self.fixedcamid]
      return (snapshot.cam_xpos[self.fixedcamid].copy(), -mat[[2, 5, 8]].copy(),
              mat[[1, 4, 7]].copy())
    if self.type == CameraType.TRACKING and snapshot is not None and self.trackbodyid >= 0:
      if self.trackbodyid >= len(snapshot.subtree_com):
        raise ValueError(f"track body id {self.trackbodyid} is outside the model")
      self.lookat = snapshot.subtree_com[self.trackbodyid].copy()
    forward, up = self._frame_free()
    return self.lookat - self.distance * forward, forward, up

  def view_matrix(self, snapshot=None, m=None):
    """4x4 world-to-eye matrix (OpenGL convention: the eye looks down -z)."""
    eye, forward, up = self.pose(snapshot, m)
    right = np.cross(forward, up)
    v = np.eye(4)
    v[0, :3], v[1, :3], v[2, :3] = right, up, -forward
    v[:3, 3] = -v[:3, :3] @ eye
    return v

  def clip(self):
    """(znear, zfar) as mjv_cameraFrustum: map.znear/zfar times the model extent."""
    return self.znear_scale * self.extent, self.zfar_scale * self.extent

  def _fixed(self):
    """The model camera this camera shows, or -1."""
    if self.type == CameraType.FIXED and 0 <= self.fixedcamid < len(self.cam_fovy):
      return int(self.fixedcamid)
    return -1

  def fovy_deg(self):
    """The vertical field of view: the fixed camera's or the model's global fovy (degrees, or
    the view's height in length units when the projection is orthographic)."""
    c = self._fixed()
    return float(self.cam_fovy[c]) if c >= 0 else self.fovy

  def is_orthographic(self):
    """Whether the view is orthographic: the model camera's projection, else `orthographic`."""
    c = self._fixed()
    return bool(self.cam_projection[c] == 1) if c >= 0 else bool(self.orthographic)

  def frustum(self, aspect):
    """(orthographic, left, right, bottom, top, near, far) of the view volume: mjv_cameraFrustum
    then the classic renderer's setView (the width from the aspect ratio unless a sensor size
    fixes it, then the principal point shifts the frustum off centre)."""
    n, f = self.clip()
    ortho, fovy, c = self.is_orthographic(), self.fovy_deg(), self._fixed()
    zhor = (0.0, 0.0)
    if ortho:
      zver = (fovy / 2, fovy / 2)
    elif c >= 0 and self.cam_sensorsize[c, 1]:
      fx, fy, cx, cy = self.cam_intrinsic[c]
      sx, sy = self.cam_sensorsize[c]
      zhor = (n / fx * (sx / 2 - cx), n / fx * (sx / 2 + cx))
      zver = (n / fy * (sy / 2 - cy), n / fy * (sy / 2 + cy))
    else:
      zver = (n * math.tan(math.radians(fovy) / 2),) * 2
    top, bottom = zver[0], -zver[1]
    center, half = (zhor[1] - zhor[0]) / 2, (zhor[1] + zhor[0]) / 2
    if not half:
      half = 0.5 * aspect * (top - bottom)
    return ortho, center - half, center + half, bottom, top, n, f

  def frustum_height(self):
    """mjv_frustumHeight: the view's height at unit distance (its height when orthographic)."""
    ortho, _, _, bottom, top, n, _ = self.frustum(1.0)
    return (top - bottom) if ortho else (top - bottom) / n

  def projection(self, aspect, znear=None, zfar=None):
    """4x4 projection matrix: glFrustum, or glOrtho for an orthographic view, of `frustum`
    (the near/far planes may be replaced; a perspective view keeps its angles)."""
    ortho, l, r, b, t, n0, f0 = self.frustum(aspect)
    n = n0 if znear is None else znear
    f = f0 if zfar is None else zfar
    p = np.zeros((4, 4))
    if ortho:
      p[0, 0], p[1, 1], p[2, 2] = 2 / (r - l), 2 / (t - b), -2 / (f - n)
      p[0, 3], p[1, 3], p[2, 3] = -(r + l) / (r - l), -(t + b) / (t - b), -(f + n) / (f - n)
      p[3, 3] = 1.0
      return p
    k = n / n0
    l, r, b, t = l * k, r * k, b * k, t * k
    p[0, 0], p[1, 1] = 2 * n / (r - l), 2 * n / (t - b)
    p[0, 2], p[1, 2] = (r + l) / (r - l), (t + b) / (t - b)
    p[2, 2], p[2, 3] = -(f + n) / (f - n), -2 * f * n / (f - n)
    p[3, 2] = -1.0
    return p

  def ray(self, x, y, aspect, snapshot=None):
    """(origin, unit direction) of the ray through the window point (x, y), given as fractions
    of the width and height measured from the bottom-left corner (MuJoCo's relx, rely), as
    mjv_select: from the eye, or parallel to the view from the image plane when orthographic."""
    eye, forward, up = self.pose(snapshot)
    right = np.cross(forward, up)
    ortho, l, r, b, t, n, _ = self.frustum(aspect)
    px, py = l + x * (r - l), b + y * (t - b)
    if ortho:
      return eye + px * right + py * up, forward / np.linalg.norm(forward)
    d = n * forward + px * right + py * up
    return eye, d / np.linalg.norm(d)

  # ------------------------------------------------------------------------------ motion

  def move(self, action, dx, dy):
    """mjv_moveCamera: apply a mouse motion (dx, dy as fractions of the window height)."""
    action = _enum(Mouse, action)
    self.type = _enum(CameraType, self.type)
    if self.type == CameraType.FIXED:
      return
    if action in (Mouse.ROTATE_V, Mouse.ROTATE_H):
      self.azimuth -= dx * 180.0
      self.elevation -= dy * 180.0
    elif action in (Mouse.MOVE_V, Mouse.MOVE_H):
      if self.type == CameraType.TRACKING:
        return
      forward, _ = self._frame_free()
      if action == Mouse.MOVE_V:
        vec = (dx, 0.0, -dy)
      else:
        vec = (dx, -dy, 0.0)
      # align to camera: rotate the horizontal part by the camera's azimuth
      yx, yy = forward[0], forward[1]
      nrm = math.hypot(yx, yy)
      yx, yy = (yx / nrm, yy / nrm) if nrm > 0 else (0.0, 0.0)
      world = np.array([vec[0] * yy + vec[1] * yx, vec[0] * -yx + vec[1] * yy, vec[2]])
      scl = self.frustum_height() * self.distance
      if self.is_orthographic():
        scl *= 0.15      # MuJoCo's "mystery coefficient" for orthographic views
      self.lookat = self.lookat - scl * world
    elif action == Mouse.ZOOM:
      self.distance -= math.log(1 + self.distance / self.extent / 3) * dy * 9 * self.extent
    else:
      raise ValueError(f"unknown camera action {action!r}")
    if self.azimuth > 180:
      self.azimuth -= 360
    if self.azimuth < -180:
      self.azimuth += 360
    self.elevation = min(89.0, max(-89.0, self.elevation))
    self.distance = min(100 * self.extent, max(0.01 * self.extent, self.distance))
