"""Offscreen rendering without a window: an EGL context and a framebuffer (tests, screenshots,
video recording)."""
import moderngl
import numpy as np

from numjoco.render.renderer import Renderer, VisOptions


def create_context():
  """A standalone OpenGL 3.3 context through EGL (no X server needed)."""
  try:
    return moderngl.create_standalone_context(backend="egl", require=330)
  except Exception as e:  # noqa: BLE001 - report what is missing, not a deep traceback
    raise RuntimeError(f"cannot create a headless OpenGL context through EGL: {e} "
                       "(install libegl1 and Mesa's libegl-mesa0)") from None


class HeadlessRenderer:
  """A Renderer with its own EGL context and framebuffer of `width` x `height` pixels."""

  def __init__(self, m, width=640, height=480, samples=0, ctx=None):
    if width < 1 or height < 1:
      raise ValueError(f"image size must be positive, got {width}x{height}")
    self._own_ctx = ctx is None
    self.ctx = ctx or create_context()
    self.width, self.height = int(width), int(height)
    self.samples = int(samples)
    self._color = self.ctx.renderbuffer((self.width, self.height), 4)
    self._depth = self.ctx.depth_renderbuffer((self.width, self.height))
    self.fbo = self.ctx.framebuffer([self._color], self._depth)
    self._ms = None
    if self.samples > 1:
      c = self.ctx.renderbuffer((self.width, self.height), 4, samples=self.samples)
      d = self.ctx.depth_renderbuffer((self.width, self.height), samples=self.samples)
      self._ms = (self.ctx.framebuffer([c], d), c, d)
    self.renderer = Renderer(self.ctx, m)

  def render(self, snapshot, camera, opts=None):
    """The image of `snapshot` from `camera`: uint8 array (height, width, 3), rows top-down."""
    target = self._ms[0] if self._ms else self.fbo
    self.renderer.render(snapshot, camera, opts or VisOptions(), self.width, self.height,
                         fbo=target)
    if self._ms:
      self.ctx.copy_framebuffer(self.fbo, self._ms[0])
    raw = self.fbo.read(components=3, alignment=1)
    return np.frombuffer(raw, np.uint8).reshape(self.height, self.width, 3)[::-1].copy()

  def project(self, points_world, camera, snapshot=None):
    """Pixel coordinates of world points in this renderer's images (see Renderer.project)."""
    return self.renderer.project(points_world, camera, self.width, self.height, snapshot)

  def release(self):
    """Free the GL objects (and the context when this object made it)."""
    self.renderer.release()
    for o in (self.fbo, self._color, self._depth) + (self._ms or ()):
      o.release()
    if self._own_ctx:
      self.ctx.release()


def save_png(path, image):
  """Write an (h, w, 3) or (h, w, 4) uint8 image to a PNG file."""
  from PIL import Image
  Image.fromarray(np.asarray(image, np.uint8)).save(path)
