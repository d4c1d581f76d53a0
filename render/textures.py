"""Textured geoms and the skybox texture: the model's textures (mjModel tex_*, compiled by
engine/mjcf/_texture.py) as GL textures, mapped as MuJoCo 4's renderer maps them.

- 2d textures: explicit texture coordinates on planes and primitives (render/meshes.py lists
  MuJoCo's parameterisations), scaled by the material's texrepeat (times the geom size with
  texuniform); a finite plane's texture is anchored at its (-x, +y) corner, an infinite one's at
  the origin; meshes use their texture coordinates (mesh_texcoord), or else object-linear
  coordinates (0.5 texrepeat x - 0.5, -0.5 texrepeat y - 0.5), as MuJoCo's texgen.
- cube and skybox textures on geoms: the object-space direction of each point (the unit shape's,
  times the size with texuniform) picks the face and texel, as a GL cube map.
- the skybox: the first skybox texture, looked up along each pixel's view ray as (x, z, -y).
The texel multiplies the lit colour (fixed-function GL_MODULATE). Textured geoms are drawn
instanced too: one draw call per (shape, texture) pair; they also cast shadows. Which geoms are
textured, their mappings and each frame's instances: render/texmap.py (numpy, for the scene).
"""
import numpy as np
import moderngl

from numjoco.render import meshes
from numjoco.render import shaders
from numjoco.render.texmap import TEX_2D, TEX_CUBE, texture_image
_FMT = "3f 3f 1f 2f"
_INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
_INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")
_SRGB8, _SRGB8_ALPHA8 = 0x8C41, 0x8C43


class TexturedGeoms:
  """GL state and per-frame instances of a model's textured geoms (owned by a Renderer)."""

  def __init__(self, ctx):
    self.ctx = ctx
    self._progs = {}          # (npos, shadow, tex) -> program
    self._sky_prog = ctx.program(vertex_shader=shaders.SKYTEX_VS,
                                 fragment_shader=shaders.SKYTEX_FS)
    self._sky_buf = ctx.buffer(np.array([[-1, -1], [1, -1], [-1, 1], [1, 1]], np.float32))
    self._sky_vao = ctx.vertex_array(self._sky_prog, [(self._sky_buf, "2f", "in_pos")])
    self._model_gl = []
    self._reset()

  def _reset(self):
    for o in self._model_gl:
      o.release()
    self._model_gl = []
    self._tex = {}            # texid -> GL texture
    self._tex_used = set()    # texids drawn in an earlier frame
    self._shapes = {}         # kind -> (vbo, ibo or None)
    self._inst = {}           # (kind, texid) -> instance buffer
    self._vaos = {}           # (kind, texid, key) -> vao; key: (npos, shadow, tex, positional)
    #                           or "d"
    self.groups = []          # this frame's (kind, texid, instances, transparent): the scene's
    self.sky = None
    self._sky_mips = None     # the sky's texture while its mipmaps wait for the second frame

  # ------------------------------------------------------------------------------ model

  def set_model(self, m, geom_textures):
    """A new model: its GL textures are made on first use; `geom_textures` (a
    render.texmap.GeomTextures) says which geoms are textured and which texture is the sky."""
    self._reset()
    self.m = m
    self.sky = geom_textures.sky

  def _texture(self, t):
    """The GL texture of model texture `t` (made once)."""
    tex = self._tex.get(t)
    if tex is not None:
      return tex
    m, ctx = self.m, self.ctx
    img = texture_image(m, t)
    if img.shape[2] == 2:
      img = np.concatenate([np.repeat(img[..., :1], 3, axis=2), img[..., 1:]], axis=2)
    c = img.shape[2]
    srgb = int(m.tex_colorspace[t]) == 2
    fmt = (_SRGB8 if c == 3 else _SRGB8_ALPHA8) if srgb else None
    kw = {"internal_format": fmt} if fmt else {}
    if int(m.tex_type[t]) == 0:
      tex = ctx.texture((img.shape[1], img.shape[0]), c, np.ascontiguousarray(img).tobytes(),
                        **kw)
      tex.repeat_x = tex.repeat_y = True
    else:
      w = img.shape[1]
      faces = img if img.shape[0] == 6 * w else np.concatenate([img[:w]] * 6)
      tex = ctx.texture_cube((w, w), c, np.ascontiguousarray(faces).tobytes(), **kw)
    if t == self.sky and t not in self._tex_used:
      # the first frame draws the sky from level 0 (at the usual field of view the sky is
      # magnified: the mipmaps are not sampled) and builds them after it is shown, off the
      # start path: 80-100 ms for an 800x800 cube on llvmpipe, its first mipmap build
      self._sky_mips = tex
      tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
    else:
      self._mipmaps(tex, int(m.tex_type[t]))
    self._tex[t] = tex
    self._model_gl.append(tex)
    return tex

  @staticmethod
  def _mipmaps(tex, textype):
    tex.build_mipmaps()
    # MuJoCo filters trilinearly; 2d textures (floors filling the screen) take the nearest
    # mip level instead: 3 of 23 CPU-ms per 1280x720 frame of humanoid's floor on llvmpipe
    tex.filter = (moderngl.LINEAR_MIPMAP_NEAREST if textype == 0
                  else moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)

  def _shape(self, kind):
    """Vertex (and index) buffer of shape `kind` with texture coordinates."""
    got = self._shapes.get(kind)
    if got is not None:
      return got
    m, ctx = self.m, self.ctx
    nprim = len(meshes.KINDS)
    if kind < nprim:
      v, i = meshes.textured(meshes.KINDS[kind])
      got = (ctx.buffer(v.tobytes()), ctx.buffer(i.tobytes()))
    else:
      k = kind - nprim
      nmesh = int(getattr(m, "nmesh", 0))
      if k < nmesh:
        a, b = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
        vert, face, (verts, scale) = meshes.model_mesh(m, k)
        uv = None
        if getattr(m, "mesh_texcoordadr", None) is not None and m.mesh_texcoordadr[k] >= 0:
          ta, tn = int(m.mesh_texcoordadr[k]), int(m.mesh_texcoordnum[k])
          uv = meshes.mesh_uv(vert, face, m.mesh_texcoord[ta:ta + tn],
                              m.mesh_facetexcoord[a:a + b])
        else:
          uv = meshes.mesh_uv(vert, face) / scale    # unit-ball coordinates
      else:
        h = k - nmesh
        nr, nc, adr = int(m.hfield_nrow[h]), int(m.hfield_ncol[h]), int(m.hfield_adr[h])
        vert, face = meshes.hfield_asset(m.hfield_size[h], nr, nc,
                                         m.hfield_data[adr:adr + nr * nc])
        verts, scale = meshes.mesh_asset(vert, face)
        uv = meshes.mesh_uv(vert, face)
      data = np.concatenate([verts, np.asarray(uv, np.float32).reshape(-1, 2)], 1)
      got = (ctx.buffer(np.ascontiguousarray(data, np.float32).tobytes() or b"\0" * 36), None)
    self._shapes[kind] = got
    self._model_gl += [b for b in got if b is not None]
    return got

  # ------------------------------------------------------------------------------ frame

  def _instances(self, kind, t, part):
    buf = self._inst.get((kind, t))
    if buf is None or buf.size < part.nbytes:
      if buf is not None:
        buf.release()
        self._model_gl.remove(buf)
        for key in [k for k in self._vaos if k[:2] == (kind, t)]:
          self._vaos.pop(key).release()
      buf = self.ctx.buffer(reserve=max(part.nbytes, 16 * 28 * 4), dynamic=True)
      self._inst[kind, t] = buf
      self._model_gl.append(buf)
    buf.write(part.tobytes())
    return buf

  def _program(self, npos, shadow, tex, positional=True):
    key = (npos, shadow, tex, positional)
    prog = self._progs.get(key)
    if prog is None:
      prog = self._progs[key] = self.ctx.program(
          *shaders.geom_program(npos, shadow, tex, positional))
    return prog

  def _vao(self, kind, t, key, prog):
    vao = self._vaos.get((kind, t, key))
    if vao is None:
      vbo, ibo = self._shape(kind)
      inst = self._inst[kind, t]
      if key == "d":
        attrs = [(vbo, "3f 3x4 1f 8x", "in_pos", "in_cap"),
                 (inst, "3f 3f 3f 3f 4f 48x/i", *_INSTANCE_ATTRS[:5])]
      elif "in_uv" in prog:
        attrs = [(vbo, _FMT, "in_pos", "in_normal", "in_cap", "in_uv"),
                 (inst, _INSTANCE_FMT, *_INSTANCE_ATTRS)]
      else:                 # cube textures read the position only
        attrs = [(vbo, "3f 3f 1f 8x", "in_pos", "in_normal", "in_cap"),
                 (inst, _INSTANCE_FMT, *_INSTANCE_ATTRS)]
      vao = self.ctx.vertex_array(prog, attrs, ibo) if ibo is not None else \
          self.ctx.vertex_array(prog, attrs)
      self._vaos[kind, t, key] = vao
      self._model_gl.append(vao)
    return vao

  def draw_depth(self, depth_prog):
    """The textured geoms, opaque and transparent, into the bound shadow map (planes cast
    none, as the rest)."""
    for kind, t, part, _ in self.groups:
      if kind != 0:
        self._instances(kind, t, part)
        self._vao(kind, t, "d", depth_prog).render(instances=len(part))

  def draw(self, sh, set_uniforms, npos, transparent, split=None):
    """The textured geoms (opaque or transparent ones) with the lit program variants;
    `set_uniforms(prog, plane)` gives a program this frame's camera, lights and shadow uniforms.
    `split(variant, n)` draws the opaque planes in clipped pieces: the shadow variant only
    inside the shadow map's footprint, the spot light only inside its cone
    (SceneRenderer._draw_pieces)."""
    ctx = self.ctx
    done = set()
    for kind, t, part, trans in self.groups:
      if trans != transparent:
        continue
      tex = TEX_2D if int(self.m.tex_type[t]) == 0 else TEX_CUBE
      plane = kind == 0
      self._instances(kind, t, part)
      self._texture(t).use(location=1)
      if plane:
        ctx.disable(moderngl.CULL_FACE)
      else:
        ctx.enable(moderngl.CULL_FACE)

      def variant(shadow, positional=True):
        prog = self._program(npos if plane else 0, shadow, tex, positional)
        if id(prog) not in done:
          set_uniforms(prog, plane)
          if "u_tex" in prog:
            prog["u_tex"].value = 1
          done.add(id(prog))
        if "u_twoside" in prog:      # opaque planes: no culling, their normal turned to the eye;
          # blended ones (seen from behind among them) keep it: MuJoCo's one-sided lighting
          prog["u_twoside"].value = int(plane and not transparent)
        return prog, self._vao(kind, t, (npos if plane else 0, shadow, tex, positional), prog)
      if plane and split is not None and not transparent:
        split(lambda piece: variant(*shaders.PIECE_VARIANT[piece]), len(part))
      else:
        variant(sh)[1].render(instances=len(part))

  def draw_sky(self, viewproj, edges=None):
    """The skybox texture at the far plane, after the opaque geoms: the depth test skips the
    pixels they cover (no depth written). `edges` (renderer.sky_edges): the screen's part
    outside an opaque plane, in one piece per row (a, b, c) of a x + b y + c >= 0 over
    normalised device coordinates; None: the whole screen. llvmpipe pays for the depth test of
    every covered pixel, so the sky is not drawn over a floor that fills the view."""
    if edges is not None and not edges:
      return
    inv = np.linalg.inv(np.asarray(viewproj, float))
    if self._sky_mips is not None and self.sky in self._tex_used:   # drawn once already
      self._mipmaps(self._sky_mips, 1)
      self._sky_mips = None
    self._sky_prog["u_inv_viewproj"].write(
        np.ascontiguousarray(inv.astype(np.float32).T).tobytes())
    self._texture(self.sky).use(location=1)
    self._sky_prog["u_sky"].value = 1
    self.ctx.depth_mask = False
    self.ctx.disable(moderngl.CULL_FACE)
    self.ctx.enable_direct(shaders.GL_CLIP_DISTANCE0)
    for edge in (edges if edges is not None else [(0.0, 0.0, 1.0)]):
      self._sky_prog["u_edge"].value = tuple(float(x) for x in edge)
      self._sky_vao.render(moderngl.TRIANGLE_STRIP)
    self.ctx.disable_direct(shaders.GL_CLIP_DISTANCE0)
    self.ctx.depth_mask = True
    self._tex_used.add(self.sky)

  def release(self):
    """Free every GL object made here."""
    self._reset()
    for p in self._progs.values():
      p.release()
    self._progs = {}
    for o in (self._sky_vao, self._sky_buf, self._sky_prog):
      o.release()
