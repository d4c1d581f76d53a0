"""Skin vertices and normals for one frame, as MuJoCo's mjv_updateActiveSkin computes them.

Each bone moves the vertices it holds rigidly from its bind pose to its body's pose (rotation
xquat * bindquat^-1, translation xpos - R bindpos); a vertex is the weighted sum of those
positions (weights normalised by the compiler, engine/mjcf/_skin.py). Normals are the
area-weighted sums of the face normals, normalised; `inflate` then moves each vertex along
its normal. Arithmetic follows MuJoCo's: bone transforms and moved positions in float64, the
weighted sum and the normals stored in float32.
"""
import numpy as np

_MINVAL = 1e-15     # mjMINVAL


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


class SkinModel:
  """One model's skins, laid out for the per-frame update (arrays made once per model)."""

  def __init__(self, m):
    self.nskin = int(getattr(m, "nskin", 0) or 0)
    if not self.nskin:
      return
    self.vertadr = np.asarray(m.skin_vertadr, np.int64)
    self.vertnum = np.asarray(m.skin_vertnum, np.int64)
    self.faceadr = np.asarray(m.skin_faceadr, np.int64)
    self.facenum = np.asarray(m.skin_facenum, np.int64)
    self.boneadr = np.asarray(m.skin_boneadr, np.int64)
    self.bonenum = np.asarray(m.skin_bonenum, np.int64)
    self.group = np.clip(np.asarray(m.skin_group, np.int64), 0, 5)
    self.inflate = np.asarray(m.skin_inflate, np.float32)
    self.nvert = int(self.vertnum.sum())
    self.bodyid = np.asarray(m.skin_bonebodyid, np.int64)
    self.bindpos = np.asarray(m.skin_bonebindpos, np.float32).reshape(-1, 3).astype(np.float64)
    self.bindquat = np.asarray(m.skin_bonebindquat, np.float32).reshape(-1, 4).astype(np.float64)
    vert = np.asarray(m.skin_vert, np.float32).reshape(-1, 3).astype(np.float64)
    # one entry per (bone, vertex) pair, in MuJoCo's order: bones, then their vertex lists
    nbv = np.asarray(m.skin_bonevertnum, np.int64)
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
    # one coordinate at a time (1-d gathers from the few bones are cheap), weighted in float32
    eb, (px, py, pz), w = self.entry_bone, self.entry_pos, self.entry_weight
    part = []
    for i in range(3):
      Ri = R[:, i]
      moved = Ri[:, 0][eb] * px
      moved += Ri[:, 1][eb] * py
      moved += Ri[:, 2][eb] * pz
      moved += t[:, i][eb]
      part.append(w * moved.astype(np.float32))
    # float32 sums in MuJoCo's order (bone after bone): round k adds each vertex's k-th term
    (e0, v0), rest = self.vert_rounds[0], self.vert_rounds[1:]
    vc = [np.zeros(self.nvert, np.float32) for _ in range(3)]
    for c, pc in zip(vc, part):
      c[v0] = pc[e0]
    for e, v in rest:
      for c, pc in zip(vc, part):
        c[v] += pc[e]
    # area-weighted face normals: edges subtracted in float32 (MuJoCo's float vertices), the
    # cross product in float64, each vertex's sum rounded to float32 after every face
    f0, f1, f2 = self.face.T
    ex = [(c[f1] - c[f0]).astype(np.float64) for c in vc]
    ey = [(c[f2] - c[f0]).astype(np.float64) for c in vc]
    nrm = (ex[1] * ey[2] - ex[2] * ey[1], ex[2] * ey[0] - ex[0] * ey[2],
           ex[0] * ey[1] - ex[1] * ey[0])
    (e0, v0), rest = self.normal_rounds[0], self.normal_rounds[1:]
    nc = [np.zeros(self.nvert, np.float32) for _ in range(3)]
    for c, n in zip(nc, nrm):
      c[v0] = n[e0]
    for e, v in rest:
      for c, n in zip(nc, nrm):
        c[v] = c[v] + n[e]
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
