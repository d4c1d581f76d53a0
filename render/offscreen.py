"""numjoco.Renderer: offscreen images of a model with the API of mujoco.Renderer (MuJoCo's
mujoco/rendering/classic/renderer.py). `update_scene` makes the scene of a Data from a camera
(mjv_updateScene), `render` draws it (mjr_render) and returns its pixels: RGB, or the depth or
segmentation image. Headless through EGL (no display needed), or in a given moderngl context.

    with numjoco.Renderer(m, height=480, width=640) as r:
      r.update_scene(d, camera="side")
      rgb = r.render()
"""
import numpy as np

from numjoco.render.camera import Camera, CameraType
from numjoco.render.headless import HeadlessRenderer
from numjoco.render.scene import VisOptions
from numjoco.render.snapshot import Snapshot


class Renderer:
  """Renders a model's Data offscreen, as mujoco.Renderer: `update_scene(data, camera,
  scene_option)`, then `render()` gives (height, width, 3) uint8 RGB, or after
  `enable_depth_rendering()` (height, width) float32 distances along the view axis (metres,
  the far clip distance where nothing is drawn), or after `enable_segmentation_rendering()`
  (height, width, 2) int32 [objid, objtype] (mjtObj; -1 where nothing is drawn). `close()`
  frees it; it is also a context manager."""

  def __init__(self, model, height=480, width=640, max_geom=10000, *, samples=None, ctx=None,
               check_size=True):
    """A renderer of `model` making images of `height` x `width` pixels, whose scene holds at
    most `max_geom` geoms and decorations (mjvScene.maxgeom: rangefinder markers beyond it are
    left out). As MuJoCo's, the size may not exceed the model's offscreen buffer (<visual>
    <global offwidth offheight>, 640 x 480 by default): a ValueError says so; with
    `check_size=False` any size is drawn. `samples`: multisampling of the RGB image (None: the
    model's <quality offsamples>, 4 by default). `ctx`: a moderngl context to draw in (e.g. a
    window's; kept open by `close`) instead of a new headless EGL one."""
    self._headless = None
    if check_size:
      _check_size(model, int(width), int(height))
    self._model = model
    self._width, self._height = int(width), int(height)
    self._headless = HeadlessRenderer(model, self._width, self._height,
                                      samples=offscreen_samples(model, samples), ctx=ctx)
    self._headless.renderer.max_geom = max_geom
    self._scene_option = VisOptions()
    self._snapshot = None
    self._scene = None
    self._view = None        # (view matrix, projection, far clip, options) of the scene
    self._depth_rendering = False
    self._segmentation_rendering = False

  model = property(lambda self: self._model, doc="the Model")
  scene_renderer = property(lambda self: self._headless.renderer,
                            doc="the render.renderer.SceneRenderer that draws (its lines, "
                                "arrows and user_geoms hooks)")
  scene = property(lambda self: self._scene,
                   doc="the last update_scene's Scene (render.scene.Scene), or None")
  height = property(lambda self: self._height, doc="image height in pixels")
  width = property(lambda self: self._width, doc="image width in pixels")

  def enable_depth_rendering(self):
    """render() returns depth images (segmentation off)."""
    self._segmentation_rendering = False
    self._depth_rendering = True

  def disable_depth_rendering(self):
    """render() no longer returns depth images."""
    self._depth_rendering = False

  def enable_segmentation_rendering(self):
    """render() returns segmentation images (depth off)."""
    self._segmentation_rendering = True
    self._depth_rendering = False

  def disable_segmentation_rendering(self):
    """render() no longer returns segmentation images."""
    self._segmentation_rendering = False

  def update_scene(self, data, camera=-1, scene_option=None):
    """Make the scene of `data` (Data of this model, after forward or step, or a
    render.Snapshot of one) as `render` will draw it (mjv_updateScene). `camera`: -1 the model's default free camera
    (mjv_defaultFreeCamera), a model camera's id or name, or a render.Camera (a tracking camera
    moves its lookat, as MuJoCo's). `scene_option`: render.VisOptions (None: the defaults,
    as MuJoCo's mjvOption)."""
    self._check_open("update_scene")
    if scene_option is not None and not isinstance(scene_option, VisOptions):
      raise TypeError(f"scene_option must be a numjoco.render.VisOptions, got "
                      f"{type(scene_option).__name__}")
    cam = self._camera(camera)
    if isinstance(data, Snapshot):     # a snapshot taken already (the viewer's recorder)
      self._snapshot = data
    elif self._snapshot is None:
      self._snapshot = Snapshot(self._model, data)
    else:
      self._snapshot.capture(self._model, data)
    self._update(cam, scene_option or self._scene_option)

  def _update(self, cam, opts):
    """The scene of the snapshot seen by `cam` under VisOptions `opts`, and that view."""
    snap = self._snapshot
    self._scene = self._headless.renderer.update_scene(snap, cam, opts)
    self._view = (cam.view_matrix(snap), cam.copy().projection, cam.clip()[1], opts)

  def _camera(self, camera):
    """A render.Camera of `camera` (as update_scene takes it), or a ValueError as MuJoCo's."""
    m = self._model
    if isinstance(camera, Camera):
      return camera
    if isinstance(camera, str):
      import numjoco
      cid = numjoco.name2id(m, "camera", camera)
      if cid == -1:
        raise ValueError(f'The camera "{camera}" does not exist.')
    elif isinstance(camera, (int, np.integer)) and not isinstance(camera, bool):
      cid = int(camera)
    else:
      raise TypeError(f"camera must be an id, a name or a numjoco.render.Camera, got "
                      f"{type(camera).__name__}")
    if cid < -1 or cid >= m.ncam:
      raise ValueError(f"The camera id {cid} is out of range [-1, {m.ncam}).")
    cam = Camera.default_for(m)
    if cid >= 0:
      cam.type, cam.fixedcamid = CameraType.FIXED, cid
    return cam

  def render(self, *, out=None):
    """The pixels of the scene (rows top-down): (height, width, 3) uint8 RGB, (height, width)
    float32 depth or (height, width, 2) int32 segmentation, as enabled. `out`: an array of that
    shape to fill (cast to its dtype) and return. Before any update_scene, the model at qpos0
    from the default free camera."""
    self._check_open("render")
    h, w = self._height, self._width
    if self._depth_rendering:
      shape = (h, w)
    elif self._segmentation_rendering:
      shape = (h, w, 2)
    else:
      shape = (h, w, 3)
    if out is not None and out.shape != shape:
      raise ValueError(
          f"Expected `out.shape == {shape}`. Got `out.shape={out.shape}` instead. When using "
          "depth rendering, the out array should be of shape `(height, width)`, when using "
          "segmentation rendering `(height, width, 2)`, and otherwise `(height, width, 3)`. "
          f"Got `(self.height, self.width)={(h, w)}`, "
          f"`self._depth_rendering={self._depth_rendering}`, and "
          f"`self._segmentation_rendering={self._segmentation_rendering}`.")
    if self._scene is None:
      self._snapshot = Snapshot(self._model)
      self._update(Camera.default_for(self._model), self._scene_option)
    view, projection, far, opts = self._view
    if self._depth_rendering or self._segmentation_rendering:
      seg, depth = self._headless.draw_ids(self._scene, view, projection, far)
      image = depth if self._depth_rendering else seg
    else:
      image = self._headless.draw(self._scene, view, projection, opts)
    if out is None:
      return image
    np.copyto(out, image, casting="unsafe")
    return out

  def _check_open(self, what):
    if self._headless is None:
      raise RuntimeError(f"{what} cannot be called after close.")

  def close(self):
    """Free the GL objects and the EGL context (not a context given as `ctx`)."""
    if self._headless is not None:
      self._headless.release()
    self._headless = None

  def __enter__(self):
    return self

  def __exit__(self, exc_type, exc_value, traceback):
    self.close()

  def __del__(self):
    self.close()


def offscreen_samples(m, samples=None):
  """Multisampling of offscreen RGB images: `samples`, or the model's <quality offsamples>
  (MuJoCo's offscreen default, 4) when None; 0 for none (0 or 1)."""
  if samples is None:
    vis = getattr(m, "vis", None)
    samples = int(vis.quality.offsamples) if vis is not None else 4
  return int(samples) if samples > 1 else 0


def _check_size(m, width, height):
  """MuJoCo's ValueError for an image larger than the model's offscreen framebuffer."""
  g = m.vis.global_
  if width > g.offwidth:
    raise ValueError(
        f"Image width {width} > framebuffer width {g.offwidth}. Either reduce the image\n"
        "width or specify a larger offscreen framebuffer in the model XML using the\n"
        "clause:\n<visual>\n  <global offwidth=\"my_width\"/>\n</visual>")
  if height > g.offheight:
    raise ValueError(
        f"Image height {height} > framebuffer height {g.offheight}. Either reduce the\n"
        "image height or specify a larger offscreen framebuffer in the model XML using\n"
        "the clause:\n<visual>\n  <global offheight=\"my_height\"/>\n</visual>")
