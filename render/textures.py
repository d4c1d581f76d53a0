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
instanced too: one draw call per (shape, texture) pair; they also cast shadows.
"""
import numpy as np
import moderngl

from numjoco.render import meshes
from numjoco.render import shaders

TEX_2D, TEX_CUBE = 1, 2
_FMT = "3f 3f 1f 2f"
_INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
_INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")
_SRGB8, _SRGB8_ALPHA8 = 0x8C41, 0x8C43


def is_plain_checker(img):
  """Whether a texture image is exactly a 2x2 checker of two colours (MuJoCo's builtin
  checker without marks): the renderer draws those procedurally."""
  h, w = img.shape[:2]
  if h < 2 or w < 2:
    return False
  c1, c2 = img[0, 0], img[0, w - 1]
  ref = np.empty_like(img)
  ref[:] = c2
  ref[:h // 2, :w // 2] = c1
  ref[h // 2:, w // 2:] = c1
  return bool(np.array_equal(img, ref))


def texture_image(m, t):
  """Pixels (rows, width, nchannel) uint8 of texture `t` of model `m`."""
  a = int(m.tex_adr[t])
  h, w, c = int(m.tex_height[t]), int(m.tex_width[t]), int(m.tex_nchannel[t])
  return np.asarray(m.tex_data[a:a + h * w * c], np.uint8).reshape(h, w, c)


def geom_textures(m):
  """Per geom: the id of its material's rgb texture, or -1."""
  n = m.ngeom
  out = np.full(n, -1, np.int64)
  texid = getattr(m, "mat_texid", None)
  if texid is None or not getattr(m, "ntex", 0) or not m.nmat:
    return out
  texid = np.asarray(texid).reshape(int(m.nmat), -1)
  matid = np.asarray(m.geom_matid)
  has = matid >= 0
  out[has] = texid[matid[has], 1 if texid.shape[1] > 1 else 0]
  # MuJoCo's OpenGL renderer skips 1-channel textures ("classic renderer can't upload
  # 1-channel data, skipping"; e.g. the raw bytes MuJoCo keeps for a KTX file): the geom keeps
  # its material colour
  one = np.asarray(m.tex_nchannel).reshape(-1) == 1
  out[(out >= 0) & one[np.maximum(out, 0)]] = -1
  return out


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
    self._vaos = {}           # (kind, texid, key) -> vao; key: (npos, shadow) or "d"
    self.groups = []          # this frame: [(kind, texid, instances, transparent)]
    self.sky = None
    self.geom_texid = np.zeros(0, np.int64)
    self._sky_mips = None     # the sky's texture while its mipmaps wait for the second frame

  # ------------------------------------------------------------------------------ model

  def set_model(self, m, r):
    """Which geoms of `m` are textured (the Renderer `r` has computed its per-geom arrays), and
    the skybox; GL textures are made on first use."""
    self._reset()
    self.m, self.r = m, r
    ntex = int(getattr(m, "ntex", 0) or 0)
    texid = geom_textures(m)
    ttype = np.asarray(getattr(m, "tex_type", np.zeros(0)), np.int64)
    for g in np.nonzero(texid >= 0)[0]:
      if r.geom_mat[g, 3] == 2.0 and is_plain_checker(texture_image(m, texid[g])):
        texid[g] = -1        # a plane's plain checker: drawn procedurally by the renderer
    self.geom_texid = texid
    self.geom_textype = np.zeros(m.ngeom, np.int64)
    on = texid >= 0
    self.geom_textype[on] = np.where(ttype[texid[on]] == 0, TEX_2D, TEX_CUBE)
    # colours: MuJoCo's material rgba (the renderer may have put a checker colour there)
    rgba = np.array(m.geom_rgba, np.float64)
    matid = np.asarray(m.geom_matid)
    for g in np.nonzero(texid >= 0)[0]:
      if np.allclose(rgba[g], (0.5, 0.5, 0.5, 1.0)):
        rgba[g] = m.mat_rgba[matid[g]]
    self.geom_rgba = rgba
    self.geom_map = self._mappings(m, r, texid, matid)
    sky = [t for t in range(ntex) if int(m.tex_type[t]) == 2]
    self.sky = sky[0] if sky else None

  def _mappings(self, m, r, texid, matid):
    """Per geom (n, 4): the texture mapping in i_color2 (2d: uv scale, offset; cube: object
    scale), before the per-frame plane offset."""
    n = m.ngeom
    out = np.zeros((n, 4))
    gtype = np.asarray(m.geom_type)
    size = np.asarray(m.geom_size, float)
    for g in np.nonzero(texid >= 0)[0]:
      k = matid[g]
      rep = np.asarray(m.mat_texrepeat[k], float)
      uniform = bool(m.mat_texuniform[k])
      if self.geom_textype[g] == TEX_CUBE:
        s = r.geom_size4[g, :3].copy()
        if gtype[g] == 3:              # capsule: (radius, radius, half-length)
          s[2] = r.geom_size4[g, 3]
        if gtype[g] == 7:              # mesh: the unit-ball vertices back to object space
          out[g, :3] = r.geom_size4[g, :3] * (size[g, :3] if uniform else 1.0)
        else:
          out[g, :3] = s if uniform else 1.0
        continue
      if gtype[g] == 0:                # plane: (u, v) is the unit quad's (x, y)
        scl = np.where(rep > 0, rep, 1.0)
        sx, sy = size[g, 0], size[g, 1]
        if uniform:
          scl = scl * np.where(size[g, :2] > 0, size[g, :2], 1.0)
        zx, zy = r.geom_size4[g, 0], r.geom_size4[g, 1]
        out[g, 0], out[g, 2] = ((0.5 * scl[0], 0.5 * scl[0]) if sx > 0
                                else (0.5 * scl[0] * zx, -0.5))
        out[g, 1], out[g, 3] = ((-0.5 * scl[1], 0.5 * scl[1]) if sy > 0
                                else (-0.5 * scl[1] * zy, -0.5))
      elif gtype[g] in (1, 7) and not self._has_uv(m, g):
        # object-linear (texgen), divided by the size for height fields and meshes
        unit = r.geom_size4[g, :2] if gtype[g] == 7 else np.ones(2)
        sz = (np.asarray(m.hfield_size[m.geom_dataid[g], :2], float) if gtype[g] == 1
              else size[g, :2])
        scl = rep / np.maximum(np.where(sz > 0, sz, 1.0), 1e-15)
        if uniform:
          scl = scl * np.where(sz > 0, sz, 1.0)
        out[g] = (0.5 * scl[0] * unit[0], -0.5 * scl[1] * unit[1], -0.5, -0.5)
      else:                            # explicit coordinates: primitives, meshes with uv
        scl = np.where(rep > 0, rep, 1.0)
        if uniform and gtype[g] != 7:
          scl = scl * np.where(size[g, :2] > 0, r.geom_size4[g, :2], 1.0)
        out[g] = (scl[0], scl[1], 0.0, 0.0)
    return out

  @staticmethod
  def _has_uv(m, g):
    if int(m.geom_type[g]) != 7 or not hasattr(m, "mesh_texcoordadr"):
      return False
    return int(m.mesh_texcoordadr[m.geom_dataid[g]]) >= 0

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

  def collect(self, snap, sel, pos, rot, size, mat, alpha):
    """This frame's instances of the visible textured geoms `sel` (bool per geom), grouped by
    (shape kind, texture); `pos`/`size` as the renderer draws them (planes re-centred),
    `alpha` its per-geom opacity (transparency mode applied)."""
    self.groups = []
    if not sel.any():
      return
    r = self.r
    rgba = self.geom_rgba.copy()
    rgba[:, 3] = alpha
    idx = np.nonzero(sel)[0]
    maps = self.geom_map[idx].copy()
    for j, g in enumerate(idx):       # an infinite plane moved with the camera: shift its uv
      if r.geom_kind[g] == 0 and self.geom_textype[g] == TEX_2D:
        R = np.asarray(rot[g], float).reshape(3, 3)
        d = np.asarray(pos[g], float) - np.asarray(snap.geom_xpos[g], float)
        sz = self.m.geom_size[g]
        if sz[0] <= 0:
          maps[j, 2] += maps[j, 0] / max(size[g, 0], 1e-12) * float(d @ R[:, 0])
        if sz[1] <= 0:
          maps[j, 3] += maps[j, 1] / max(size[g, 1], 1e-12) * float(d @ R[:, 1])
    a = np.empty((len(idx), 28), np.float32)
    a[:, 0:3] = pos[idx]
    a[:, 3:12] = rot[idx]
    a[:, 12:16] = size[idx]
    a[:, 16:20] = rgba[idx]
    a[:, 20:24] = mat[idx]
    a[:, 23] = 0.0                     # no procedural checker
    a[:, 24:28] = maps
    keys = np.stack([r.geom_kind[idx], self.geom_texid[idx]], 1)
    # sorted as np.unique(keys, axis=0) sorts them; np.unique imports numpy.ma (36 ms of the
    # first frame under load)
    for key in np.array(sorted(set(map(tuple, keys.tolist()))), np.int64).reshape(-1, 2):
      on = (keys == key).all(1)
      kind, t = int(key[0]), int(key[1])
      for trans in (False, True):
        part = a[on & ((rgba[idx, 3] < 1.0) == trans)]
        if len(part):
          self.groups.append((kind, t, part, trans))

  def casters(self):
    """This frame's textured instances that cast shadows (not planes; transparent ones too,
    as in MuJoCo's shadow pass), as arrays."""
    return [part for kind, _, part, _ in self.groups if kind != 0]

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

  def _program(self, npos, shadow, tex):
    key = (npos, shadow, tex)
    prog = self._progs.get(key)
    if prog is None:
      prog = self._progs[key] = self.ctx.program(*shaders.geom_program(npos, shadow, tex))
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

  def draw(self, sh, set_uniforms, npos, transparent):
    """The textured geoms (opaque or transparent ones) with the lit program variants;
    `set_uniforms(prog)` gives a program this frame's camera, lights and shadow uniforms."""
    ctx = self.ctx
    done = set()
    for kind, t, part, trans in self.groups:
      if trans != transparent:
        continue
      tex = TEX_2D if int(self.m.tex_type[t]) == 0 else TEX_CUBE
      prog = self._program(npos if kind == 0 else 0, sh, tex)
      if id(prog) not in done:
        set_uniforms(prog, kind == 0)
        if "u_tex" in prog:
          prog["u_tex"].value = 1
        done.add(id(prog))
      self._instances(kind, t, part)
      self._texture(t).use(location=1)
      if "u_twoside" in prog:      # opaque planes: no culling, their normal turned to the eye;
        # blended ones (seen from behind among them) keep it: MuJoCo's one-sided lighting
        prog["u_twoside"].value = int(kind == 0 and not transparent)
      if kind == 0:
        ctx.disable(moderngl.CULL_FACE)
      else:
        ctx.enable(moderngl.CULL_FACE)
      self._vao(kind, t, (npos if kind == 0 else 0, sh, tex), prog).render(
          instances=len(part))

  def draw_sky(self, viewproj):
    """The skybox texture at the far plane, after the opaque geoms: the depth test skips the
    pixels they cover (no depth written)."""
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
    self._sky_vao.render(moderngl.TRIANGLE_STRIP)
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
