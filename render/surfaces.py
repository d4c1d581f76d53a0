"""The GL half of the surfaces the renderer draws with the geom programs as one instance each:
skins (SkinDraw, from render/skin.py's SkinScene) and flexes (FlexDraw, from render/flex.py's
FlexScene). Each keeps its own vertex data (their normals differ on purpose: skin's float32
sums match MuJoCo's mjv_updateSkin); what they share is how a surface's buffers become vertex
arrays and how the lit programs, their uniforms and textures are chosen while drawing."""
import moderngl
import numpy as np

from numjoco.render.flex import FlexScene
from numjoco.render.skin import SkinScene
from numjoco.render.texmap import TEX_2D, TEX_NONE

INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")


def vertex_array(ctx, prog, key, vbuf, uvbuf, inst, ibuf=None):
  """A vertex array of one surface for `prog`: key "d" (the shadow map's depth program) reads
  positions and the instance pose; key "id" (the id pass's program, render/segment.py) also
  the instance colour; any other key reads positions, normals, the whole instance row and,
  where the program samples a texture, the uvs."""
  if key == "d":
    attrs = [(vbuf, "3f 12x", "in_pos"), (inst, "3f 3f 3f 3f 4f 48x/i", *INSTANCE_ATTRS[:5])]
  elif key == "id":
    attrs = [(vbuf, "3f 12x", "in_pos"), (inst, "3f 3f 3f 3f 4f 4f 32x/i", *INSTANCE_ATTRS[:6])]
  else:
    attrs = [(vbuf, "3f 3f", "in_pos", "in_normal"), (inst, INSTANCE_FMT, *INSTANCE_ATTRS)]
    if "in_uv" in prog:
      attrs.append((uvbuf, "2f", "in_uv"))
  return ctx.vertex_array(prog, attrs, ibuf) if ibuf is not None else ctx.vertex_array(prog, attrs)


def draw_lit(r, ctx, sh, set_uniforms, items, render):
  """Draw surfaces with the renderer `r`'s lit geom programs (`sh`: the variant that reads the
  shadow map), back faces culled as MuJoCo's renderer draws skins and flexes. `items` yields
  (surface, texture type, texture id); `render(surface, prog, key)` draws one. Each program
  gets this frame's camera and lights once (`set_uniforms`), one-sided lighting and the
  texture unit."""
  done = set()
  ctx.enable(moderngl.CULL_FACE)
  for i, tex, texid in items:
    prog = r._textured._program(0, sh, tex) if tex else r._geom_progs[sh]
    if id(prog) not in done:
      set_uniforms(prog)
      if "u_twoside" in prog:
        prog["u_twoside"].value = 0
      if "u_tex" in prog:
        prog["u_tex"].value = 1
      done.add(id(prog))
    if tex:
      r._textured._texture(int(texid)).use(location=1)
    render(i, prog, (sh, tex))
  r._twoside_key = None      # u_twoside was set here: the renderer sets it again


def selected(mask, alpha, transparent):
  """Indices of the shown surfaces that are transparent (alpha < 1) or opaque, as asked."""
  return np.nonzero(mask & ((alpha < 1.0) == transparent))[0]


class _SurfaceDraw:
  """What SkinDraw and FlexDraw share: the scene part they draw (`s`, a SkinScene or
  FlexScene), an instance buffer per surface, a frame's upload and the release."""

  def __init__(self, ctx, scene):
    self.ctx = ctx
    self._gl, self._vaos = [], {}
    self.s = scene

  def _adopt(self, scene, renderer):
    """Drop the previous model's GL objects; draw `scene` with `renderer`'s programs."""
    self.release()
    self.r, self.s, self._version = renderer, scene, None

  def upload(self):
    """This frame's vertices (when they changed: the scene's `version`) and instances into the
    GL buffers."""
    s = self.s
    if not s.visible.any():
      return
    if s.version != self._version:
      self._version = s.version
      self._write_vertices(s)
    for i in np.nonzero(s.visible)[0]:
      self._inst[i].write(s.inst[i].tobytes())

  def draw_depth(self, depth_prog):
    """The drawn surfaces into the bound shadow map."""
    for i in self._shown():
      self._render(i, depth_prog, "d")

  def draw_ids(self, prog, first):
    """The drawn surfaces with the id pass's program `prog` (render/segment.py), the j-th of
    them with segmentation index first + j; returns their objects, (n, 2) int32 [objid,
    objtype]. Their instance rows carry the index until the next `upload`."""
    shown = self._shown()
    for j, i in enumerate(shown):
      row = self.s.inst[i].copy()
      row[16] = first + j
      self._inst[i].write(row.tobytes())
      self._render(i, prog, "id")
    return np.stack([shown, np.full(len(shown), self.s.OBJTYPE)], 1).astype(np.int32)

  def release(self):
    """Free the GL objects of the current model."""
    for o in list(self._vaos.values()) + self._gl:
      o.release()
    self._gl, self._vaos = [], {}


class SkinDraw(_SurfaceDraw):
  """GL buffers and drawing of a model's skins (owned by a Renderer) from a SkinScene: each
  skin is one indexed triangle mesh in world coordinates, lit and textured by the geom
  programs through a single identity instance, as MuJoCo's renderer draws an mjGEOM_SKIN."""

  def __init__(self, ctx):
    super().__init__(ctx, SkinScene())

  def set_model(self, skins, renderer):
    """The GL buffers of the SkinScene `skins`: world positions and normals (rewritten when
    they change), texture coordinates, faces, the instances."""
    self._adopt(skins, renderer)
    sk = skins.model
    n = sk.nskin
    if not n:
      return
    ctx = self.ctx
    self._vbuf = ctx.buffer(reserve=max(sk.nvert, 1) * 24, dynamic=True)   # position, normal
    self._uvbuf = ctx.buffer(skins.uv.tobytes(), dynamic=True)
    self._ibufs = []
    for i in range(n):
      a, c = int(sk.faceadr[i]), int(sk.facenum[i])
      self._ibufs.append(ctx.buffer(np.ascontiguousarray(sk.face[a:a + c], np.int32).tobytes()))
    self._inst = [ctx.buffer(reserve=28 * 4, dynamic=True) for _ in range(n)]
    self._gl = [self._vbuf, self._uvbuf] + self._ibufs + self._inst

  def _write_vertices(self, s):
    self._vbuf.write(np.ascontiguousarray(np.concatenate([s.vert, s.normal], 1)).tobytes())
    if s.texgen.any():
      self._uvbuf.write(s.uv.tobytes())

  def _vao(self, i, prog, key):
    vao = self._vaos.get((i, key))
    if vao is None:
      vao = self._vaos[i, key] = vertex_array(
          self.ctx, prog, key, self._vbuf, self._uvbuf, self._inst[i], self._ibufs[i])
    return vao

  def _shown(self):
    """The skins drawn this frame: the visible ones."""
    return np.nonzero(self.s.visible)[0] if self.s.model.nskin else np.zeros(0, np.int64)

  def _render(self, i, prog, key):
    self._vao(i, prog, key).render()

  def draw(self, sh, set_uniforms, transparent):
    """The visible skins, opaque or blended ones, with the lit geom programs (`sh`: the
    variant that reads the shadow map); `set_uniforms(prog)` gives a program this frame's
    camera and lights. Back faces culled: skins are one-sided, as in MuJoCo."""
    s = self.s
    if not s.model.nskin:
      return
    items = ((i, int(s.textype[i]), s.texid[i])
             for i in selected(s.visible, s.alpha, transparent))
    draw_lit(self.r, self.ctx, sh, set_uniforms, items, self._render)


class FlexDraw(_SurfaceDraw):
  """GL buffers and drawing of a model's flexes (owned by a Renderer) from a FlexScene: faces
  as one unindexed world-space triangle list per flex, drawn through the lit (or textured)
  geom programs with an identity instance (the vertex spheres and edge cylinders are drawn
  with the geoms)."""

  def __init__(self, ctx):
    super().__init__(ctx, FlexScene())

  def set_model(self, flexes, renderer):
    """The instance buffers of the FlexScene `flexes` (vertex buffers come with the faces)."""
    self._adopt(flexes, renderer)
    n = flexes.model.nflex
    if not n:
      return
    self._bufs = [None] * n
    self._inst = [self.ctx.buffer(reserve=28 * 4, dynamic=True) for _ in range(n)]
    self._gl = list(self._inst)

  def _buffers(self, f, nvert):
    """The vertex (position, normal) and texture-coordinate buffers of flex f, grown to hold
    `nvert` triangle vertices (their VAOs made again when they grow)."""
    b = self._bufs[f]
    if b is None or b[0].size < nvert * 24:
      if b is not None:
        for o in b:
          o.release()
          self._gl.remove(o)
        for key in [k for k in self._vaos if k[0] == f]:
          self._vaos.pop(key).release()
      cap = max(nvert, 3)
      b = self._bufs[f] = (self.ctx.buffer(reserve=cap * 24, dynamic=True),
                           self.ctx.buffer(reserve=cap * 8, dynamic=True))
      self._gl.extend(b)
    return b

  def _write_vertices(self, s):
    for f in np.nonzero(s.nface)[0]:
      verts, uv = s.tris[f]
      vb, ub = self._buffers(f, len(verts))
      vb.write(verts.tobytes())
      if uv is not None:
        ub.write(np.ascontiguousarray(uv).tobytes())

  def _vao(self, f, prog, key):
    vao = self._vaos.get((f, key))
    if vao is None:
      vb, ub = self._bufs[f]
      vao = self._vaos[f, key] = vertex_array(self.ctx, prog, key, vb, ub, self._inst[f])
    return vao

  def _shown(self):
    """The flexes whose faces are drawn this frame."""
    return np.nonzero(self.s.nface)[0] if self.s.model.nflex else np.zeros(0, np.int64)

  def _render(self, f, prog, key):
    self._vao(f, prog, key).render(vertices=3 * int(self.s.nface[f]))

  def draw(self, sh, set_uniforms, transparent):
    """The visible faces, opaque or blended ones, with the lit geom programs (`sh`: the
    variant that reads the shadow map). Back faces culled as MuJoCo's renderer does (a 2D
    flex has a triangle for each side)."""
    s = self.s
    if not s.model.nflex:
      return
    items = ((f, TEX_2D if s.texid[f] >= 0 else TEX_NONE, s.texid[f])
             for f in selected(s.nface > 0, s.alpha, transparent))
    draw_lit(self.r, self.ctx, sh, set_uniforms, items, self._render)
