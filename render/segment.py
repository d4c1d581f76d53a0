"""The id pass: segmentation and depth images of a Scene, as mjr_render draws a scene with
mjRND_SEGMENT and mjRND_IDCOLOR (what mujoco.Renderer's segmentation and depth images come
from). Every object of the scene is drawn flat in a colour encoding its place in this frame's
table of objects: no lighting, blending, textures, shadows, multisampling, skybox or haze;
transparent geoms and decorations drawn as opaque ones; back faces culled except a plane's (MuJoCo
culls a plane's front when it is seen from behind). The distance along the view axis goes to a
float attachment beside the colour.
"""
import moderngl
import numpy as np

from numjoco.render import shaders
from numjoco.render.scene import QUAD

# the corners of a wide line's quad (shaders.WIDELINE_VS: x 0 at p0, 1 at p1; y the side)
WIDE_CORNERS = np.array([0, -1, 0, 1, 1, -1, 1, 1], np.float32)
_ID_COL = 16     # the instance row's first colour column: the id pass's segmentation index
_ID_FMT = "3f 3f 3f 3f 4f 4f 32x/i"
_ID_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color")


class IdPass:
  """The id pass's programs and buffers in one GL context (owned by a SceneRenderer)."""

  def __init__(self, ctx):
    self.ctx = ctx
    self.prog = ctx.program(vertex_shader=shaders.ID_VS, fragment_shader=shaders.ID_FS)
    self._line_prog = ctx.program(vertex_shader=shaders.ID_WIDELINE_VS,
                                  fragment_shader=shaders.ID_FS)
    self._corners = ctx.buffer(WIDE_CORNERS.tobytes())
    self._line_buf = ctx.buffer(reserve=64 * 10 * 4, dynamic=True)
    self._line_vao = ctx.vertex_array(self._line_prog, [
        (self._corners, "2f", "in_corner"),
        (self._line_buf, "3f 3f 4f/i", "i_p0", "i_p1", "i_color")])
    self._inst = {}      # mesh kind -> instance buffer
    self._vaos = {}      # mesh kind -> (vertex buffer, vertex array over it)

  def _vao(self, kind, vbo, ibo):
    """The vertex array of mesh `kind` (vertex and index buffers `vbo`, `ibo`) over its
    instance buffer; made again when the kind's vertex buffer changed (another model)."""
    have = self._vaos.get(kind)
    if have is not None and have[0] is vbo:
      return have[1]
    if have is not None:
      have[1].release()
    vao = self.ctx.vertex_array(self.prog, [(vbo, "3f 3x4 1f", "in_pos", "in_cap"),
                                            (self._inst_buffer(kind), _ID_FMT, *_ID_ATTRS)], ibo)
    self._vaos[kind] = (vbo, vao)
    return vao

  def forget(self, first):
    """Drop the vertex arrays of mesh kinds `first` and above (the model's meshes changed)."""
    for kind in [k for k in self._vaos if k >= first]:
      self._vaos.pop(kind)[1].release()

  def draw(self, scene, viewproj, view_z, viewport, line_width, buffers, surfaces):
    """Draw `scene` into the bound framebuffer (attachment 0 RGBA8, 1 R32F, cleared to 0) with
    the 4x4 `viewproj`, `view_z` the row of the view matrix that gives the distance along the
    view axis, `viewport` (width, height) in pixels, wide lines `line_width` pixels across;
    `buffers(kind)` gives a mesh kind's (vertex buffer, index buffer or None), `surfaces` are
    the uploaded SkinDraw and FlexDraw. Returns the frame's objects, (n, 2) int32 [objid,
    objtype]: a pixel of colour value k > 0 shows row k - 1."""
    ctx = self.ctx
    ctx.enable(moderngl.DEPTH_TEST)
    ctx.depth_func = "<="      # as mjr_render: of coinciding surfaces the later drawn shows
    ctx.disable(moderngl.BLEND)
    ctx.wireframe = False
    for prog in (self.prog, self._line_prog):
      prog["u_viewproj"].write(np.ascontiguousarray(viewproj.T, np.float32).tobytes())
      prog["u_view_z"].value = tuple(float(x) for x in view_z)
    table = []
    ctx.enable(moderngl.CULL_FACE)
    for part in surfaces:
      table.append(part.draw_ids(self.prog, 1 + sum(len(t) for t in table)))
    o = scene.objs
    for kind in range(len(scene.geoms)):
      groups = [(scene.geoms[kind], o.geoms[kind]), (scene.tgeoms[kind], o.tgeoms[kind]),
                (scene.decor[kind], o.decor[kind]), (scene.tdecor[kind], o.tdecor[kind])]
      groups += [(g[2], ids) for g, ids in zip(scene.textured, o.textured) if g[0] == kind]
      rows = np.concatenate([g[0] for g in groups])
      if not len(rows):
        continue
      first = 1 + sum(len(t) for t in table)
      rows[:, _ID_COL] = first + np.arange(len(rows))
      table.append(np.concatenate([g[1] for g in groups]))
      self._upload(self._inst_buffer(kind), rows)
      if kind == QUAD:
        ctx.disable(moderngl.CULL_FACE)
      else:
        ctx.enable(moderngl.CULL_FACE)
      self._vao(kind, *buffers(kind)).render(instances=len(rows))
    lines = scene.wide_lines
    if lines is not None and len(lines):
      lines = lines.copy()
      lines[:, 6] = 1 + sum(len(t) for t in table) + np.arange(len(lines))
      table.append(o.wide_lines)
      self._upload(self._line_buf, lines)
      self._line_prog["u_viewport"].value = tuple(float(v) for v in viewport)
      self._line_prog["u_width"].value = float(line_width)
      ctx.disable(moderngl.CULL_FACE)
      self._line_vao.render(moderngl.TRIANGLE_STRIP, vertices=4, instances=len(lines))
    ctx.depth_func = "<"
    ctx.disable(moderngl.CULL_FACE | moderngl.DEPTH_TEST)
    return np.concatenate(table) if table else np.zeros((0, 2), np.int32)

  def _inst_buffer(self, kind):
    if kind not in self._inst:
      self._inst[kind] = self.ctx.buffer(reserve=16 * 28 * 4, dynamic=True)
    return self._inst[kind]

  @staticmethod
  def _upload(buf, a):
    if a.nbytes > buf.size:
      buf.orphan(max(a.nbytes, 2 * buf.size))
    buf.write(np.ascontiguousarray(a, np.float32).tobytes())

  def release(self):
    """Free the GL objects."""
    for _, vao in self._vaos.values():
      vao.release()
    for o in list(self._inst.values()) + [self._line_vao, self._line_buf, self._corners,
                                          self._line_prog, self.prog]:
      o.release()
    self._vaos, self._inst = {}, {}


def decode(rgb, table):
  """The segmentation image [objid, objtype] (h, w, 2) int32 of the id pass's colour image
  `rgb` (h, w, 3) uint8 and its table of objects; -1 where nothing was drawn (as
  mujoco.Renderer's)."""
  k = rgb[..., 0].astype(np.int64) | (rgb[..., 1].astype(np.int64) << 8) | (
      rgb[..., 2].astype(np.int64) << 16)
  lut = np.full((len(table) + 1, 2), -1, np.int32)
  lut[1:] = table
  return lut[np.where(k <= len(table), k, 0)]
