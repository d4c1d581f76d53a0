"""MJCF <skin> (in <asset> or <deformable>): skinned meshes, drawing data only (mjCSkin).

A skin is read from its inline attributes and <bone> children or from a binary SKN file
(meshdir, as meshes), checked as MuJoCo's compiler checks it, and laid out as mjModel's
skin_* arrays. Those are Python-side Model attributes, as the textures are (see
engine/mjcf/_assemble.py DRAW_FIELDS): no kernel reads them; render/skin.py moves the
vertices with the bones each frame.
"""
import os

import numpy as np

from numjoco.engine.mjcf._node import SKIN_PREFIX, floats, ints, number
from numjoco.engine.types import MINVAL

# mjModel's skin fields (DRAW_FIELDS) and sizes (DRAW_SIZES), by MuJoCo's names
SIZES = ("nskin", "nskinvert", "nskintexvert", "nskinface", "nskinbone", "nskinbonevert")
FIELDS = ("skin_matid", "skin_group", "skin_rgba", "skin_inflate", "skin_vertadr",
          "skin_vertnum", "skin_texcoordadr", "skin_faceadr", "skin_facenum", "skin_boneadr",
          "skin_bonenum", "skin_vert", "skin_texcoord", "skin_face", "skin_bonevertadr",
          "skin_bonevertnum", "skin_bonebindpos", "skin_bonebindquat", "skin_bonebodyid",
          "skin_bonevertid", "skin_bonevertweight")
_NGROUP = 6          # mjNGROUP
_NAMELEN = 40        # SKN body names: fixed-length, 0-terminated


class SkinError(ValueError):
  """A malformed SKN file (the caller names the element)."""


def read_skn(data, file):
  """(vert, texcoord, face, bones) of an SKN file's bytes, checked as mjCSkin::LoadSKN checks
  them; bones are (body name, bindpos, bindquat, vertid, vertweight)."""
  size = len(data)
  if size == 0:
    raise SkinError(f"SKN file '{file}' is empty")
  if size < 16:
    raise SkinError(f"missing header in SKN file '{file}'")
  nvert, ntex, nface, nbone = (int(x) for x in np.frombuffer(data, "<i4", 4))
  if min(nvert, ntex, nface, nbone) < 0:
    raise SkinError(f"negative size in header of SKN file '{file}'")
  if size < 16 + 4 * (3 * nvert + 2 * ntex + 3 * nface + 18 * nbone):
    raise SkinError(f"insufficient data in SKN file '{file}' (header: {nvert} vertices, "
                    f"{ntex} texcoords, {nface} faces, {nbone} bones; {size} bytes)")
  words = size // 4
  f32 = np.frombuffer(data, "<f4", words)
  i32 = np.frombuffer(data, "<i4", words)
  cnt = 4
  vert = f32[cnt:cnt + 3 * nvert].reshape(-1, 3)
  cnt += 3 * nvert
  tex = f32[cnt:cnt + 2 * ntex].reshape(-1, 2) if ntex else None
  cnt += 2 * ntex
  face = i32[cnt:cnt + 3 * nface].reshape(-1, 3)
  cnt += 3 * nface
  bones = []
  for i in range(nbone):
    if words - cnt < 18:
      raise SkinError(f"insufficient data in SKN file '{file}', bone {i}")
    raw = data[4 * cnt:4 * cnt + _NAMELEN - 1]
    name = raw.split(b"\0", 1)[0].decode("latin-1")
    cnt += _NAMELEN // 4
    bindpos, bindquat = f32[cnt:cnt + 3], f32[cnt + 3:cnt + 7]
    cnt += 7
    count = int(i32[cnt])
    cnt += 1
    if count < 1:
      raise SkinError(f"vertex count must be positive in SKN file '{file}', bone {i}")
    if (words - cnt) // 2 < count:
      raise SkinError(f"insufficient vertex data in SKN file '{file}', bone {i}")
    vid, weight = i32[cnt:cnt + count], f32[cnt + count:cnt + 2 * count]
    bones.append((name, bindpos, bindquat, vid, weight))
    cnt += 2 * count
  if size != 4 * cnt:
    raise SkinError(f"unexpected size of SKN file '{file}': {size} bytes, the header and "
                    f"bones account for {4 * cnt}")
  return vert, tex, face, bones


def _inline(n):
  """(vert, texcoord, face, bones) from the attributes and <bone> children of <skin> `n`."""
  def array(node, key, dtype, integer=False):
    vals = floats(node, key)
    if vals is None:
      return None
    return np.array(ints(node, key, vals) if integer else vals, dtype)
  vert, tex, face = (array(n, "vertex", np.float32), array(n, "texcoord", np.float32),
                     array(n, "face", np.int32, True))
  bones = []
  for b in n.children:
    for key in ("body", "bindpos", "bindquat", "vertid", "vertweight"):
      if b.get(key) is None:
        raise b.error(f"missing attribute '{key}'")
    bones.append((b.get("body"), np.array(floats(b, "bindpos", 3), np.float32),
                  np.array(floats(b, "bindquat", 4), np.float32),
                  array(b, "vertid", np.int32, True), array(b, "vertweight", np.float32), b))
  return vert, tex, face, bones


def read_skin(c, n):
  """The skin of element `n`, read (inline or from its SKN file) and checked as mjCSkin::Compile
  does, bones still by body name (`resolve` finds their ids once the body tree is final)."""
  file = n.get("file")
  name = n.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
  group = number(n, "group", 0, integer=True)
  if not 0 <= group < _NGROUP:
    raise n.error(f"skin group must be between 0 and {_NGROUP - 1}")
  rgba = floats(n, "rgba", 4) or [0.5, 0.5, 0.5, 1.0]
  inflate = (floats(n, "inflate", 1) or [0.0])[0]
  if file is not None:
    if any(n.get(k) is not None for k in ("vertex", "texcoord", "face")) or n.children:
      raise n.error(f"both skin data and file were specified: {file}")
    if os.path.splitext(file)[1].lower() != ".skn":
      raise n.error(f"unknown skin file type: {file} (MuJoCo reads .skn files)")
    try:
      vert, tex, face, bones = read_skn(c._asset_bytes(n, file, "skin"), file)
    except SkinError as e:
      raise n.error(str(e)) from None
    prefix = n.get(SKIN_PREFIX, "")
    bones = [(prefix + b[0],) + b[1:] + (n,) for b in bones]
  else:
    vert, tex, face, bones = _inline(n)
  if vert is None or face is None or not len(vert) or not len(face) or not bones:
    raise n.error("missing data in skin: it needs vertex, face and at least one bone (or a "
                  "file)")
  if vert.size % 3:
    raise n.error("skin vertex data must be a multiple of 3")
  vert = vert.reshape(-1, 3)
  nvert = len(vert)
  if tex is not None and tex.size != 2 * nvert:
    raise n.error(f"skin texcoord must have 2 values per vertex ({2 * nvert}), got {tex.size}")
  if face.size % 3:
    raise n.error("skin face data must be a multiple of 3")
  face = face.reshape(-1, 3)
  bad = (face < 0) | (face >= nvert)
  if bad.any():
    raise n.error(f"skin face index {int(face[bad][0])} out of range (0 to {nvert - 1})")
  return dict(node=n, name=name, group=group, rgba=rgba, inflate=inflate,
              material=n.get("material"), vert=vert, texcoord=tex, face=face, bones=bones)


def bone_names(skin):
  """Body names the skin's bones refer to (fusestatic keeps those bodies)."""
  return {b[0] for b in skin["bones"]}


def resolve(c, skin):
  """Bone body ids, material id and normalised weights and bind quaternions (mjCSkin::Compile:
  each vertex's weights sum to 1 in float32, in bone order; bindquat normalised in double)."""
  n, nvert = skin["node"], len(skin["vert"])
  body_ids = {}
  for i, b in enumerate(c.bodies):
    body_ids.setdefault(b.name, i)
  bodyid, total = [], np.zeros(nvert, np.float32)
  for name, _, _, vid, vw, where in skin["bones"]:
    if name not in body_ids:
      raise where.error(f"unknown body '{name}' in skin")
    bodyid.append(body_ids[name])
    if len(vid) != len(vw) or not len(vid):
      raise where.error(f"vertid and vertweight must have the same non-zero size in skin "
                        f"(bone '{name}': {len(vid)} and {len(vw)})")
    out = (vid < 0) | (vid >= nvert)
    if out.any():
      raise where.error(f"vertid {int(vid[out][0])} out of range in skin (0 to {nvert - 1})")
    np.add.at(total, vid, vw)                      # float32, sequential: MuJoCo's sums
  low = np.nonzero(total <= MINVAL)[0]
  if len(low):
    raise n.error(f"vertex {int(low[0])} must have positive total weight in skin")
  weights = [np.asarray(vw / total[vid], np.float32) for _, _, _, vid, vw, _ in skin["bones"]]
  quats = []
  for _, _, q, _, _, _ in skin["bones"]:
    q = np.asarray(q, np.float64)
    nrm = np.linalg.norm(q)
    quats.append((q / nrm if nrm >= MINVAL else np.array([1.0, 0, 0, 0])).astype(np.float32))
  matid = -1
  if skin["material"]:
    names = [m.name for m in c.mats]
    if skin["material"] not in names and not c.discardvisual:
      raise n.error(f"unknown material '{skin['material']}' in skin")
    matid = -1 if c.discardvisual else names.index(skin["material"])
  skin.update(bodyid=bodyid, weights=weights, quats=quats, matid=matid)


def assemble(c, A, sizes):
  """mjModel's skin_* arrays and sizes (mjCModel::CopyObjects), drawing data in `A`."""
  sk = c.skins
  for s in sk:
    resolve(c, s)
  bones = [b for s in sk for b in s["bones"]]
  cnt = lambda xs: np.cumsum([0] + list(xs))[:-1].astype(np.int32)
  nv = [len(s["vert"]) for s in sk]
  ntex = [len(s["vert"]) if s["texcoord"] is not None else 0 for s in sk]
  nf = [len(s["face"]) for s in sk]
  nb = [len(s["bones"]) for s in sk]
  nbv = [len(b[3]) for b in bones]
  A.update(nskin=len(sk), nskinvert=sum(nv), nskintexvert=sum(ntex), nskinface=sum(nf),
           nskinbone=len(bones), nskinbonevert=sum(nbv))
  texadr = cnt(ntex)
  A["skin_matid"] = np.array([s["matid"] for s in sk], np.int32)
  A["skin_group"] = np.array([s["group"] for s in sk], np.int32)
  A["skin_rgba"] = np.array([s["rgba"] for s in sk], np.float32).reshape(-1, 4)
  A["skin_inflate"] = np.array([s["inflate"] for s in sk], np.float32)
  A["skin_vertadr"], A["skin_vertnum"] = cnt(nv), np.array(nv, np.int32)
  A["skin_texcoordadr"] = np.array([a if s["texcoord"] is not None else -1
                                    for a, s in zip(texadr, sk)], np.int32)
  A["skin_faceadr"], A["skin_facenum"] = cnt(nf), np.array(nf, np.int32)
  A["skin_boneadr"], A["skin_bonenum"] = cnt(nb), np.array(nb, np.int32)
  cat = lambda xs, shape, dt: (np.concatenate([np.asarray(x, dt).reshape(shape) for x in xs])
                               if xs else np.zeros((0,) + shape[1:], dt))
  A["skin_vert"] = cat([s["vert"] for s in sk], (-1, 3), np.float32)
  A["skin_texcoord"] = cat([s["texcoord"] for s in sk if s["texcoord"] is not None], (-1, 2),
                           np.float32)
  A["skin_face"] = cat([s["face"] for s in sk], (-1, 3), np.int32)
  A["skin_bonevertadr"], A["skin_bonevertnum"] = cnt(nbv), np.array(nbv, np.int32)
  A["skin_bonebindpos"] = cat([b[1] for b in bones], (-1, 3), np.float32)
  A["skin_bonebindquat"] = cat([q for s in sk for q in s["quats"]], (-1, 4), np.float32)
  A["skin_bonebodyid"] = np.array([i for s in sk for i in s["bodyid"]], np.int32)
  A["skin_bonevertid"] = cat([b[3] for b in bones], (-1,), np.int32)
  A["skin_bonevertweight"] = cat([w for s in sk for w in s["weights"]], (-1,), np.float32)
