"""What to draw, as MuJoCo's mjv_updateScene (render/renderer.py draws it, as mjr_render): from
a Model, a Snapshot of its Data and the VisOptions, a Scene of instances per draw kind (the
primitive meshes, then the model's mesh assets and height fields), each instance a row of
position, rotation, size, rgba, material and a second rgba (checker colour or texture
mapping); plus the textured geoms, skins, flexes, lights, rangefinder lines and haze band.
Every instance also carries the MuJoCo object it draws (SceneObjects: mjvGeom's objid and
objtype, what segmentation images report).

Sizes and colours follow mjv_updateScene (mjVisual scale/rgba times stat.meansize). Decorations
(contacts, frames, joints, inertia, com, sites, tendons, equality anchors, rangefinder rays) are
instances of the same meshes: an arrow is a cylinder and a cone. Pure numpy: no GL here.
"""
import dataclasses
import math

import numpy as np

from numjoco.render import meshes
from numjoco.render.flex import FlexScene
from numjoco.render.skin import SkinScene
from numjoco.render.texmap import GeomTextures, materials
from numjoco.render.visual import visual_for

# primitive meshes, in draw order
# (ball, rod, tip: low-resolution sphere, cylinder and cone for markers drawn by the thousand)
KINDS = meshes.KINDS
QUAD, SPHERE, CAPSULE, CYLINDER, BOX, CONE, BALL, ROD, TIP = range(len(KINDS))
# mjtGeom -> mesh kind: plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh, sdf
_GEOM_KIND = np.array([QUAD, BOX, SPHERE, CAPSULE, SPHERE, CYLINDER, BOX, BOX, BOX])
FLOATS = 28           # per instance: pos 3, rotation rows 9, size 4, rgba 4, material 4, rgba2 4
_EYE9 = np.eye(3).ravel()
MAX_LIGHTS = 8        # lights drawn: the headlight and the first active model lights
LABELS = ("none", "body", "geom", "site", "joint")
# mjtObj: what the instances draw (engine.types is not imported here: this module loads alone)
(_OBJ_BODY, _OBJ_JOINT, _OBJ_GEOM, _OBJ_SITE, _OBJ_CAMERA, _OBJ_EQUALITY, _OBJ_TENDON,
 _OBJ_SENSOR) = (1, 3, 5, 6, 7, 17, 18, 20)


@dataclasses.dataclass
class VisOptions:
  """What to draw (MuJoCo's mjvOption flags, with its defaults)."""
  contact_points: bool = False
  contact_forces: bool = False
  contact_frames: bool = False
  constraints: bool = False       # equality anchors (connect/weld), as mjVIS_CONSTRAINT
  joints: bool = False
  body_frames: bool = False
  com: bool = False
  inertia: bool = False
  sites: bool = True
  tendons: bool = True
  rangefinder: bool = True        # mjVIS_RANGEFINDER: rangefinder rays (and geom fromto lines)
  perturb: bool = True            # read by the app (it draws the spring via Renderer.lines)
  wireframe: bool = False
  transparency: bool = False      # mjVIS_TRANSPARENT: dynamic geoms drawn with alpha * map.alpha
  shadows: bool = True
  haze: bool = True               # mjRND_HAZE: the first infinite plane fades into rgba.haze at
                                  # the horizon (when the model has a skybox, as MuJoCo)
  reflections: bool = False       # not drawn yet
  geom_groups: list = dataclasses.field(default_factory=lambda: [True, True, True, False,
                                                                 False, False])
  site_groups: list = dataclasses.field(default_factory=lambda: [True, True, True, False,
                                                                 False, False])
  joint_groups: list = dataclasses.field(default_factory=lambda: [True, True, True, False,
                                                                  False, False])
  skins: bool = True              # mjVIS_SKIN
  skin_groups: list = dataclasses.field(default_factory=lambda: [True, True, True, False,
                                                                 False, False])
  flex_vertices: bool = False     # mjVIS_FLEXVERT
  flex_edges: bool = True         # mjVIS_FLEXEDGE
  flex_faces: bool = False        # mjVIS_FLEXFACE
  flex_skin: bool = True          # mjVIS_FLEXSKIN (hides the vertices and edges of 2D/3D flexes)
  flex_groups: list = dataclasses.field(default_factory=lambda: [True, True, True, False,
                                                                 False, False])
  flex_layer: int = 0             # mjvOption.flex_layer: the 3D element layer flex_faces shows
  labels: str = "none"            # one of LABELS
  background: tuple = (0.15, 0.17, 0.2)

  @property
  def equality(self):
    """Alias of `constraints` (the issue calls them equality anchors)."""
    return self.constraints

  @equality.setter
  def equality(self, v):
    self.constraints = bool(v)


def _groups(flags, what):
  """A visibility list of the 6 MuJoCo groups as a bool array, or a clear error."""
  a = np.asarray(flags, bool).ravel()
  if a.shape != (6,):
    raise ValueError(f"VisOptions.{what} must have 6 entries (groups 0-5), got {len(a)}")
  return a


def _rot_z_to(v):
  """(n, 9) rotation rows taking +z to the unit vectors v (n, 3)."""
  n = len(v)
  z = v
  a = np.where(np.abs(z[:, [0]]) < 0.9, np.array([[1.0, 0, 0]]), np.array([[0, 1.0, 0]]))
  x = np.cross(a, z)
  x /= np.linalg.norm(x, axis=1, keepdims=True)
  y = np.cross(z, x)
  R = np.empty((n, 3, 3))
  R[:, :, 0], R[:, :, 1], R[:, :, 2] = x, y, z
  return R.reshape(n, 9)


def _segments(p0, p1, width, rgba, objid=-1):
  """The segments p0 -> p1 (arrays (n, 3)) longer than 1e-12: (start, vector, length, width,
  rgba, object id) of each, widths, colours and ids broadcast per segment; None when there is
  none."""
  v = p1 - p0
  length = np.linalg.norm(v, axis=1)
  ok = length > 1e-12
  if not ok.any():
    return None
  n = len(ok)
  return (p0[ok], v[ok], length[ok], np.broadcast_to(width, (n,))[ok],
          np.broadcast_to(rgba, (n, 4))[ok], np.broadcast_to(objid, (n,))[ok])


class Batch:
  """Instances collected for one frame, per mesh kind, and the MuJoCo object each one draws
  (mjvGeom's objid and objtype: what segmentation images report)."""

  def __init__(self, nkinds=len(KINDS)):
    self.parts = [[] for _ in range(nkinds)]
    self.objs = [[] for _ in range(nkinds)]

  def count(self):
    """Instances collected so far (an arrow counts its shaft and its head)."""
    return sum(len(a) for part in self.parts for a in part)

  def add(self, kind, pos, rot, size, rgba, mat=None, rgba2=0.0, objtype=0, objid=-1):
    """Instances of mesh `kind` showing object(s) `objid` (one, or one per instance) of mjtObj
    `objtype` (0, mjOBJ_UNKNOWN: decorations such as contacts and frames)."""
    n = len(pos)
    if n == 0:
      return
    a = np.empty((n, FLOATS), np.float32)
    a[:, 0:3] = pos
    a[:, 3:12] = rot
    a[:, 12:16] = size
    a[:, 16:20] = rgba
    a[:, 20:24] = (0.0, 0.5, 0.5, 0.0) if mat is None else mat
    a[:, 24:28] = rgba2
    self.parts[kind].append(a)
    ids = np.empty((n, 2), np.int32)
    ids[:, 0], ids[:, 1] = objid, objtype
    self.objs[kind].append(ids)

  def connectors(self, kind, p0, p1, width, rgba, mat=None, objtype=0, objid=-1):
    """Cylinders (or capsules) of radius `width` from p0 to p1 (arrays (n, 3))."""
    seg = _segments(p0, p1, width, rgba, objid)
    if seg is None:
      return
    p0, v, length, width, rgba, objid = seg
    rot = _rot_z_to(v / length[:, None])
    half = length / 2
    size = np.stack([width, width, half if kind in (CYLINDER, ROD) else width,
                     half if kind == CAPSULE else 0 * half], 1)
    self.add(kind, p0 + v / 2, rot, size, rgba, mat, objtype=objtype, objid=objid)

  def arrows(self, p0, p1, width, rgba, style="plain", low=False, objtype=0, objid=-1):
    """Arrows from p0 along p1 - p0 = L: a cylinder shaft and cone heads. Styles: "plain" ends
    at p1 (head 3 widths long); MuJoCo's "arrow" (shaft to L/3, head to L/2, 1.75 widths wide),
    "arrow1" (the same, head as wide as the shaft) and "arrow2" (centred at p0, heads at
    +-L/2) as its renderer draws mjGEOM_ARROW/ARROW1/ARROW2. `low`: low-resolution meshes."""
    seg = _segments(p0, p1, width, rgba, objid)
    if seg is None:
      return
    p0, v, length, width, rgba, objid = seg
    u = v / length[:, None]
    if style == "plain":
      head, hw = np.minimum(3 * width, 0.4 * length), 2 * width
      s0, s1 = p0, p0 + v - u * head[:, None]
    else:
      head, hw = length / 6, (width if style == "arrow1" else 1.75 * width)
      s0 = p0 - v / 3 if style == "arrow2" else p0
      s1 = p0 + v / 3
    shaft, cone = (ROD, TIP) if low else (CYLINDER, CONE)
    obj = dict(objtype=objtype, objid=objid)
    self.connectors(shaft, s0, s1, width, rgba, **obj)
    size = np.stack([hw * np.ones_like(head), hw * np.ones_like(head), head, 0 * head], 1)
    self.add(cone, s1, _rot_z_to(u), size, rgba, **obj)
    if style == "arrow2":
      self.add(cone, s0, _rot_z_to(-u), size, rgba, **obj)

  def frames(self, pos, rot, length, width, objid=-1):
    """RGB axes (x red, y green, z blue) of the frames (pos (n,3), rot (n,9) rows), each
    drawing mjOBJ_UNKNOWN object `objid` (one, or one per frame) as MuJoCo's addFrame."""
    R = rot.reshape(-1, 3, 3)
    for j in range(3):
      rgba = np.zeros(4)
      rgba[j], rgba[3] = 0.9, 1.0
      self.connectors(CYLINDER, pos, pos + R[:, :, j] * length, width, rgba, objid=objid)

  def arrays(self):
    """The instance rows (n, FLOATS) float32 of each mesh kind."""
    return [np.concatenate(p) if p else np.zeros((0, FLOATS), np.float32) for p in self.parts]

  def obj_arrays(self):
    """The objects of those rows: (n, 2) int32 [objid, objtype] per mesh kind."""
    return [np.concatenate(p) if p else np.zeros((0, 2), np.int32) for p in self.objs]


@dataclasses.dataclass
class SceneObjects:
  """The MuJoCo object each instance of a Scene draws, as mjvGeom's objid and objtype: (n, 2)
  int32 rows [objid, objtype] parallel to the Scene's instance arrays. Skins and flex faces are
  one object each (mjOBJ_SKIN, mjOBJ_FLEX: their index)."""
  geoms: list            # per kind, as Scene.geoms
  tgeoms: list           # per kind, as Scene.tgeoms
  decor: list            # per kind, as Scene.decor
  tdecor: list           # per kind, as Scene.tdecor
  textured: list         # per group of Scene.textured
  wide_lines: np.ndarray  # per row of Scene.wide_lines


@dataclasses.dataclass
class Scene:
  """One frame's scene (mjvScene): instance arrays (n, FLOATS) float32 per draw kind."""
  geoms: list            # opaque geoms (and opaque flex vertices/edges), per kind
  tgeoms: list           # transparent geoms, per kind
  decor: list            # opaque decorations, per kind
  tdecor: list           # transparent decorations, per kind
  textured: list         # textured geoms: [(kind, texid, instances, transparent)]
  skins: SkinScene       # this frame's skins (visible, vertices, instance rows)
  flexes: FlexScene      # this frame's flexes (visible, triangles, instance rows)
  lights: list           # headlight then model lights: (pos+w, dir, amb, dif, spec, att,
                         # (cos cutoff, exponent), light id or -1)
  wide_lines: object     # rangefinder lines (n, 10) float32 (p0, p1, rgba), or None
  lines: list            # (p0, p1, rgba) GL lines (the app's perturbation spring)
  haze: object           # the haze band's triangles (n, 7) float32 (position, rgba), or None
  ngeom: int             # geoms in MuJoCo's scene
  full: bool             # markers were left out for want of room (mjWARN_VGEOMFULL)
  eye: np.ndarray        # the camera's position
  forward: np.ndarray    # the camera's unit viewing direction
  objs: SceneObjects     # the object of every instance (segmentation)


def _size4(gtype, size):
  """(n, 4) instance sizes of geoms or sites of mjtGeom `gtype` with MuJoCo sizes `size`:
  the mesh's scale per axis, and a capsule's half-length in the fourth column."""
  s = np.zeros((len(gtype), 4))
  for t, cols in ((2, (0, 0, 0)), (3, (0, 0, 0)), (4, (0, 1, 2)), (5, (0, 0, 1)),
                  (6, (0, 1, 2))):
    sel = gtype == t
    s[sel, :3] = size[sel][:, cols]
  cap = gtype == 3
  s[cap, 3] = size[cap, 1]
  return s


# mjtGeom -> mesh kind and the MuJoCo size columns of its instance size (as _size4)
_USER_KIND = {2: (SPHERE, (0, 0, 0)), 3: (CAPSULE, (0, 0, 0)), 4: (SPHERE, (0, 1, 2)),
              5: (CYLINDER, (0, 0, 1)), 6: (BOX, (0, 1, 2))}
_ARROW_STYLE = {100: "arrow", 101: "arrow1", 102: "arrow2"}


def user_instances(geoms, batch_o, batch_t):
  """A script's geoms (mjvScene geoms added by mjv_initGeom / mjv_connector: objects with
  type, size, pos, mat, rgba, and `ends` (p0, p1) and `width` for connectors) into the opaque
  or transparent decoration batch; returns the lines among them as (p0, p1, rgba)."""
  lines = []
  for g in geoms:
    batch = batch_o if g.rgba[3] >= 1.0 else batch_t
    if g.type == 103:                                   # mjGEOM_LINE
      lines.append((g.ends[0], g.ends[1], tuple(g.rgba)))
    elif g.type in _ARROW_STYLE:
      batch.arrows(g.ends[0][None], g.ends[1][None], g.width, g.rgba, _ARROW_STYLE[g.type])
    elif g.ends is not None:                            # a capsule, cylinder or box connector
      kind = _USER_KIND[g.type][0]
      if kind == BOX:
        p0, p1 = g.ends
        v = p1 - p0
        half = np.linalg.norm(v) / 2
        if half > 1e-12:
          batch.add(BOX, ((p0 + p1) / 2)[None], _rot_z_to((v / (2 * half))[None]),
                    np.array([[g.width, g.width, half, 0.0]]), g.rgba[None])
      else:
        batch.connectors(kind, g.ends[0][None], g.ends[1][None], g.width, g.rgba)
    else:
      kind, cols = _USER_KIND[g.type]
      size = np.zeros((1, 4))
      size[0, :3] = np.asarray(g.size, float)[list(cols)]
      if g.type == 3:
        size[0, 3] = g.size[1]
      batch.add(kind, np.asarray(g.pos, float)[None], np.asarray(g.mat, float).reshape(1, 9),
                size, np.asarray(g.rgba, float)[None])
  return lines


class SceneBuilder:
  """Builds the Scene of a model's snapshots (mjv_updateScene): per-model constants once
  (`set_model`), then a Scene per frame (`build`)."""

  # capacity of the scene, as mjvScene.maxgeom (mujoco.Renderer's default; MuJoCo's simulate
  # has 100000): rangefinder markers beyond it are left out, as mjv_updateScene leaves them
  max_geom = 10000
  scene_full = False     # whether the last frame left some out (MuJoCo: mjWARN_VGEOMFULL)

  def __init__(self, m=None):
    self.m = None
    self.highlight_body = -1  # selected body: its geoms glow (MuJoCo's pert.select)
    self.highlight_skin = -1  # selected skin: it glows (pert.skinselect, set with a skin pick)
    self.highlight_flex = -1  # selected flex: it glows (pert.flexselect)
    self.textures = GeomTextures()
    self.skins = SkinScene()
    self.flexes = FlexScene()
    self.mesh_verts = []      # vertex rows (n, 7) of each mesh asset, then each height field
    self.nkinds = len(KINDS)
    if m is not None:
      self.set_model(m)

  def set_model(self, m):
    """Precompute everything per geom, site and body that does not change while the model
    runs, and the vertex rows of its mesh assets."""
    self.m = m
    self.vis = vis = visual_for(m)
    self.meansize = vis.stat.meansize
    n = m.ngeom
    gtype = np.asarray(m.geom_type)
    self.geom_kind = _GEOM_KIND[gtype]
    size = np.asarray(m.geom_size, float)
    s = _size4(gtype, size)
    self.geom_offset = np.zeros((n, 3))
    scales = self._set_meshes(m)
    dataid = np.asarray(getattr(m, "geom_dataid", np.full(n, -1)))
    is_mesh = np.isin(gtype, (7, 8)) & (dataid >= 0)   # sdf: the mesh made from it
    self.geom_kind = self.geom_kind.copy()
    self.geom_kind[is_mesh] = len(KINDS) + dataid[is_mesh]
    for g in np.nonzero(is_mesh)[0]:
      s[g, :3] = scales[dataid[g]]
    nmesh = int(getattr(m, "nmesh", 0))
    is_hfield = (gtype == 1) & (dataid >= 0)
    self.geom_kind[is_hfield] = len(KINDS) + nmesh + dataid[is_hfield]
    for g in np.nonzero(is_hfield)[0]:
      s[g, :3] = scales[nmesh + dataid[g]]
    box_like = np.isin(gtype, (7, 8)) & ~is_mesh      # no mesh: its bounding box
    aabb = np.asarray(m.geom_aabb, float)
    s[box_like, :3] = np.maximum(aabb[box_like, 3:6], 1e-4)
    self.geom_offset[box_like] = aabb[box_like, :3]
    plane = gtype == 0
    self.plane_ids = np.nonzero(plane)[0]
    zfar = vis.map.zfar * vis.stat.extent
    for g in self.plane_ids:
      spacing = size[g, 2] if size[g, 2] > 0 else vis.stat.extent / 10
      s[g] = (size[g, 0] if size[g, 0] > 0 else zfar, size[g, 1] if size[g, 1] > 0 else zfar,
              1.0, spacing)
    self.geom_size4 = s
    matid = np.asarray(m.geom_matid)
    rgba, mat = materials(m, m.geom_rgba, matid)
    rgba2 = np.zeros((n, 4))
    mat_names = getattr(m, "names", {}).get(14, [])     # mjtObj.MATERIAL
    for g in self.plane_ids:
      k = matid[g]
      tex = vis.materials.get(mat_names[k]) if 0 <= k < len(mat_names) else None
      if tex is None or tex["builtin"] != "checker":
        continue
      # MuJoCo maps a 2x2-square checker texture texrepeat times over the plane (per unit
      # length with texuniform): squares of size/texrepeat (checked against its renderer)
      tint = rgba[g, :3].copy()
      rgba[g, :3] = np.asarray(tex["rgb2"][:3]) * tint     # MuJoCo's phase: rgb2 at the origin
      rgba2[g, :3] = np.asarray(tex["rgb1"][:3]) * tint
      rep = max(tex["texrepeat"][0], 1e-6)
      s[g, 3] = 1 / rep if tex["texuniform"] or size[g, 0] <= 0 else size[g, 0] / rep
      mat[g, 3] = 2.0
    self.geom_rgba, self.geom_mat, self.geom_rgba2 = rgba, mat, rgba2
    self.geom_bodyid = np.asarray(m.geom_bodyid)
    self.geom_group = np.clip(np.asarray(m.geom_group), 0, 5)
    self.geom_dynamic = np.asarray(m.body_weldid)[self.geom_bodyid] != 0
    # sites
    stype = np.asarray(m.site_type)
    self.site_kind = _GEOM_KIND[stype]
    self.site_size4 = _size4(stype, np.asarray(m.site_size, float))
    self.site_rgba, self.site_mat = materials(m, m.site_rgba, np.asarray(m.site_matid))
    self.site_bodyid = np.asarray(m.site_bodyid)
    self.site_group = np.clip(np.asarray(m.site_group), 0, 5)
    # inertia boxes (MuJoCo's equivalent-inertia box)
    mass = np.asarray(m.body_mass, float)
    I = np.asarray(m.body_inertia, float)
    self.inertia_bodies = np.nonzero((mass > 1e-15) & (np.arange(m.nbody) > 0))[0]
    b = self.inertia_bodies
    mm = mass[b][:, None]
    half = np.sqrt(np.maximum(np.stack([I[b, 1] + I[b, 2] - I[b, 0], I[b, 0] + I[b, 2] - I[b, 1],
                                        I[b, 0] + I[b, 1] - I[b, 2]], 1), 0) / (2 * mm))
    self.inertia_size = half * math.sqrt(3)
    self.root_bodies = np.nonzero((np.asarray(m.body_rootid) == np.arange(m.nbody))
                                  & (np.arange(m.nbody) > 0))[0]
    self.names = {k: list(v) for k, v in getattr(m, "names", {}).items()}
    self._rays = ray_sensors(m)
    self.textures.set_model(m, self)
    self.skins.set_model(m)
    self.flexes.set_model(m)

  # ------------------------------------------------------------------------------ frame

  def _set_meshes(self, m):
    """The vertex rows of the model's mesh assets and height fields (draw kinds len(KINDS) +
    mesh id, then + nmesh + hfield id); returns each one's scale (its instance size)."""
    self.mesh_verts, scales = [], []
    nmesh = int(getattr(m, "nmesh", 0))
    nhfield = int(getattr(m, "nhfield", 0))
    for i in range(nmesh + nhfield):
      if i < nmesh:
        _, _, (verts, scale) = meshes.model_mesh(m, i)
      else:   # height fields follow the meshes as kinds of their own
        h = i - nmesh
        nr, nc, adr = int(m.hfield_nrow[h]), int(m.hfield_ncol[h]), int(m.hfield_adr[h])
        verts, scale = meshes.mesh_asset(*meshes.hfield_asset(
            m.hfield_size[h], nr, nc, m.hfield_data[adr:adr + nr * nc]))
      scales.append(scale)
      self.mesh_verts.append(verts)
    self.nkinds = len(KINDS) + nmesh + nhfield
    return scales

  def build(self, snap, opts, eye, forward, far=None, lines=(), arrows=(), user=()):
    """The Scene of `snap` under VisOptions `opts` seen from `eye` along unit `forward`
    (`far`: the camera's far clip distance, for the haze band); `lines` and `arrows` (p0, p1,
    rgba[, width]) are the app's extra markers (the perturbation spring), `user` a script's
    geoms (app.passive.UserGeom: mjtGeom type, size, pos, mat, rgba, connector ends)."""
    nk = self.nkinds
    # opaque geoms, transparent geoms, opaque decorations, transparent decorations
    bo, bg, bd, bt = Batch(nk), Batch(nk), Batch(nk), Batch(nk)
    self.skins.update(snap, opts, self.vis, self.highlight_skin)
    textured = self._geom_instances(snap, opts, eye, bo, bg)
    self._scene_ngeom += self.skins.count()    # skins come first in mjvScene
    self.flexes.update(snap, opts, self.vis, bo, bg, (SPHERE, CYLINDER), self.highlight_flex)
    self._scene_ngeom += self.flexes.count()
    wide, wide_objs = self._decor_instances(snap, opts, bd, bt, arrows)
    lines = list(lines) + user_instances(user, bd, bt)
    haze = (self.haze_triangles(snap, opts, eye, far)
            if opts.haze and far is not None else None)
    objs = SceneObjects(
        geoms=bo.obj_arrays(), tgeoms=bg.obj_arrays(), decor=bd.obj_arrays(),
        tdecor=bt.obj_arrays(), wide_lines=wide_objs,
        textured=[np.stack([g, np.full(len(g), _OBJ_GEOM)], 1).astype(np.int32)
                  for g in self.textures.group_geoms])
    return Scene(geoms=bo.arrays(), tgeoms=bg.arrays(), decor=bd.arrays(), tdecor=bt.arrays(),
                 textured=textured, skins=self.skins, flexes=self.flexes,
                 lights=self._lights(snap, forward, eye), wide_lines=wide, lines=lines,
                 haze=haze, ngeom=self._scene_ngeom + bd.count() + bt.count(),
                 full=self.scene_full, eye=np.asarray(eye, float),
                 forward=np.asarray(forward, float), objs=objs)

  def _geom_instances(self, snap, opts, eye, batch_o, batch_t):
    """The model's geoms into the opaque and transparent batches, by mesh kind; returns the
    textured ones, grouped by (kind, texture)."""
    vis = self.vis
    groups = _groups(opts.geom_groups, "geom_groups")
    rgba = self.geom_rgba.copy()
    if opts.transparency:
      rgba[self.geom_dynamic, 3] *= vis.map.alpha
    vis_mask = groups[self.geom_group] & (rgba[:, 3] > 0)
    tex_sel = vis_mask & (self.textures.geom_texid >= 0)     # drawn by render/textures.py
    vis_mask &= ~tex_sel
    pos = snap.geom_xpos.copy()
    rot = snap.geom_xmat
    off = self.geom_offset.any(1)
    if off.any():
      pos[off] += np.einsum("nij,nj->ni", rot[off].reshape(-1, 3, 3), self.geom_offset[off])
    mat = self.geom_mat
    if self.highlight_body > 0:
      mat = mat.copy()
      mat[self.geom_bodyid == self.highlight_body, 0] += vis.global_.glow
    size = self.geom_size4
    if len(self.plane_ids):
      pos, size = self._recenter_planes(pos, size, rot, eye)
      # a plane seen from behind is see-through: MuJoCo's renderer draws its back with alpha
      # x 0.3 among the transparent geoms (one-sided lighting, no shadow received)
      p = self.plane_ids
      normal = rot[p].reshape(-1, 3, 3)[:, :, 2]
      behind = p[np.einsum("ij,ij->i", eye - pos[p], normal) < 0]
      rgba[behind, 3] *= 0.3
    self._scene_ngeom = int(vis_mask.sum() + tex_sel.sum())   # mjvScene geoms so far
    textured = self.textures.collect(snap, tex_sel, pos, rot, size, mat, rgba[:, 3])
    for kind in range(self.nkinds):
      sel = vis_mask & (self.geom_kind == kind)
      if not sel.any():
        continue
      opaque = sel & (rgba[:, 3] >= 1.0)
      trans = sel & (rgba[:, 3] < 1.0)
      for b, s in ((batch_o, opaque), (batch_t, trans)):
        if s.any():
          b.add(kind, pos[s], rot[s], size[s], rgba[s], mat[s], self.geom_rgba2[s],
                objtype=_OBJ_GEOM, objid=np.nonzero(s)[0])
    return textured

  def _recenter_planes(self, pos, size, rot, eye):
    """Infinite planes follow the camera in steps of two grid cells, as mjv_updateScene does."""
    pos, size = pos.copy(), size.copy()
    for g in self.plane_ids:
      R = rot[g].reshape(3, 3)
      for k in range(2):
        if self.m.geom_size[g, k] <= 0:
          sX = size[g, 3]
          dX = float(np.dot(eye - pos[g], R[:, k]))
          pos[g] += R[:, k] * 2 * sX * round(0.5 * dX / sX)
    return pos, size

  def _decor_instances(self, snap, opts, batch_o, batch_t, arrows=()):
    """Decorations (mjv_updateScene's mjCAT_DECOR) into the batches; returns the rangefinder
    lines ((n, 10) float32) or None, and their objects ((n, 2) int32, see _ray_instances).
    `arrows`: extra (p0, p1, rgba[, width]) from the app."""
    m, vis, scl = self.m, self.vis, self.meansize
    sc, col = vis.scale, vis.rgba
    n = snap.ncon
    if n and (opts.contact_points or opts.contact_forces or opts.contact_frames):
      frame = snap.contact_frame[:n].reshape(n, 3, 3)     # rows: normal, tangent1, tangent2
      cpos = snap.contact_pos[:n]
      if opts.contact_points:
        rot = np.stack([frame[:, 1], frame[:, 2], frame[:, 0]], 2).reshape(n, 9)
        w = sc.contactwidth * scl
        h = np.maximum(sc.contactheight * scl, -snap.contact_dist[:n] / 2)
        size = np.stack([np.full(n, w), np.full(n, w), h, np.zeros(n)], 1)
        rgba = np.where((snap.contact_efc_address[:n] >= 0)[:, None], col.contactpoint,
                        col.contactgap)
        batch_o.add(CYLINDER, cpos, rot, size, rgba, objid=np.arange(n))
      if opts.contact_frames:
        rot = np.transpose(frame, (0, 2, 1)).reshape(n, 9)
        batch_o.frames(cpos, rot, sc.framelength * scl / 2, sc.framewidth * scl / 2,
                       np.arange(n))
      if opts.contact_forces:
        active = snap.contact_efc_address[:n] >= 0
        frc = snap.contact_force[:n, :3].copy()
        dims = snap.contact_dim[:n]
        frc[dims < 3, 1:] = 0.0
        vec = np.einsum("nji,nj->ni", frame, frc) * (vis.map.force / max(vis.stat.meanmass,
                                                                          1e-15))
        g = snap.contact_geom[:n]
        # a flex side (geom -1) counts as the world body here
        b1 = np.where(g[:, 0] >= 0, self.geom_bodyid[g[:, 0]], 0)
        b2 = np.where(g[:, 1] >= 0, self.geom_bodyid[g[:, 1]], 0)
        vec[b1 > b2] *= -1
        ok = active & (np.linalg.norm(frc, axis=1) > 1e-15)
        both = ok & (b1 > 0) & (b2 > 0)
        one = ok & ~both
        w = sc.forcewidth * scl
        for sel, style in ((one, "arrow"), (both, "arrow2")):
          batch_o.arrows(cpos[sel], cpos[sel] + vec[sel], w, col.contactforce, style,
                         objid=np.nonzero(sel)[0])
    if opts.constraints and m.neq:
      self._equality_instances(snap, batch_o)
    if opts.joints and m.njnt:
      self._joint_instances(snap, opts, batch_o)
    if opts.body_frames and m.nbody > 1:
      pos, rot = (snap.xipos, snap.ximat) if opts.inertia else (snap.xpos, snap.xmat)
      batch_o.frames(pos[1:], rot[1:], sc.framelength * scl, sc.framewidth * scl,
                     np.arange(1, m.nbody))
    if opts.com and len(self.root_bodies):
      r = sc.com * scl
      b = self.root_bodies
      batch_o.add(SPHERE, snap.subtree_com[b], np.tile(_EYE9, (len(b), 1)), (r, r, r, 0),
                  col.com, objid=b)
    if opts.inertia and len(self.inertia_bodies):
      b = self.inertia_bodies
      size = np.concatenate([self.inertia_size, np.zeros((len(b), 1))], 1)
      tgt = batch_t if col.inertia[3] < 1 else batch_o
      mat = np.tile([0.0, 0.5, 0.5, 0.0], (len(b), 1))
      mat[b == self.highlight_body, 0] += vis.global_.glow     # the selected body's glows
      tgt.add(BOX, snap.xipos[b], snap.ximat[b], size, col.inertia, mat, objtype=_OBJ_BODY,
              objid=b)
    if opts.sites and m.nsite:
      groups = _groups(opts.site_groups, "site_groups")
      show = groups[self.site_group] & (self.site_rgba[:, 3] > 0)
      smat = self.site_mat
      if self.highlight_body > 0:      # the selected body's sites glow, as its geoms
        smat = smat.copy()
        smat[self.site_bodyid == self.highlight_body, 0] += vis.global_.glow
      for kind in range(len(KINDS)):
        sel = show & (self.site_kind == kind)
        if sel.any():
          op = sel & (self.site_rgba[:, 3] >= 1)
          tr = sel & (self.site_rgba[:, 3] < 1)
          for b, s in ((batch_o, op), (batch_t, tr)):
            if s.any():
              b.add(kind, snap.site_xpos[s], snap.site_xmat[s], self.site_size4[s],
                    self.site_rgba[s], smat[s], objtype=_OBJ_SITE, objid=np.nonzero(s)[0])
    self._tendon_instances(snap, opts, batch_o, batch_t)
    used = self._scene_ngeom + batch_o.count() + batch_t.count()
    self.scene_full = False
    wide = (self._ray_instances(snap, batch_o, self.max_geom - used)
            if opts.rangefinder else (None, np.zeros((0, 2), np.int32)))
    for a in arrows:
      w = a[3] if len(a) > 3 else sc.forcewidth * scl
      batch_o.arrows(np.asarray(a[0], float)[None], np.asarray(a[1], float)[None], w,
                     np.asarray(a[2], float))
    return wide

  def _ray_instances(self, snap, batch, room=None):
    """Rangefinder rays as mjv_updateScene draws them (addRangefinderGeoms): a line from each
    ray's origin to its hit (the `dist` field), a sphere at the `point` field, an arrow along
    the `normal` field; one ray per site sensor, one per pixel of a camera sensor; geom fromto
    sensors as a line. Every ray is drawn, in MuJoCo's order (sensor, row-major pixel, then
    line, sphere, arrow), while the scene has `room` (default: max_geom) for its markers; those
    beyond are left out and `scene_full` set, as mjv_updateScene does when the scene is full.
    Returns the lines, (n, 10) float32 (p0, p1, rgba), or None; and their objects, (n, 2)
    int32 [sensor id, mjOBJ_SENSOR] (the markers' too)."""
    data = getattr(snap, "sensordata", None)
    none = np.zeros((0, 2), np.int32)
    if data is None or not self._rays:
      return None, none
    vis, scl = self.vis, self.meansize
    rgba = np.asarray(vis.rgba.rangefinder, float)
    fw, fl = vis.scale.framewidth * scl, vis.scale.framelength * scl
    p0s, p1s, sensors = [], [], []
    room = max(int(self.max_geom if room is None else room), 0)
    for kind, obj, adr, spec, stride, off, local, sensor in self._rays:
      ids = dict(objtype=_OBJ_SENSOR, objid=sensor)
      if kind == "fromto":
        ft = data[adr:adr + 6]
        if ft.any():
          if room:
            p0s.append(ft[None, :3])
            p1s.append(ft[None, 3:])
            sensors.append([sensor])
            room -= 1
          else:
            self.scene_full = True
        continue
      nray = 1 if kind == "site" else len(local[0])
      ray = data[adr:adr + nray * stride].reshape(nray, stride)
      if kind == "site":
        org, vec = snap.site_xpos[obj][None], snap.site_xmat[obj][[2, 5, 8]][None]
      else:
        R = snap.cam_xmat[obj].reshape(3, 3)
        org, vec = snap.cam_xpos[obj] + local[0] @ R.T, local[1] @ R.T
      dist = ray[:, off[0]] if spec & 1 else np.full(nray, -1.0)
      hit = dist >= 0
      point = np.zeros((nray, 3))
      point[hit] = org[hit] + vec[hit] * dist[hit, None]
      end = point.copy()       # the line ends where dist says, the sphere at `point`
      given = ray[:, off[3]:off[3] + 3] if spec & 8 else np.zeros((nray, 3))
      dot = given.any(1)
      point[dot] = given[dot]
      arrow = (hit | point.any(1)) if spec & 16 else np.zeros(nray, bool)
      # each marker's place in MuJoCo's sequence: kept while the scene has room
      first = np.cumsum(hit.astype(int) + dot + arrow) - (hit.astype(int) + dot + arrow)
      line_ok = hit & (first < room)
      dot_ok = dot & (first + hit < room)
      arrow_ok = arrow & (first + hit + dot < room)
      n = int(hit.sum() + dot.sum() + arrow.sum())
      self.scene_full |= n > room
      room = max(room - n, 0)
      p0s.append(org[line_ok])
      sensors.append(np.full(len(p0s[-1]), sensor))
      p1s.append(end[line_ok])
      if dot_ok.any():
        r = (1.5 if kind == "site" else 1.3) * fw
        # a camera sensor's markers come by the thousand, a few pixels each: low resolution
        batch.add(SPHERE if kind == "site" else BALL, point[dot_ok],
                  np.tile(_EYE9, (int(dot_ok.sum()), 1)), (r, r, r, 0), rgba, **ids)
      if arrow_ok.any():
        tip = point[arrow_ok] + ray[arrow_ok, off[4]:off[4] + 3] * 2 * fl
        batch.arrows(point[arrow_ok], tip, fw, rgba, "arrow1", low=kind != "site", **ids)
    n = sum(len(p) for p in p0s)
    if not n:
      return None, none
    out = np.empty((n, 10), np.float32)
    out[:, 0:3], out[:, 3:6], out[:, 6:10] = np.concatenate(p0s), np.concatenate(p1s), rgba
    objs = np.full((n, 2), _OBJ_SENSOR, np.int32)
    objs[:, 0] = np.concatenate(sensors)
    return out, objs

  def _tendon_instances(self, snap, opts, batch_o, batch_t):
    """Spatial tendons as capsules of the tendon's width along d.wrap_xpos, as MuJoCo draws
    them; a pulley (wrap_obj -2) starts a new branch."""
    m = self.m
    if not opts.tendons or not m.ntendon or not hasattr(snap, "wrap_obj"):
      return
    wx = snap.wrap_xpos.reshape(-1, 3)
    obj = snap.wrap_obj.reshape(-1)
    for t in range(m.ntendon):
      a, n = snap.ten_wrapadr[t], snap.ten_wrapnum[t]
      j = np.arange(a, a + n - 1)
      j = j[(obj[j] != -2) & (obj[j + 1] != -2)]
      if not len(j):
        continue
      rgba = np.asarray(m.tendon_rgba[t], np.float32)
      batch = batch_o if rgba[3] >= 1 else batch_t
      batch.connectors(CAPSULE, wx[j], wx[j + 1], float(m.tendon_width[t]), rgba,
                       objtype=_OBJ_TENDON, objid=t)

  def _equality_instances(self, snap, batch):
    m, scl = self.m, self.meansize
    active = getattr(snap, "eq_active", None)
    if active is None:
      active = m.eq_active0
    r = scl * self.vis.scale.constraint
    for i in range(m.neq):
      if not active[i] or m.eq_type[i] not in (0, 1):
        continue
      weld = int(m.eq_type[i] == 1)
      j, k = m.eq_obj1id[i], m.eq_obj2id[i]
      if m.eq_objtype[i] == 6:      # sites
        p1, p2 = snap.site_xpos[j], snap.site_xpos[k]
      else:
        p1 = snap.xmat[j].reshape(3, 3) @ m.eq_data[i, 3 * weld:3 * weld + 3] + snap.xpos[j]
        p2 = (snap.xmat[k].reshape(3, 3) @ m.eq_data[i, 3 * (1 - weld):3 * (1 - weld) + 3]
              + snap.xpos[k])
      for p, rgba in ((p1, self.vis.rgba.connect), (p2, self.vis.rgba.constraint)):
        batch.add(SPHERE, p[None], _EYE9[None], (r, r, r, 0), rgba, objtype=_OBJ_EQUALITY,
                  objid=i)

  def _joint_instances(self, snap, opts, batch):
    m, scl, vis = self.m, self.meansize, self.vis
    length, width = vis.scale.jointlength * scl, vis.scale.jointwidth * scl
    groups = _groups(opts.joint_groups, "joint_groups")
    jt = np.asarray(m.jnt_type)
    show = groups[np.clip(np.asarray(m.jnt_group), 0, 5)]
    imp = np.zeros(m.njnt)
    if hasattr(snap, "efc_KBIP"):      # mix in the constraint colour by the limit's impedance
      lo, hi = snap.ne + snap.nf, snap.ne + snap.nf + snap.nl
      rows = np.arange(lo, hi)
      rows = rows[snap.efc_type[rows] == 3]
      imp[snap.efc_id[rows]] = snap.efc_KBIP[rows, 2]
    rgba = np.ones((m.njnt, 4))
    rgba[:, :3] = ((1 - imp)[:, None] * np.array(vis.rgba.joint[:3])
                   + imp[:, None] * np.array(vis.rgba.constraint[:3]))
    for t, style in ((2, "arrow"), (3, "arrow1")):      # slide, hinge
      ax = show & (jt == t)
      if ax.any():
        p0 = snap.xanchor[ax]
        batch.arrows(p0, p0 + snap.xaxis[ax] * length, width, rgba[ax], style,
                     objtype=_OBJ_JOINT, objid=np.nonzero(ax)[0])
    for t, kind in ((0, BOX), (1, SPHERE)):
      sel = show & (jt == t)
      if sel.any():
        b = np.asarray(m.jnt_bodyid)[sel]
        h = 0.3 * length
        batch.add(kind, snap.xanchor[sel], snap.xmat[b], (h, h, h, 0), rgba[sel],
                  objtype=_OBJ_JOINT, objid=np.nonzero(sel)[0])

  # ------------------------------------------------------------------------------ lights

  def _lights(self, snap, forward, eye):
    """Uniform arrays: the headlight then the model's active lights (at most MAX_LIGHTS)."""
    m, vis = self.m, self.vis
    L = []
    hl = vis.headlight
    if hl.active:
      L.append(((*eye, 1.0), forward, hl.ambient, hl.diffuse, hl.specular, (1, 0, 0), (-1, 0),
                -1))
    for i in range(m.nlight):
      if not m.light_active[i] or len(L) >= MAX_LIGHTS:
        continue
      ltype = int(m.light_type[i])
      directional = ltype == 1
      cutoff = math.cos(math.radians(float(m.light_cutoff[i]))) if ltype == 0 else -1.0
      L.append(((*snap.light_xpos[i], 1.0 if directional else 0.0), snap.light_xdir[i],
                m.light_ambient[i], m.light_diffuse[i], m.light_specular[i],
                m.light_attenuation[i], (cutoff, float(m.light_exponent[i])), i))
    return L

  def haze_triangles(self, snap, opts, eye, far):
    """The haze band as MuJoCo's renderer draws it with the skybox (mjrHAZE): a truncated cone
    around the eye at 0.7 x the far clip distance, from the first infinite plane (in a shown
    geom group) up to eye level, in rgba.haze with alpha 0 at both ends and 1 at an elevation set
    by map.haze. Triangles (n, 7) float32 (position, rgba), or None when MuJoCo draws none: no
    skybox, no infinite plane, or the eye below it."""
    if self.textures.sky is None and self.vis.skybox is None:
      return None
    size = np.asarray(self.m.geom_size)
    groups = _groups(opts.geom_groups, "geom_groups")
    planes = [g for g in self.plane_ids
              if size[g, 0] == 0 and size[g, 1] == 0 and groups[self.geom_group[g]]]
    if not planes:
      return None
    g = planes[0]
    R = np.asarray(snap.geom_xmat[g], float).reshape(3, 3)
    dist = 0.7 * far
    elevation = float(np.dot(eye - snap.geom_xpos[g], R[:, 2]))
    if elevation < 0:
      return None
    r = float(self.vis.map.haze)
    a = math.atan2(1.0, r)
    h = math.sqrt(0.5) * r * math.sin(a) / math.sin(0.75 * math.pi - a)
    n = max(int(self.vis.quality.numslices), 3)
    az = 2 * math.pi * np.arange(n + 1) / n
    rgb = np.asarray(self.vis.rgba.haze[:3], float)

    def ring(hh):   # the cone at elevation fraction hh: world points (n + 1, 3)
      rad = dist * (1 - r * (1 - hh))
      local = np.stack([np.cos(az) * rad, np.sin(az) * rad,
                        np.full(n + 1, elevation * (hh - 1))], 1)
      return eye + local @ R.T
    rings = [(ring(0.0), 0.0), (ring(h), 1.0), (ring(1.0), 0.0)]
    tris = []
    for (p1, a1), (p2, a2) in zip(rings[:-1], rings[1:]):
      q = np.stack([p1[:-1], p1[1:], p2[1:], p1[:-1], p2[1:], p2[:-1]], 1)   # (n, 6, 3)
      alpha = np.array([a1, a1, a2, a1, a2, a2])
      col = np.broadcast_to(np.concatenate([np.tile(rgb, (6, 1)), alpha[:, None]], 1),
                            (n, 6, 4))
      tris.append(np.concatenate([q, col], 2).reshape(-1, 7))
    return np.concatenate(tris).astype(np.float32)

  def project(self, points_world, camera, width, height, snapshot=None):
    """Pixel coordinates (x right, y down from the top-left, as imgui draws) of world points,
    shape (n, 2); points behind the camera get NaN."""
    p = np.atleast_2d(np.asarray(points_world, float))
    view = camera.view_matrix(snapshot, self.m)
    ph = np.concatenate([p, np.ones((len(p), 1))], 1)
    h = ph @ (camera.projection(width / height) @ view).T
    with np.errstate(divide="ignore", invalid="ignore"):
      ndc = h[:, :3] / h[:, 3:4]
    xy = np.stack([(ndc[:, 0] + 1) * 0.5 * width, (1 - ndc[:, 1]) * 0.5 * height], 1)
    xy[ph @ view[2] >= 0] = np.nan     # behind the eye (also for orthographic views)
    return xy

  def labels(self, snapshot, camera, opts, width, height):
    """[(x, y, text)] in pixels for opts.labels (body/geom/site/joint names or ids)."""
    from numjoco.engine.types import mjtObj
    mode = opts.labels
    if mode not in LABELS:
      raise ValueError(f"labels mode {mode!r}: expected one of {LABELS}")
    table = {"body": (mjtObj.BODY, snapshot.xpos), "geom": (mjtObj.GEOM, snapshot.geom_xpos),
             "site": (mjtObj.SITE, snapshot.site_xpos), "joint": (mjtObj.JOINT, snapshot.xanchor)}
    if mode == "none":
      return []
    obj, pts = table[mode]
    names = self.names.get(obj, [])
    start = 1 if mode == "body" else 0
    xy = self.project(pts[start:], camera, width, height, snapshot)
    out = []
    for i, (x, y) in enumerate(xy, start):
      if np.isfinite(x) and np.isfinite(y):
        nm = names[i] if i < len(names) and names[i] else f"{mode} {i}"
        out.append((float(x), float(y), nm))
    return out


_RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)   # mjRAYDATA fields: dist, dir, origin, point, normal, depth
_SENS_RANGEFINDER, _SENS_GEOMFROMTO = 7, 41     # mjtSensor


def ray_sensors(m):
  """The sensors drawn as rays: (kind "site"/"camera"/"fromto", object id, sensordata address,
  data spec, values per ray, offset of each mjRAYDATA field, camera rays in the camera frame,
  sensor id)."""
  out = []
  nsensor = int(getattr(m, "nsensor", 0))
  if not nsensor or not hasattr(m, "sensor_intprm"):
    return out
  for i in range(nsensor):
    st, adr = int(m.sensor_type[i]), int(m.sensor_adr[i])
    if st == _SENS_GEOMFROMTO:
      out.append(("fromto", -1, adr, 0, 6, (), None, i))
      continue
    if st != _SENS_RANGEFINDER:
      continue
    spec, ot, obj = int(m.sensor_intprm[i, 0]), int(m.sensor_objtype[i]), int(m.sensor_objid[i])
    off, stride = [], 0
    for j, size in enumerate(_RAYDATA_SIZE):
      off.append(stride)
      stride += size if spec & (1 << j) else 0
    if ot == _OBJ_SITE:
      out.append(("site", obj, adr, spec, stride, tuple(off), None, i))
    elif ot == _OBJ_CAMERA:
      out.append(("camera", obj, adr, spec, stride, tuple(off), _camera_rays(m, obj), i))
  return out


def _camera_rays(m, c):
  """(origins, directions), each (w*h, 3), of camera c's pixel rays in the camera's frame,
  row-major from the top-left pixel: mju_camIntrinsics and mju_camPixelRay."""
  w, h = int(m.cam_resolution[c, 0]), int(m.cam_resolution[c, 1])
  fovy = float(m.cam_fovy[c])
  ortho = int(m.cam_projection[c]) == 1
  ss, it = np.asarray(m.cam_sensorsize[c], float), np.asarray(m.cam_intrinsic[c], float)
  if ortho:
    fx, fy, cx, cy = w / 2, h / 2, w / 2, h / 2
  elif ss[0] and ss[1]:
    fx, fy, cx, cy = it[0] / ss[0] * w, it[1] / ss[1] * h, it[2] / ss[0] * w, it[3] / ss[1] * h
  else:
    fx = fy = 0.5 / math.tan(fovy * math.pi / 360) * h
    cx, cy = w / 2, h / 2
  row, col = np.divmod(np.arange(w * h), w)
  px, py = col + 0.5 - cx, row + 0.5 - cy
  n = w * h
  if ortho:
    half = fovy / 2
    org = np.stack([px / fx * half, -py / fy * half, np.zeros(n)], 1)
    vec = np.tile([0.0, 0.0, -1.0], (n, 1))
  else:
    org = np.zeros((n, 3))
    vec = np.stack([px / fx, -py / fy, -np.ones(n)], 1)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
  return org, vec
