"""Skin vertices and normals for one frame, as MuJoCo's mjv_updateActiveSkin computes them.

Each bone moves the vertices it holds rigidly from its bind pose to its body's pose (rotation
xquat * bindquat^-1, translation xpos - R bindpos); a vertex is the weighted sum of those
positions (weights normalised by the compiler, engine/mjcf/_skin.py). Normals are the
area-weighted sums of the face normals, normalised; `inflate` then moves each vertex along
its normal. Arithmetic follows MuJoCo's: bone transforms and moved positions in float64, the
weighted sum and the normals stored in float32. SkinScene holds a model's skins for the
scene (colours, materials, this frame's vertices); render/surfaces.py's SkinDraw draws them.
"""
import numpy as np

from numjoco.render.texmap import (TEX_2D, TEX_CUBE, TEX_NONE, material_texture, materials,
                                    surface_alpha, surface_rows)

_MINVAL = 1e-15     # mjMINVAL (engine.types has it; the window side imports no engine)


def _quat2mat(q):
  """(n, 3, 3) rotation matrices of quaternions (n, 4), as mju_quat2Mat (not normalised)."""
  w, x, y, z = q.T
  R = np.empty((len(q), 3, 3))
  R[:, 0, 0] = w * w + x * x - y * y - z * z
  R[:, 1, 1] = w * w - x * x + y * y - z * z
  R[:, 2, 2] = w * w - x * x - y * y + z * z
  R[:, 0, 1] = 2 * (x * y - w * z)
  R[:, 0, 2] = 2 * (x * z + w * y)
  R[:, 1, 0] = 2 * (x * y + w * z)
  R[:, 1, 2] = 2 * (y * z - w * x)
  R[:, 2, 0] = 2 * (x * z - w * y)
  R[:, 2, 1] = 2 * (y * z + w * x)
  ident = (w == 1) & (x == 0) & (y == 0) & (z == 0)
  R[ident] = np.eye(3)
  return R


def _mul_conj(a, b):
  """a * conj(b) for quaternion arrays (n, 4) (mju_mulQuat with mju_negQuat's b)."""
  a0, a1, a2, a3 = a.T
  b0, b1, b2, b3 = b[:, 0], -b[:, 1], -b[:, 2], -b[:, 3]
  return np.stack([a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
                   a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
                   a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
                   a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0], 1)



def _ordered_sums(rounds, parts, nvert):
  """Per vertex, float32 sums of the entries of each of the three `parts` in MuJoCo's order:
  round k ((entries, vertices), k = 0, 1, ...) adds each vertex's k-th term, rounded to float32
  after every addition."""
  (e0, v0), rest = rounds[0], rounds[1:]
  out = [np.zeros(nvert, np.float32) for _ in range(3)]
  for c, p in zip(out, parts):
    c[v0] = p[e0]
  for e, v in rest:
    for c, p in zip(out, parts):
      c[v] += p[e]
  return out

class SkinModel:
  """One model's skins, laid out for the per-frame update (arrays made once per model)."""

  def __init__(self, m):
    self.nskin = int(getattr(m, "nskin", 0) or 0) if m is not None else 0
    if not self.nskin:
      return
    self.vertadr = np.asarray(m.skin_vertadr, np.int64)
    self.vertnum = np.asarray(m.skin_vertnum, np.int64)
    self.faceadr = np.asarray(m.skin_faceadr, np.int64)
    self.facenum = np.asarray(m.skin_facenum, np.int64)
    self.bonenum = np.asarray(m.skin_bonenum, np.int64)
    self.group = np.clip(np.asarray(m.skin_group, np.int64), 0, 5)
    self.inflate = np.asarray(m.skin_inflate, np.float32)
    self.nvert = int(self.vertnum.sum())
    self.bodyid = np.asarray(m.skin_bonebodyid, np.int64)
    self.bindpos = np.asarray(m.skin_bonebindpos, np.float32).reshape(-1, 3).astype(np.float64)
    self.bindquat = np.asarray(m.skin_bonebindquat, np.float32).reshape(-1, 4).astype(np.float64)
    vert = np.asarray(m.skin_vert, np.float32).reshape(-1, 3).astype(np.float64)
    # one entry per (bone, vertex) pair, in MuJoCo's order: bones, then their vertex lists
    nbv = self.bonevertnum = np.asarray(m.skin_bonevertnum, np.int64)
    self.entry_bone = np.repeat(np.arange(len(nbv)), nbv)
    skin_of_bone = np.repeat(np.arange(self.nskin), self.bonenum)
    self.entry_vert = (np.asarray(m.skin_bonevertid, np.int64)
                       + self.vertadr[skin_of_bone][self.entry_bone])
    self.entry_pos = tuple(np.ascontiguousarray(c) for c in vert[self.entry_vert].T)
    self.entry_weight = np.asarray(m.skin_bonevertweight, np.float32)
    face = np.asarray(m.skin_face, np.int64).reshape(-1, 3)
    skin_of_face = np.repeat(np.arange(self.nskin), self.facenum)
    self.face = face + self.vertadr[skin_of_face][:, None]     # global vertex ids
    self.skin_of_vert = np.repeat(np.arange(self.nskin), self.vertnum)
    self.vert_rounds = _rounds(self.entry_vert)
    self.normal_rounds = [(e // 3, v) for e, v in _rounds(self.face.ravel())]

  def visible(self, opts):
    """Per skin whether it is drawn under VisOptions `opts`: the skins flag (mjVIS_SKIN) and
    its group (skin_groups)."""
    if not self.nskin:
      return np.zeros(0, bool)
    groups = np.asarray(getattr(opts, "skin_groups", [True] * 3 + [False] * 3), bool)
    return bool(getattr(opts, "skins", True)) & groups[self.group]

  def update(self, xpos, xquat, visible=None):
    """(vert, normal) float32 (nskinvert, 3) at body poses xpos (nbody, 3), xquat (nbody, 4),
    as mjv_updateActiveSkin; skins not `visible` (bool per skin; default all) are zero."""
    vert = np.zeros((self.nvert, 3), np.float32)
    normal = np.zeros((self.nvert, 3), np.float32)
    on = np.ones(self.nskin, bool) if visible is None else np.asarray(visible, bool)
    if not self.nskin or not on.any():
      return vert, normal
    xpos = np.asarray(xpos, np.float64)
    xquat = np.asarray(xquat, np.float64)
    R = _quat2mat(_mul_conj(xquat[self.bodyid], self.bindquat))
    bp = self.bindpos
    t = xpos[self.bodyid] - (R[:, :, 0] * bp[:, 0:1] + R[:, :, 1] * bp[:, 1:2]
                             + R[:, :, 2] * bp[:, 2:3])
    # each bone's vertices moved rigidly (mju_mulMatVec3, then + translation, in float64),
    # one coordinate at a time, weighted in float32; a bone's entries are contiguous, so its
    # transform is repeated over them (np.repeat: cheaper than a gather)
    n, (px, py, pz), w = self.bonevertnum, self.entry_pos, self.entry_weight
    part = []
    for i in range(3):
      Ri = R[:, i]
      moved = np.repeat(Ri[:, 0], n) * px
      moved += np.repeat(Ri[:, 1], n) * py
      moved += np.repeat(Ri[:, 2], n) * pz
      moved += np.repeat(t[:, i], n)
      part.append(w * moved.astype(np.float32))
    # float32 sums in MuJoCo's order (bone after bone): round k adds each vertex's k-th term
    vc = _ordered_sums(self.vert_rounds, part, self.nvert)
    # area-weighted face normals: edges subtracted in float32 (MuJoCo's float vertices), the
    # cross product in float64, each vertex's sum rounded to float32 after every face
    f0, f1, f2 = self.face.T
    ex = [(c[f1] - c[f0]).astype(np.float64) for c in vc]
    ey = [(c[f2] - c[f0]).astype(np.float64) for c in vc]
    nrm = (ex[1] * ey[2] - ex[2] * ey[1], ex[2] * ey[0] - ex[0] * ey[2],
           ex[0] * ey[1] - ex[1] * ey[0])
    nc = _ordered_sums(self.normal_rounds, nrm, self.nvert)
    scl = np.float32(1) / np.maximum(np.float32(_MINVAL),
                                     np.sqrt(nc[0] * nc[0] + nc[1] * nc[1] + nc[2] * nc[2]))
    for i in range(3):
      normal[:, i] = nc[i] * scl
      vert[:, i] = vc[i]
    infl = self.inflate[self.skin_of_vert]
    grow = infl != 0
    if grow.any():
      vert[grow] += infl[grow, None] * normal[grow]
    if not on.all():
      off = ~on[self.skin_of_vert]
      vert[off] = 0
      normal[off] = 0
    return vert, normal

  def ray(self, vert, pnt, vec, visible=None):
    """(distance, body, vertex) of the nearest skin triangle (either side) that the ray
    pnt + t vec, t >= 0, crosses, as mjv_select picks skins (mju_raySkin): the hit face's
    vertex nearest the hit and the bone body weighing most on it; (-1, -1, -1) for none.
    `vert` as `update` gives it; skins not `visible` are skipped."""
    if not self.nskin:
      return -1.0, -1, -1
    f = self.face
    if visible is not None:
      f = f[np.asarray(visible, bool)[self.skin_of_vert[f[:, 0]]]]
    v = np.asarray(vert, np.float64)
    pnt, vec = np.asarray(pnt, np.float64), np.asarray(vec, np.float64)
    a = v[f[:, 0]]
    e1, e2 = v[f[:, 1]] - a, v[f[:, 2]] - a
    p = np.cross(vec, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > _MINVAL
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = pnt - a
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    w = (q @ vec) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (w >= 0) & (u + w <= 1) & (t >= 0)
    if not hit.any():
      return -1.0, -1, -1
    k = np.nonzero(hit)[0][np.argmin(t[hit])]
    x = pnt + t[k] * vec
    vid = int(f[k][np.argmin(np.linalg.norm(v[f[k]] - x, axis=1))])
    on = np.nonzero(self.entry_vert == vid)[0]
    bone = self.entry_bone[on[np.argmax(self.entry_weight[on])]]
    return float(t[k]), int(self.bodyid[bone]), vid


def _rounds(vertex):
  """[(entries, vertices)]: round k holds each vertex's k-th entry of the sequence `vertex`
  (in order), so summing round after round adds every vertex's terms in sequence order."""
  order = np.argsort(vertex, kind="stable")
  sv = vertex[order]
  start = np.r_[0, np.nonzero(np.diff(sv))[0] + 1]
  count = np.diff(np.r_[start, len(sv)])
  rank = np.arange(len(sv)) - np.repeat(start, count)
  out = []
  for k in range(int(rank.max()) + 1 if len(rank) else 0):
    e = order[rank == k]
    out.append((e, vertex[e]))
  return out


# ------------------------------------------------------------------------------------ scene

class SkinScene:
  """What mjv_updateScene adds for a model's skins (numpy; SkinDraw draws it): per skin its
  colour, material, texture and mapping (MuJoCo's setMaterial and settexture); per frame the
  visible skins (mjVIS_SKIN and skin groups), their world vertices and normals, and an
  identity instance row each (colour, material, mapping)."""

  OBJTYPE = 11    # mjOBJ_SKIN: the object a skin draws

  def __init__(self):
    self.model = SkinModel(None)
    self.visible = np.zeros(0, bool)
    self.version = 0          # counts the frames whose vertices (or uvs) changed

  def set_model(self, m):
    """Per-skin colour, material, texture and mapping, and the texture coordinates."""
    self.model = sk = SkinModel(m)
    n = sk.nskin
    self.visible = np.zeros(n, bool)
    self._key = None
    self.version += 1
    if not n:
      return
    self.rgba, self.mat = materials(m, m.skin_rgba, np.asarray(m.skin_matid)[:n])
    self.texid = np.full(n, -1)
    self.textype = np.full(n, TEX_NONE)
    self.mapping = np.zeros((n, 4))
    self.texgen = np.zeros(n, bool)      # a 2d texture without texture coordinates: world x, y
    for i in range(n):
      k = int(m.skin_matid[i])
      t = material_texture(m, k)
      if t < 0:
        continue
      self.texid[i] = t
      rep = np.asarray(m.mat_texrepeat[k], float)
      uniform = bool(m.mat_texuniform[k])
      size = 0.1        # an mjvGeom's size when mjv_initGeom gets none, as a skin's
      if int(m.tex_type[t]) != 0:
        self.textype[i] = TEX_CUBE
        self.mapping[i, :3] = size if uniform else 1.0
      elif int(m.skin_texcoordadr[i]) >= 0:
        self.textype[i] = TEX_2D
        scl = np.where(rep > 0, rep, 1.0) * (size if uniform else 1.0)
        self.mapping[i] = (scl[0], scl[1], 0.0, 0.0)
      else:
        self.textype[i] = TEX_2D
        self.texgen[i] = True
        scl = rep * (size if uniform else 1.0)
        self.mapping[i] = (0.5 * scl[0], -0.5 * scl[1], -0.5, -0.5)
    uv = np.zeros((max(sk.nvert, 1), 2), np.float32)
    for i in range(n):
      a, c, ta = int(sk.vertadr[i]), int(sk.vertnum[i]), int(m.skin_texcoordadr[i])
      if ta >= 0:
        uv[a:a + c] = np.asarray(m.skin_texcoord, np.float32).reshape(-1, 2)[ta:ta + c]
    self.uv = uv
    self.inst = np.zeros((n, 28), np.float32)

  def update(self, snap, opts, vis, highlight=-1):
    """This frame's visible skins and their instance rows; their vertices from the snapshot's
    body poses, recomputed only when a bone moved or the visible set changed (then `version`
    grows). `highlight`: the selected skin, which glows (mjv_updateScene's markselected:
    emission + vis.global.glow)."""
    sk = self.model
    if not sk.nskin:
      return
    self.alpha = alpha = surface_alpha(self.rgba, opts, vis)
    self.visible = sk.visible(opts) & (alpha > 0)
    if not self.visible.any():
      return
    b = sk.bodyid
    key = (snap.xpos[b].tobytes() + snap.xquat[b].tobytes() + self.visible.tobytes())
    if key != self._key:       # a bone moved, or the visible set changed
      self._key = key
      self.vert, self.normal = sk.update(snap.xpos, snap.xquat, self.visible)
      if self.texgen.any():
        on = self.texgen[sk.skin_of_vert]
        self.uv[on] = self.vert[on, :2]
      self.version += 1
    surface_rows(self.inst, self.visible, self.rgba, alpha, self.mat, self.mapping, highlight,
                 vis.global_.glow)

  def any_transparent(self):
    """Whether a visible skin is drawn blended this frame."""
    return bool(self.model.nskin and (self.visible & (self.alpha < 1.0)).any())

  def count(self):
    """Skins drawn this frame (each is one geom of MuJoCo's scene)."""
    return int(self.visible.sum())

  def casters(self):
    """Per visible skin a bounding-box instance row (28 floats: centre, identity, half
    extents) for fitting the shadow map, and the bytes that change when one moves. Blended
    skins cast shadows too: MuJoCo's shadow pass draws every geom but decorations."""
    rows = []
    if not self.model.nskin:
      return np.zeros((0, 28), np.float32), b""
    for i in np.nonzero(self.visible)[0]:
      a, c = int(self.model.vertadr[i]), int(self.model.vertnum[i])
      lo, hi = self.vert[a:a + c].min(0), self.vert[a:a + c].max(0)
      row = np.zeros(28, np.float32)
      row[0:3] = 0.5 * (lo + hi)
      row[3:12] = np.eye(3).ravel()
      row[12:15] = 0.5 * (hi - lo)
      rows.append(row)
    return (np.array(rows, np.float32).reshape(-1, 28), self._key if rows else b"")
