"""Flexes (MuJoCo's <flex>/<flexcomp> deformables) drawn as MuJoCo's renderer draws them.

Each frame reads the world vertex positions (Data's `flexvert_xpos`, copied into the
snapshot) and builds, per flex, what mjv_updateActiveFlex puts into mjvScene:
- faces (mjVIS_FLEXFACE without mjVIS_FLEXSKIN): both sides of each 2D element and the four
  faces of each 3D element of layer `VisOptions.flex_layer`, flat normals, offset by the
  flex radius along them;
- skin (mjVIS_FLEXSKIN): 2D elements top and bottom offset by +-radius along smoothed vertex
  normals, their rims closed along the shell fragments; 3D: the shell (boundary) fragments;
  flat normals instead when flex_flatskin;
and, as render_gl3's mjGEOM_FLEX branch, a sphere per vertex (mjVIS_FLEXVERT) and a cylinder
per edge (mjVIS_FLEXEDGE) of the flex radius, untextured, unless the skin is drawn. 1D flexes
have no faces: their edges are what shows. Colour and material as setMaterial (flex_rgba
unless the material's and the default); a texture only with texture coordinates. FlexScene
holds them for the scene (numpy); render/surfaces.py's FlexDraw draws them.
"""
import numpy as np

from numjoco.render.texmap import material_texture, materials, surface_alpha, surface_rows

_MINVAL = 1e-15     # mjMINVAL (engine.types has it; the window side imports no engine)


def _normalize(v):
  """Rows of v normalised as mju_normalize3 ((1, 0, 0) where shorter than mjMINVAL)."""
  n = np.linalg.norm(v, axis=1)
  out = np.empty_like(v)
  small = n < _MINVAL
  out[~small] = v[~small] / n[~small, None]
  out[small] = (1.0, 0.0, 0.0)
  return out


def _face_normals(x, tri):
  """Unit normals (n, 3) of triangles `tri` (n, 3) of local vertex ids over positions x."""
  v0 = x[tri[:, 0]]
  return _normalize(np.cross(x[tri[:, 1]] - v0, x[tri[:, 2]] - v0))


class FlexModel:
  """One model's flexes, laid out per flex for the per-frame update (made once per model)."""

  def __init__(self, m):
    self.nflex = int(getattr(m, "nflex", 0) or 0) if m is not None else 0
    if not self.nflex:
      return
    i = lambda name: np.asarray(getattr(m, name), np.int64)
    self.dim = i("flex_dim")
    self.vertadr, self.vertnum = i("flex_vertadr"), i("flex_vertnum")
    self.edgeadr, self.edgenum = i("flex_edgeadr"), i("flex_edgenum")
    self.elemadr, self.elemnum = i("flex_elemadr"), i("flex_elemnum")
    self.group = np.clip(i("flex_group"), 0, 5)
    self.radius = np.asarray(m.flex_radius, float)
    self.flatskin = np.asarray(m.flex_flatskin, bool)
    self.texcoordadr = i("flex_texcoordadr")
    elem, etex = i("flex_elem"), i("flex_elemtexcoord")
    layer, shell = i("flex_elemlayer"), i("flex_shell")
    dataadr, shelladr, shellnum = (i("flex_elemdataadr"), i("flex_shelldataadr"),
                                   i("flex_shellnum"))
    edge = i("flex_edge").reshape(-1, 2)
    tex = np.asarray(getattr(m, "flex_texcoord", np.zeros((0, 2))), np.float32).reshape(-1, 2)
    # MuJoCo has a material per element; MJCF gives one per flex (the first element's here)
    matid = i("flex_matid")
    self.matid = np.array([matid[a] if n else -1 for a, n in zip(self.elemadr, self.elemnum)])
    self.elem, self.elemtex, self.layer, self.shell, self.edge, self.tex = [], [], [], [], [], []
    for f in range(self.nflex):
      d, ne, a = int(self.dim[f]), int(self.elemnum[f]), int(dataadr[f])
      self.elem.append(elem[a:a + ne * (d + 1)].reshape(ne, d + 1))
      self.elemtex.append(etex[a:a + ne * (d + 1)].reshape(ne, d + 1))
      self.layer.append(layer[self.elemadr[f]:self.elemadr[f] + ne])
      s = int(shelladr[f])
      self.shell.append(shell[s:s + int(shellnum[f]) * d].reshape(-1, d))
      self.edge.append(edge[self.edgeadr[f]:self.edgeadr[f] + self.edgenum[f]])
      t = int(self.texcoordadr[f])
      self.tex.append(tex[t:] if t >= 0 else None)

  def visible(self, opts):
    """Per flex whether mjv_updateScene adds it under VisOptions `opts`: one of the four flex
    flags on, and its group on (flex_groups)."""
    if not self.nflex:
      return np.zeros(0, bool)
    on = any(bool(getattr(opts, k, d)) for k, d in (("flex_vertices", False),
                                                      ("flex_edges", True),
                                                      ("flex_faces", False),
                                                      ("flex_skin", True)))
    groups = np.asarray(getattr(opts, "flex_groups", [True] * 3 + [False] * 3), bool)
    return on & groups[self.group]

  def faces(self, f, x, face, skin, layer=0):
    """(positions, normals, texture coordinates or None) float32 (3 n, 3), (3 n, 3), (3 n, 2)
    of the n triangles of flex `f` with local vertex positions x (nvert, 3), as
    mjv_updateActiveFlex builds them for the flags `face` and `skin`; None when it has none."""
    d, r = int(self.dim[f]), float(self.radius[f])
    if d == 1 or not (face or skin):
      return None
    x = np.asarray(x, np.float64)
    elem, etex, tex = self.elem[f], self.elemtex[f], self.tex[f]
    if not skin:            # faces: flat normals, each face offset along its own normal
      if d == 2:
        tri = np.stack([elem[:, [0, 1, 2]], elem[:, [0, 2, 1]]], 1).reshape(-1, 3)
        ttri = np.stack([etex[:, [0, 1, 2]], etex[:, [0, 2, 1]]], 1).reshape(-1, 3)
      else:
        sel = self.layer[f] == layer
        e, t = elem[sel], etex[sel]
        order = ([0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2])
        tri = np.stack([e[:, o] for o in order], 1).reshape(-1, 3)
        ttri = np.stack([t[:, o] for o in order], 1).reshape(-1, 3)
      nrm = _face_normals(x, tri)
      pos = x[tri] + r * nrm[:, None, :]
      normal = np.repeat(nrm[:, None, :], 3, 1)
      uv = tex[ttri] if tex is not None else None
      return _pack(pos, normal, uv)
    # skin: smoothed vertex normals from the top sides (2D) or the shell fragments (3D)
    src = elem if d == 2 else self.shell[f]
    vn = np.zeros_like(x)
    fn = _face_normals(x, src[:, :3])
    for k in range(3):
      np.add.at(vn, src[:, k], fn)
    vn = _normalize(vn)
    parts = []
    if d == 2:
      parts.append(self._smooth(x, vn, elem[:, [0, 1, 2]], r, f,
                                etex[:, [0, 1, 2]] if tex is not None else None))
      parts.append(self._smooth(x, vn, elem[:, [0, 2, 1]], -r, f,
                                etex[:, [0, 2, 1]] if tex is not None else None))
      s = self.shell[f]
      parts.append(_side(x, vn, s[:, 0], s[:, 1], r, tex))
      parts.append(_side(x, vn, s[:, 1], s[:, 0], -r, tex))
    else:
      s = self.shell[f]
      parts.append(self._smooth(x, vn, s, r, f, s if tex is not None else None))
    pos = np.concatenate([p[0] for p in parts])
    normal = np.concatenate([p[1] for p in parts])
    uv = np.concatenate([p[2] for p in parts]) if tex is not None else None
    return _pack(pos, normal, uv)

  def _smooth(self, x, vn, tri, r, f, ttri):
    """makeSmooth over triangles `tri`: vertices offset by r along their smoothed normals,
    normals smoothed (or the face's, flatskin) times the sign of r (radius 0 counts as
    negative, as MuJoCo's `radius > 0 ? 1 : -1`)."""
    sign = 1.0 if r > 0 else -1.0
    if self.flatskin[f]:
      normal = np.repeat(_face_normals(x, tri)[:, None, :], 3, 1)
    else:
      normal = sign * vn[tri]
    pos = x[tri] + r * vn[tri]
    return pos, normal, (self.tex[f][ttri] if ttri is not None else None)


def _side(x, vn, i0, i1, r, tex):
  """makeSide: the rim triangle (v0 + r n0, v1 - r n1, v1 + r n1) of a 2D skin along the
  shell fragment (i0, i1), with the flat normal (v1 - v0) x n1 (negated for r < 0)."""
  nrm = np.cross(x[i1] - x[i0], vn[i1])
  if r < 0:
    nrm = -nrm
  nrm = _normalize(nrm)
  pos = np.stack([x[i0] + r * vn[i0], x[i1] - r * vn[i1], x[i1] + r * vn[i1]], 1)
  uv = np.stack([tex[i0], tex[i1], tex[i1]], 1) if tex is not None else None
  return pos, np.repeat(nrm[:, None, :], 3, 1), uv


def _pack(pos, normal, uv):
  """Triangle arrays flattened to float32 vertex rows."""
  pos = np.asarray(pos, np.float32).reshape(-1, 3)
  normal = np.asarray(normal, np.float32).reshape(-1, 3)
  return pos, normal, (None if uv is None else np.asarray(uv, np.float32).reshape(-1, 2))


def vertex_positions(m, xpos, xmat):
  """flexvert_xpos (nflexvert, 3) of non-interpolated flexes from body poses, as MuJoCo's
  kinematics sets them (body position plus rotated local vertex; a centered flex's vertex is
  its body's position); interpolated (node) flexes are left at zero. For Data without the
  field (the flex physics is not merged yet)."""
  out = np.zeros((int(m.nflexvert), 3))
  body = np.asarray(m.flex_vertbodyid, np.int64)
  local = np.asarray(m.flex_vert, float).reshape(-1, 3)
  R = np.asarray(xmat, float).reshape(-1, 3, 3)[body]
  out[:] = np.asarray(xpos, float)[body] + np.einsum("nij,nj->ni", R, local)
  interp = np.asarray(getattr(m, "flex_interp", np.zeros(int(m.nflex))), np.int64)
  for f in np.nonzero(interp)[0]:
    a, n = int(m.flex_vertadr[f]), int(m.flex_vertnum[f])
    out[a:a + n] = 0.0
  return out


# ------------------------------------------------------------------------------------ scene

class FlexScene:
  """What mjv_updateScene adds for a model's flexes (numpy; FlexDraw draws it): per flex its
  colour, material and texture mapping (setMaterial); per frame the visible flexes, the
  triangles of their faces or skin (world space), an identity instance row each, and their
  vertex spheres and edge cylinders as instances of the primitive meshes."""

  OBJTYPE = 9     # mjOBJ_FLEX: the object a flex's faces, vertices and edges draw

  def __init__(self):
    self.model = FlexModel(None)
    self.visible = np.zeros(0, bool)
    self.nface = np.zeros(0, np.int64)
    self.version = 0          # counts the frames whose triangles changed

  def set_model(self, m):
    """Per-flex colour, material and texture (setMaterial)."""
    self.model = fm = FlexModel(m)
    n = fm.nflex
    self.visible = np.zeros(n, bool)
    self.nface = np.zeros(n, np.int64)
    self._key = None
    self.version += 1
    if not n:
      return
    self.rgba, self.mat = materials(m, m.flex_rgba, fm.matid)
    self.texid = np.full(n, -1)
    self.mapping = np.zeros((n, 4))
    for f in range(n):
      k = int(fm.matid[f])
      # addFlexGeoms: no texture without texture coordinates
      t = material_texture(m, k) if fm.texcoordadr[f] >= 0 else -1
      if t < 0:
        continue
      self.texid[f] = t
      rep = np.asarray(m.mat_texrepeat[k], float)
      scl = np.where(rep > 0, rep, 1.0)
      if bool(m.mat_texuniform[k]):       # size: (radius, 0.1) as mjv_initGeom leaves them
        size = (fm.radius[f], 0.1)
        scl = scl * np.where(np.asarray(size) > 0, size, 1.0)
      self.mapping[f] = (scl[0], scl[1], 0.0, 0.0)
    self.tris = [None] * n
    self.inst = np.zeros((n, 28), np.float32)

  def update(self, snap, opts, vis, batch_o, batch_t, kinds, highlight=-1):
    """This frame's visible flexes: their triangles (made again only when a vertex moved or
    what is drawn changed; then `version` grows) and instance rows; their vertex spheres and
    edge cylinders into the opaque or transparent geom batch (`kinds`: the SPHERE and
    CYLINDER mesh kinds). `highlight`: the selected flex, which glows (markselected)."""
    fm = self.model
    if not fm.nflex:
      return
    self.alpha = alpha = surface_alpha(self.rgba, opts, vis)
    self.visible = fm.visible(opts) & (alpha > 0)
    if not self.visible.any():
      self.nface[:] = 0
      self._key = None
      return
    xall = np.asarray(snap.flexvert_xpos, np.float64)
    face, skin = bool(getattr(opts, "flex_faces", False)), bool(getattr(opts, "flex_skin", True))
    layer = int(getattr(opts, "flex_layer", 0))
    key = (xall.tobytes(), self.visible.tobytes(), face, skin, layer)
    if key != self._key:       # a vertex moved, or what is drawn changed: faces again
      self._key = key
      self._faces(xall, face, skin, layer)
      self.version += 1
    surface_rows(self.inst, self.visible, self.rgba, alpha, self.mat, self.mapping, highlight,
                 vis.global_.glow)
    sphere, cylinder = kinds
    for f in np.nonzero(self.visible)[0]:
      mat = self.mat[f].copy()
      mat[0] += vis.global_.glow if f == highlight else 0.0    # markselected, as its faces
      # vertex spheres and edge cylinders (render_gl3): radius > 0, and not under a skin
      r = float(fm.radius[f])
      if r <= 0 or (skin and self.nface[f]):
        continue
      a, n = int(fm.vertadr[f]), int(fm.vertnum[f])
      x32 = xall[a:a + n].astype(np.float32).astype(np.float64)   # scn->flexvert is float
      rgba = (*self.rgba[f, :3], alpha[f])
      b = batch_o if alpha[f] >= 1.0 else batch_t
      if getattr(opts, "flex_vertices", False):
        b.add(sphere, x32, np.eye(3).ravel(), (r, r, r, 0.0), rgba, mat,
              objtype=self.OBJTYPE, objid=f)
      if getattr(opts, "flex_edges", True) and len(fm.edge[f]):
        e = fm.edge[f]
        b.connectors(cylinder, x32[e[:, 0]], x32[e[:, 1]], r, rgba, mat, objtype=self.OBJTYPE,
                     objid=f)

  def _faces(self, xall, face, skin, layer):
    """Every visible flex's triangles (`tris`: positions and normals (n, 6), uvs or None);
    their counts and bounding boxes."""
    fm = self.model
    self.nface[:] = 0
    self._rows = []
    for f in np.nonzero(self.visible)[0]:
      a, n = int(fm.vertadr[f]), int(fm.vertnum[f])
      tris = fm.faces(f, xall[a:a + n], face, skin, layer)
      if tris is None or not len(tris[0]):
        continue
      pos, normal, uv = tris
      self.nface[f] = len(pos) // 3
      self.tris[f] = (np.ascontiguousarray(np.concatenate([pos, normal], 1)), uv)
      lo, hi = pos.min(0), pos.max(0)
      row = np.zeros(28, np.float32)
      row[0:3], row[3:12], row[12:15] = 0.5 * (lo + hi), np.eye(3).ravel(), 0.5 * (hi - lo)
      self._rows.append(row)

  def any_transparent(self):
    """Whether a visible flex draws blended faces this frame."""
    return bool(self.model.nflex and (self.visible & (self.nface > 0) & (self.alpha < 1)).any())

  def count(self):
    """Flexes in the scene this frame (each is one geom of MuJoCo's scene)."""
    return int(self.visible.sum())

  def casters(self):
    """A bounding-box instance row per face set (for fitting the shadow map) and the bytes
    that change when one moves."""
    if not self.model.nflex or not self.nface.any():
      return np.zeros((0, 28), np.float32), b""
    rows = np.array(self._rows, np.float32).reshape(-1, 28)
    return rows, rows.tobytes()
