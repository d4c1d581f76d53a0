"""Offscreen rendering without a window: an EGL context and framebuffers of one size, drawn by a
SceneRenderer (render/offscreen.py's Renderer, tests, screenshots, video recording)."""
import moderngl
import numpy as np

from numjoco.render import shaders
from numjoco.render.renderer import SceneRenderer, VisOptions
from numjoco.render.segment import decode


def create_context():
  """A standalone OpenGL 3.3 context through EGL (no X server needed)."""
  try:
    return moderngl.create_standalone_context(backend="egl", require=330)
  except Exception as e:  # noqa: BLE001 - report what is missing, not a deep traceback
    raise RuntimeError(f"cannot create a headless OpenGL context through EGL: {e} "
                       "(install libegl1 and Mesa's libegl-mesa0)") from None


class HeadlessRenderer:
  """A SceneRenderer (`renderer`) with its own EGL context (or the given one) and framebuffers
  of `width` x `height` pixels: colour images (multisampled with `samples` > 1), and flat
  segmentation and depth images."""

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
      # drawn into a multisampled texture, resolved by a shader pass into `_color`
      c = self.ctx.texture((self.width, self.height), 4, samples=self.samples)
      d = self.ctx.depth_renderbuffer((self.width, self.height), samples=self.samples)
      prog = self.ctx.program(vertex_shader=shaders.RESOLVE_VS, fragment_shader=shaders.RESOLVE_FS)
      prog["u_samples"].value = self.samples
      prog["u_image"].value = 0
      self._ms = (self.ctx.framebuffer([c], d), c, d, self.ctx.framebuffer([self._color]),
                  self.ctx.vertex_array(prog, []), prog)
    self._id_gl = None        # the id pass's framebuffer and attachments, made when first used
    self.renderer = SceneRenderer(self.ctx, m)

  def render(self, snapshot, camera, opts=None):
    """The image of `snapshot` from `camera`: uint8 array (height, width, 3), rows top-down."""
    opts = opts or VisOptions()
    return self.draw(self.renderer.update_scene(snapshot, camera, opts),
                     camera.view_matrix(snapshot), camera.projection, opts)

  def draw(self, scene, view, projection, opts=None):
    """The image of a Scene (SceneRenderer.update_scene) with the 4x4 `view` matrix and
    `projection(aspect)` (a Camera's): uint8 array (height, width, 3), rows top-down."""
    target = self._ms[0] if self._ms else self.fbo
    self.renderer.draw(scene, view, projection, opts or VisOptions(), self.width, self.height,
                       fbo=target)
    if self._ms:
      self._resolve()
    return self._read(self.fbo, 3, "f1")

  def _resolve(self):
    """The multisampled image averaged into `_color` (what `fbo` reads)."""
    ms, image, _, target, vao, _ = self._ms
    target.use()
    self.ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
    image.use(0)
    vao.render(moderngl.TRIANGLES, vertices=3)

  def draw_ids(self, scene, view, projection, far):
    """Segmentation and depth images of a Scene (SceneRenderer.draw_ids), rows top-down: (h, w,
    2) int32 [objid, objtype] (-1 where nothing was drawn) and (h, w) float32 distances along
    the view axis (`far` where nothing was drawn), as mujoco.Renderer's."""
    if self._id_gl is None:
      size = (self.width, self.height)
      attach = (self.ctx.renderbuffer(size, 4), self.ctx.renderbuffer(size, 1, dtype="f4"))
      depth = self.ctx.depth_renderbuffer(size)
      self._id_gl = (self.ctx.framebuffer(list(attach), depth),) + attach + (depth,)
    fbo = self._id_gl[0]
    table = self.renderer.draw_ids(scene, view, projection, self.width, self.height, fbo)
    seg = decode(self._read(fbo, 3, "f1"), table)
    dist = self._read(fbo, 1, "f4", attachment=1)
    dist[seg[..., 1] == -1] = far
    return seg, dist

  def _read(self, fbo, components, dtype, attachment=0):
    """An attachment of `fbo` as an array (height, width[, components]), rows top-down."""
    raw = fbo.read(components=components, alignment=1, dtype=dtype, attachment=attachment)
    shape = (self.height, self.width) + ((components,) if components > 1 else ())
    a = np.frombuffer(raw, np.uint8 if dtype == "f1" else np.float32).reshape(shape)
    return a[::-1].copy()

  def project(self, points_world, camera, snapshot=None):
    """Pixel coordinates of world points in this renderer's images (see Renderer.project)."""
    return self.renderer.project(points_world, camera, self.width, self.height, snapshot)

  def release(self):
    """Free the GL objects (and the context when this object made it)."""
    self.renderer.release()
    for o in (self.fbo, self._color, self._depth) + (self._ms or ()) + (self._id_gl or ()):
      o.release()
    if self._own_ctx:
      self.ctx.release()


def save_png(path, image):
  """Write an (h, w, 3) or (h, w, 4) uint8 image to a PNG file."""
  from PIL import Image
  Image.fromarray(np.asarray(image, np.uint8)).save(path)
