"""Which geoms are textured and how (numpy; render/textures.py draws them with GL): the
texture of each geom's material, its mapping as MuJoCo 4's renderer maps it, and per frame the
textured geoms' instances grouped by (shape kind, texture). See render/textures.py for the
mappings (2d coordinates, cube and skybox lookups)."""
import numpy as np

TEX_NONE, TEX_2D, TEX_CUBE = 0, 1, 2     # texture kinds (the geom programs' variants)


def materials(m, rgba, matid):
  """Colour and material (emission, specular, shininess, 0) of elements with colours `rgba`
  and materials `matid` (-1: none), as MuJoCo's setMaterial: the material's rgba unless the
  element's own differs from the default (0.5, 0.5, 0.5, 1)."""
  rgba = np.array(rgba, np.float64).reshape(-1, 4)
  matid = np.asarray(matid)
  mat = np.tile([0.0, 0.5, 0.5, 0.0], (len(rgba), 1))
  for g in np.nonzero(matid >= 0)[0]:
    k = matid[g]
    if np.allclose(rgba[g], (0.5, 0.5, 0.5, 1.0)):
      rgba[g] = m.mat_rgba[k]
    mat[g, :3] = (m.mat_emission[k], m.mat_specular[k], m.mat_shininess[k])
  return rgba, mat


def material_texture(m, k):
  """The rgb texture of material `k`, or -1 (none, or a 1-channel one: see geom_textures)."""
  texids = getattr(m, "mat_texid", None)
  if k < 0 or texids is None or not int(getattr(m, "ntex", 0) or 0):
    return -1
  row = np.asarray(texids).reshape(int(m.nmat), -1)[k]
  t = int(row[1 if len(row) > 1 else 0])
  return -1 if t < 0 or int(m.tex_nchannel[t]) == 1 else t


def surface_alpha(rgba, opts, vis):
  """The surfaces' (skins', flexes') alpha this frame: rgba's, times map.alpha in the
  transparent mode (mjVIS_TRANSPARENT)."""
  return rgba[:, 3] * (vis.map.alpha if getattr(opts, "transparency", False) else 1.0)


def surface_rows(rows, visible, rgba, alpha, mat, mapping, highlight, glow):
  """The instance rows of the visible surfaces (skins, flexes: one identity instance each, in
  world coordinates): colour with this frame's alpha, material (the selected one's emission
  plus `glow`, as mjv_updateScene's markselected), texture mapping."""
  for i in np.nonzero(visible)[0]:
    row = rows[i]
    row[:] = 0.0
    row[3:12] = np.eye(3).ravel()
    row[12:15] = 1.0
    row[16:20] = (*rgba[i, :3], alpha[i])
    row[20:24] = mat[i] + (glow if i == highlight else 0.0) * np.eye(4)[0]
    row[24:28] = mapping[i]


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


class GeomTextures:
  """The textured geoms of one model (owned by a SceneBuilder) and this frame's instances."""

  def __init__(self):
    self.geom_texid = np.zeros(0, np.int64)
    self.groups = []          # this frame: [(kind, texid, instances, transparent)]
    self.group_geoms = []     # the geom of each of those instances, per group
    self.sky = None

  def set_model(self, m, r):
    """Which geoms of `m` are textured (`r`, a render.scene.SceneBuilder, has computed its
    per-geom arrays: geom_mat, geom_size4, geom_kind), and the skybox texture."""
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
    matid = np.asarray(m.geom_matid)
    self.geom_rgba = materials(m, m.geom_rgba, np.where(texid >= 0, matid, -1))[0]
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

  def collect(self, snap, sel, pos, rot, size, mat, alpha):
    """This frame's instances of the visible textured geoms `sel` (bool per geom), grouped by
    (shape kind, texture); `pos`/`size` as the renderer draws them (planes re-centred),
    `alpha` its per-geom opacity (transparency mode applied)."""
    self.groups, self.group_geoms = [], []
    if not sel.any():
      return self.groups
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
        mine = on & ((rgba[idx, 3] < 1.0) == trans)
        if mine.any():
          self.groups.append((kind, t, a[mine], trans))
          self.group_geoms.append(idx[mine])
    return self.groups

  def casters(self):
    """This frame's textured instances that cast shadows (not planes; transparent ones too,
    as in MuJoCo's shadow pass), as arrays."""
    return [part for kind, _, part, _ in self.groups if kind != 0]
