"""Draw a Model + Snapshot with moderngl (OpenGL 3.3 core): geoms, lights, one shadow map,
transparency, and MuJoCo's decorations (contacts, frames, joints, inertia, com, sites ...).

Every shape is drawn instanced: one draw call per primitive mesh and pass, whatever the number of
geoms. Decorations are instances of the same meshes (an arrow is a cylinder and a cone).
Sizes and colours follow MuJoCo's mjv_updateScene (mjVisual scale/rgba times stat.meansize).
Mesh geoms are drawn with their triangles: one vertex buffer per mesh asset (a draw "kind"
after the primitives), instanced over the geoms that use it. Height fields are drawn as their
bounding box until the engine loads them. Geoms with a texture and the skybox texture are drawn
by render/textures.py (one instanced call per shape and texture). Skins (render/skin.py) are
world-space meshes moved by their bones each frame, drawn through the same programs; flexes
(render/flex.py) too, from the snapshot's flexvert_xpos, their vertices and edges as instances.
"""
import dataclasses
import math

import moderngl
import numpy as np

from numjoco.render import meshes
from numjoco.render import shaders
from numjoco.render import flex
from numjoco.render import skin
from numjoco.render import textures
from numjoco.render.visual import visual_for

# primitive meshes, in draw order
# (ball, rod, tip: low-resolution sphere, cylinder and cone for markers drawn by the thousand)
KINDS = meshes.KINDS
QUAD, SPHERE, CAPSULE, CYLINDER, BOX, CONE, BALL, ROD, TIP = range(len(KINDS))
# mjtGeom -> mesh kind: plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh, sdf
_GEOM_KIND = np.array([QUAD, BOX, SPHERE, CAPSULE, SPHERE, CYLINDER, BOX, BOX, BOX])
_FLOATS = 28          # per instance: pos 3, rotation rows 9, size 4, rgba 4, material 4, rgba2 4
_INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
_INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")
_EYE9 = np.eye(3).ravel()
_OPAQUE_ORDER = (SPHERE, CAPSULE, CYLINDER, BOX, CONE, BALL, ROD, TIP, QUAD)   # the floor last
LABELS = ("none", "body", "geom", "site", "joint")


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


class _Batch:
  """Instances collected for one frame, per mesh kind."""

  def __init__(self, nkinds=len(KINDS)):
    self.parts = [[] for _ in range(nkinds)]

  def count(self):
    """Instances collected so far (an arrow counts its shaft and its head)."""
    return sum(len(a) for part in self.parts for a in part)

  def add(self, kind, pos, rot, size, rgba, mat=None, rgba2=0.0):
    n = len(pos)
    if n == 0:
      return
    a = np.empty((n, _FLOATS), np.float32)
    a[:, 0:3] = pos
    a[:, 3:12] = rot
    a[:, 12:16] = size
    a[:, 16:20] = rgba
    a[:, 20:24] = (0.0, 0.5, 0.5, 0.0) if mat is None else mat
    a[:, 24:28] = rgba2
    self.parts[kind].append(a)

  def connectors(self, kind, p0, p1, width, rgba, mat=None):
    """Cylinders (or capsules) of radius `width` from p0 to p1 (arrays (n, 3))."""
    v = p1 - p0
    length = np.linalg.norm(v, axis=1)
    ok = length > 1e-12
    if not ok.any():
      return
    p0, v, length = p0[ok], v[ok], length[ok]
    rgba = np.broadcast_to(rgba, (len(ok), 4))[ok]
    width = np.broadcast_to(width, (len(ok),))[ok]
    rot = _rot_z_to(v / length[:, None])
    half = length / 2
    size = np.stack([width, width, half if kind in (CYLINDER, ROD) else width,
                     half if kind == CAPSULE else 0 * half], 1)
    self.add(kind, p0 + v / 2, rot, size, rgba, mat)

  def arrows(self, p0, p1, width, rgba, style="plain", low=False):
    """Arrows from p0 along p1 - p0 = L: a cylinder shaft and cone heads. Styles: "plain" ends
    at p1 (head 3 widths long); MuJoCo's "arrow" (shaft to L/3, head to L/2, 1.75 widths wide),
    "arrow1" (the same, head as wide as the shaft) and "arrow2" (centred at p0, heads at
    +-L/2) as its renderer draws mjGEOM_ARROW/ARROW1/ARROW2. `low`: low-resolution meshes."""
    v = p1 - p0
    length = np.linalg.norm(v, axis=1)
    ok = length > 1e-12
    if not ok.any():
      return
    p0, v, length = p0[ok], v[ok], length[ok]
    rgba = np.broadcast_to(rgba, (len(ok), 4))[ok]
    width = np.broadcast_to(width, (len(ok),))[ok]
    u = v / length[:, None]
    if style == "plain":
      head, hw = np.minimum(3 * width, 0.4 * length), 2 * width
      s0, s1 = p0, p0 + v - u * head[:, None]
    else:
      head, hw = length / 6, (width if style == "arrow1" else 1.75 * width)
      s0 = p0 - v / 3 if style == "arrow2" else p0
      s1 = p0 + v / 3
    shaft, cone = (ROD, TIP) if low else (CYLINDER, CONE)
    self.connectors(shaft, s0, s1, width, rgba)
    size = np.stack([hw * np.ones_like(head), hw * np.ones_like(head), head, 0 * head], 1)
    self.add(cone, s1, _rot_z_to(u), size, rgba)
    if style == "arrow2":
      self.add(cone, s0, _rot_z_to(-u), size, rgba)

  def frames(self, pos, rot, length, width):
    """RGB axes (x red, y green, z blue) of the frames (pos (n,3), rot (n,9) rows)."""
    R = rot.reshape(-1, 3, 3)
    for j in range(3):
      rgba = np.zeros(4)
      rgba[j], rgba[3] = 0.9, 1.0
      self.connectors(CYLINDER, pos, pos + R[:, :, j] * length, width, rgba)

  def arrays(self):
    return [np.concatenate(p) if p else np.zeros((0, _FLOATS), np.float32) for p in self.parts]


class Renderer:
  """Draws snapshots of one model into the current (or a given) framebuffer of `ctx`."""

  # capacity of the scene, as mjvScene.maxgeom (mujoco.Renderer's default; MuJoCo's simulate
  # has 100000): rangefinder markers beyond it are left out, as mjv_updateScene leaves them
  max_geom = 10000
  scene_full = False     # whether the last frame left some out (MuJoCo: mjWARN_VGEOMFULL)
  # how much of the shadow-casting light a shadow takes away: all of it in MuJoCo, whose
  # shadow pass adds the light only where the shadow map says lit (map.shadowscale is not
  # this: MuJoCo narrows a spot light's shadow frustum by it)
  shadow_strength = 1.0

  def __init__(self, ctx, m, shadow_size=1024):
    """GL objects (programs, meshes, shadow map) for `ctx`, then `set_model(m)`; with m=None
    only the GL part (the viewer builds it while the model still loads), set_model comes later."""
    self.ctx = ctx
    self.m = None
    self.shadow_size = int(shadow_size)
    self.lines = []          # (p0, p1, rgba) drawn as GL lines each frame (app hook)
    self.arrows = []         # (p0, p1, rgba[, width]) drawn as arrows each frame (app hook)
    self.highlight_body = -1  # selected body: its geoms glow (MuJoCo's pert.select)
    self.highlight_skin = -1  # selected skin: it glows (pert.skinselect, set with a skin pick)
    self.highlight_flex = -1  # selected flex: it glows (pert.flexselect)
    self._shadow_ortho = True
    self._shadow_k = (1.0, 1.0)
    self._shadow_half = 0.0
    self._shadow_key = None   # what the shadow map holds: light matrix and casters' instances
    # programs per shadow variant: True reads the shadow map, False never does (no shadow cast)
    self._geom_progs = {sh: ctx.program(*shaders.geom_program(0, sh)) for sh in (True, False)}
    self._geom_prog = self._geom_progs[True]
    self._depth_prog = ctx.program(vertex_shader=shaders.DEPTH_VS,
                                   fragment_shader=shaders.DEPTH_FS)
    self._line_prog = ctx.program(vertex_shader=shaders.LINE_VS, fragment_shader=shaders.LINE_FS)
    self._vbos, self._ibos = [], []
    self._inst = {}       # (pass, kind) -> instance buffer
    self._vaos = {}       # (pass, kind) -> vao; pass: 'o' opaque, 't' transparent, 'd' depth
    for k, name in enumerate(KINDS):
      v, i = getattr(meshes, name)()
      vbo, ibo = ctx.buffer(v.tobytes()), ctx.buffer(i.tobytes())
      self._vbos.append(vbo)
      self._ibos.append(ibo)
      for p in ("o", "t"):
        self._inst[p, k] = ctx.buffer(reserve=64 * _FLOATS * 4, dynamic=True)
        for sh in (True, False):
          self._vaos[_vkey(p, sh), k] = self._geom_vao(self._geom_progs[sh], k, p)
      v, i = meshes.shadow_mesh(name)
      svbo, sibo = ctx.buffer(v.tobytes()), ctx.buffer(i.tobytes())
      self._vbos.append(svbo)
      self._ibos.append(sibo)
      self._inst["s", k] = ctx.buffer(reserve=16 * _FLOATS * 4, dynamic=True)
      self._depth_vaos(k, svbo, sibo)
    self._sky_prog = ctx.program(vertex_shader=shaders.SKY_VS, fragment_shader=shaders.SKY_FS)
    self._sky_buf = ctx.buffer(reserve=4 * 5 * 4, dynamic=True)
    self._sky_vao = ctx.vertex_array(self._sky_prog, [(self._sky_buf, "2f 3f", "in_pos",
                                                       "in_color")])
    self._wide_prog = ctx.program(vertex_shader=shaders.WIDELINE_VS,
                                  fragment_shader=shaders.LINE_FS)
    self._wide_corners = ctx.buffer(np.array([0, -1, 0, 1, 1, -1, 1, 1], np.float32).tobytes())
    self._wide_buf = ctx.buffer(reserve=64 * 10 * 4, dynamic=True)
    self._wide_vao = ctx.vertex_array(self._wide_prog, [
        (self._wide_corners, "2f", "in_corner"),
        (self._wide_buf, "3f 3f 4f/i", "i_p0", "i_p1", "i_color")])
    self._haze_buf = ctx.buffer(reserve=4096 * 7 * 4, dynamic=True)
    self._haze_vao = ctx.vertex_array(self._line_prog, [(self._haze_buf, "3f 4f", "in_pos",
                                                         "in_color")])
    self._rays = []
    self._twoside_key = None
    self._line_buf = ctx.buffer(reserve=1024 * 7 * 4, dynamic=True)
    self._line_vao = ctx.vertex_array(self._line_prog, [(self._line_buf, "3f 4f", "in_pos",
                                                         "in_color")])
    self._shadow_tex = ctx.depth_texture((self.shadow_size, self.shadow_size))
    self._shadow_tex.compare_func = "<="
    self._shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
    self._shadow_tex.repeat_x = self._shadow_tex.repeat_y = False
    self._shadow_fbo = ctx.framebuffer(depth_attachment=self._shadow_tex)
    self.split_floor = True   # draw floors in pieces (see _draw_floor_pieces); False: in one
    self._plane_progs, self._plane_npos = dict(self._geom_progs), 0
    self._plane_bare = None
    self._plane_prog = self._plane_progs[True]
    self._nkinds = len(KINDS)
    self._mesh_gl = []        # GL objects of the current model's mesh assets
    self._opaque_order = _OPAQUE_ORDER
    self._textured = textures.TexturedGeoms(ctx)
    self._skins = skin.SkinDraw(ctx)
    self._flexes = flex.FlexDraw(ctx)
    if m is not None:
      self.set_model(m)

  # ------------------------------------------------------------------------------- model

  def _geom_vao(self, prog, kind, p):
    if kind >= len(KINDS):      # a mesh asset: unindexed triangles
      return self.ctx.vertex_array(prog, [(self._mesh_vbos[kind - len(KINDS)], "3f 3f 1f",
                                           "in_pos", "in_normal", "in_cap"),
                                          (self._inst[p, kind], _INSTANCE_FMT, *_INSTANCE_ATTRS)])
    return self.ctx.vertex_array(prog, [(self._vbos[2 * kind], "3f 3f 1f", "in_pos", "in_normal",
                                         "in_cap"),
                                        (self._inst[p, kind], _INSTANCE_FMT, *_INSTANCE_ATTRS)],
                                 self._ibos[2 * kind])

  def _depth_vaos(self, kind, vbo, ibo=None):
    """The shadow pass's VAOs of a mesh kind: "d" over the opaque geoms' instances (the first
    ones of the opaque buffer), "ds" over the transparent geoms' (MuJoCo's shadow pass draws
    every geom, whatever its alpha)."""
    out = []
    for key, inst in (("d", self._inst["o", kind]), ("ds", self._inst["s", kind])):
      self._vaos[key, kind] = self.ctx.vertex_array(
          self._depth_prog, [(vbo, "3f 3x4 1f", "in_pos", "in_cap"),
                             (inst, "3f 3f 3f 3f 4f 48x/i", *_INSTANCE_ATTRS[:5])], ibo)
      out.append(self._vaos[key, kind])
    return out

  def _set_meshes(self, m):
    """Vertex buffers, instance buffers and VAOs of the model's mesh assets (kinds
    len(KINDS) + mesh id); returns each mesh's scale (its instance size)."""
    for o in self._mesh_gl:
      o.release()
    for key in [k for k in self._vaos if k[1] >= len(KINDS)]:
      del self._vaos[key]
    for key in [k for k in self._inst if k[1] >= len(KINDS)]:
      del self._inst[key]
    self._mesh_gl, self._mesh_vbos, scales = [], [], []
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
      vbo = self.ctx.buffer(verts.tobytes() if len(verts) else b"\0" * 28)
      self._mesh_vbos.append(vbo)
      self._mesh_gl.append(vbo)
      k = len(KINDS) + i
      for p in ("o", "t"):
        self._inst[p, k] = self.ctx.buffer(reserve=16 * _FLOATS * 4, dynamic=True)
        self._mesh_gl.append(self._inst[p, k])
        for sh in (True, False):
          self._vaos[_vkey(p, sh), k] = self._geom_vao(self._geom_progs[sh], k, p)
          self._mesh_gl.append(self._vaos[_vkey(p, sh), k])
      self._inst["s", k] = self.ctx.buffer(reserve=16 * _FLOATS * 4, dynamic=True)
      self._mesh_gl.append(self._inst["s", k])
      self._mesh_gl.extend(self._depth_vaos(k, vbo))
    self._nkinds = len(KINDS) + nmesh + nhfield
    mesh_kinds = tuple(range(len(KINDS), self._nkinds))
    self._opaque_order = _OPAQUE_ORDER[:-1] + mesh_kinds + _OPAQUE_ORDER[-1:]
    return scales

  def _set_plane_program(self, npos):
    """Planes get their own programs when spot/point lights fall on them."""
    if npos == self._plane_npos:
      return
    for sh in (True, False):
      for p in ("o", "t"):
        self._vaos[_vkey(p, sh), QUAD].release()
      if self._plane_progs[sh] is not self._geom_progs[sh]:
        self._plane_progs[sh].release()
      if npos:
        self._plane_progs[sh] = self.ctx.program(*shaders.geom_program(npos, sh))
      else:
        self._plane_progs[sh] = self._geom_progs[sh]
      for p in ("o", "t"):
        self._vaos[_vkey(p, sh), QUAD] = self._geom_vao(self._plane_progs[sh], QUAD, p)
    if self._plane_bare is not None:
      self._vaos.pop(("ob", QUAD)).release()
      self._plane_bare.release()
      self._plane_bare = None
    if npos:   # planes outside the one spot light's cone (see _floor_pieces' callers)
      self._plane_bare = self.ctx.program(*shaders.geom_program(npos, False, positional=False))
      self._vaos["ob", QUAD] = self._geom_vao(self._plane_bare, QUAD, "o")
    self._plane_prog = self._plane_progs[True]
    self._plane_npos = npos
    self._twoside_key = None     # new programs: u_twoside unset

  def set_model(self, m):
    """Precompute everything per geom that does not change while the model runs."""
    self.m = m
    self._shadow_key = None
    self.vis = vis = visual_for(m)
    npos = sum(1 for i in range(m.nlight) if m.light_active[i] and int(m.light_type[i]) != 1)
    self._set_plane_program(min(npos, shaders.MAX_LIGHTS))
    self.meansize = vis.stat.meansize
    n = m.ngeom
    gtype = np.asarray(m.geom_type)
    self.geom_kind = _GEOM_KIND[gtype]
    size = np.asarray(m.geom_size, float)
    s = np.zeros((n, 4))
    for t, cols in ((2, (0, 0, 0)), (3, (0, 0, 0)), (4, (0, 1, 2)), (5, (0, 0, 1)),
                    (6, (0, 1, 2))):
      sel = gtype == t
      s[sel, :3] = size[sel][:, cols]
    cap = gtype == 3
    s[cap, 3] = size[cap, 1]
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
    # colour and material as MuJoCo's setMaterial: material rgba unless the geom's own rgba
    # differs from the default (0.5, 0.5, 0.5, 1)
    rgba = np.array(m.geom_rgba, np.float64)
    mat = np.tile([0.0, 0.5, 0.5, 0.0], (n, 1))
    matid = np.asarray(m.geom_matid)
    for g in np.nonzero(matid >= 0)[0]:
      k = matid[g]
      if np.allclose(rgba[g], (0.5, 0.5, 0.5, 1.0)):
        rgba[g] = m.mat_rgba[k]
      mat[g, :3] = (m.mat_emission[k], m.mat_specular[k], m.mat_shininess[k])
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
    ssize = np.asarray(m.site_size, float)
    s = np.zeros((m.nsite, 4))
    for t, cols in ((2, (0, 0, 0)), (3, (0, 0, 0)), (4, (0, 1, 2)), (5, (0, 0, 1)),
                    (6, (0, 1, 2))):
      sel = stype == t
      s[sel, :3] = ssize[sel][:, cols]
    s[stype == 3, 3] = ssize[stype == 3, 1]
    self.site_size4 = s
    srgba = np.array(m.site_rgba, np.float64)
    smat = np.tile([0.0, 0.5, 0.5, 0.0], (m.nsite, 1))
    for i in np.nonzero(np.asarray(m.site_matid) >= 0)[0]:
      k = m.site_matid[i]
      if np.allclose(srgba[i], (0.5, 0.5, 0.5, 1.0)):
        srgba[i] = m.mat_rgba[k]
      smat[i, :3] = (m.mat_emission[k], m.mat_specular[k], m.mat_shininess[k])
    self.site_rgba, self.site_mat = srgba, smat
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
    self._rays = _ray_sensors(m)
    self._textured.set_model(m, self)
    self._skins.set_model(m, self)
    self._flexes.set_model(m, self)

  # ------------------------------------------------------------------------------ frame

  def _geom_instances(self, snap, opts, eye, batch_o, batch_t):
    m, vis = self.m, self.vis
    groups = _groups(opts.geom_groups, "geom_groups")
    rgba = self.geom_rgba.copy()
    if opts.transparency:
      rgba[self.geom_dynamic, 3] *= vis.map.alpha
    vis_mask = groups[self.geom_group] & (rgba[:, 3] > 0)
    tex_sel = vis_mask & (self._textured.geom_texid >= 0)     # drawn by render/textures.py
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
    self._textured.collect(snap, tex_sel, pos, rot, size, mat, rgba[:, 3])
    for kind in range(self._nkinds):
      sel = vis_mask & (self.geom_kind == kind)
      if not sel.any():
        continue
      opaque = sel & (rgba[:, 3] >= 1.0)
      trans = sel & (rgba[:, 3] < 1.0)
      for b, s in ((batch_o, opaque), (batch_t, trans)):
        if s.any():
          b.add(kind, pos[s], rot[s], size[s], rgba[s], mat[s], self.geom_rgba2[s])

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

  def _decor_instances(self, snap, opts, batch_o, batch_t):
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
        batch_o.add(CYLINDER, cpos, rot, size, rgba)
      if opts.contact_frames:
        rot = np.transpose(frame, (0, 2, 1)).reshape(n, 9)
        batch_o.frames(cpos, rot, sc.framelength * scl / 2, sc.framewidth * scl / 2)
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
        batch_o.arrows(cpos[one], cpos[one] + vec[one], w, col.contactforce, "arrow")
        batch_o.arrows(cpos[both], cpos[both] + vec[both], w, col.contactforce, "arrow2")
    if opts.constraints and m.neq:
      self._equality_instances(snap, batch_o)
    if opts.joints and m.njnt:
      self._joint_instances(snap, opts, batch_o)
    if opts.body_frames and m.nbody > 1:
      if opts.inertia:
        batch_o.frames(snap.xipos[1:], snap.ximat[1:], sc.framelength * scl, sc.framewidth * scl)
      else:
        batch_o.frames(snap.xpos[1:], snap.xmat[1:], sc.framelength * scl, sc.framewidth * scl)
    if opts.com and len(self.root_bodies):
      r = sc.com * scl
      b = self.root_bodies
      batch_o.add(SPHERE, snap.subtree_com[b], np.tile(_EYE9, (len(b), 1)), (r, r, r, 0),
                  col.com)
    if opts.inertia and len(self.inertia_bodies):
      b = self.inertia_bodies
      size = np.concatenate([self.inertia_size, np.zeros((len(b), 1))], 1)
      tgt = batch_t if col.inertia[3] < 1 else batch_o
      mat = np.tile([0.0, 0.5, 0.5, 0.0], (len(b), 1))
      mat[b == self.highlight_body, 0] += vis.global_.glow     # the selected body's glows
      tgt.add(BOX, snap.xipos[b], snap.ximat[b], size, col.inertia, mat)
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
                    self.site_rgba[s], smat[s])
    self._tendon_instances(snap, opts, batch_o, batch_t)
    used = self._scene_ngeom + batch_o.count() + batch_t.count()
    self.scene_full = False
    self._wide_lines = (self._ray_instances(snap, batch_o, self.max_geom - used)
                        if opts.rangefinder else None)
    if self.arrows:
      for a in self.arrows:
        w = a[3] if len(a) > 3 else sc.forcewidth * scl
        batch_o.arrows(np.asarray(a[0], float)[None], np.asarray(a[1], float)[None], w,
                       np.asarray(a[2], float))

  def _ray_instances(self, snap, batch, room=None):
    """Rangefinder rays as mjv_updateScene draws them (addRangefinderGeoms): a line from each
    ray's origin to its hit (the `dist` field), a sphere at the `point` field, an arrow along
    the `normal` field; one ray per site sensor, one per pixel of a camera sensor; geom fromto
    sensors as a line. Every ray is drawn, in MuJoCo's order (sensor, row-major pixel, then
    line, sphere, arrow), while the scene has `room` (default: max_geom) for its markers; those
    beyond are left out and `scene_full` set, as mjv_updateScene does when the scene is full.
    Returns the lines, (n, 10) float32 (p0, p1, rgba), or None."""
    data = getattr(snap, "sensordata", None)
    if data is None or not self._rays:
      return None
    vis, scl = self.vis, self.meansize
    rgba = np.asarray(vis.rgba.rangefinder, float)
    fw, fl = vis.scale.framewidth * scl, vis.scale.framelength * scl
    p0s, p1s = [], []
    room = max(int(self.max_geom if room is None else room), 0)
    for kind, obj, adr, spec, stride, off, local in self._rays:
      if kind == "fromto":
        ft = data[adr:adr + 6]
        if ft.any():
          if room:
            p0s.append(ft[None, :3])
            p1s.append(ft[None, 3:])
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
      p1s.append(end[line_ok])
      if dot_ok.any():
        r = (1.5 if kind == "site" else 1.3) * fw
        # a camera sensor's markers come by the thousand, a few pixels each: low resolution
        batch.add(SPHERE if kind == "site" else BALL, point[dot_ok],
                  np.tile(_EYE9, (int(dot_ok.sum()), 1)), (r, r, r, 0), rgba)
      if arrow_ok.any():
        tip = point[arrow_ok] + ray[arrow_ok, off[4]:off[4] + 3] * 2 * fl
        batch.arrows(point[arrow_ok], tip, fw, rgba, "arrow1", low=kind != "site")
    n = sum(len(p) for p in p0s)
    if not n:
      return None
    out = np.empty((n, 10), np.float32)
    out[:, 0:3], out[:, 3:6], out[:, 6:10] = np.concatenate(p0s), np.concatenate(p1s), rgba
    return out

  def _draw_wide_lines(self, viewproj, width, height):
    """This frame's rangefinder lines, 3 * global.linewidth pixels wide (mjGEOM_LINE)."""
    a = getattr(self, "_wide_lines", None)
    if a is None or not len(a):
      return
    if a.nbytes > self._wide_buf.size:
      self._wide_buf.orphan(2 * a.nbytes)
    self._wide_buf.write(a.tobytes())
    prog = self._wide_prog
    prog["u_viewproj"].write(_gl(viewproj))
    prog["u_viewport"].value = (float(width), float(height))
    prog["u_width"].value = 3.0 * float(self.vis.global_.linewidth)
    wire, self.ctx.wireframe = self.ctx.wireframe, False      # quads standing in for lines
    self.ctx.disable(moderngl.CULL_FACE)
    self._wide_vao.render(moderngl.TRIANGLE_STRIP, vertices=4, instances=len(a))
    self.ctx.wireframe = wire

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
      batch.connectors(CAPSULE, wx[j], wx[j + 1], float(m.tendon_width[t]), rgba)

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
      batch.add(SPHERE, p1[None], _EYE9[None], (r, r, r, 0), self.vis.rgba.connect)
      batch.add(SPHERE, p2[None], _EYE9[None], (r, r, r, 0), self.vis.rgba.constraint)

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
        batch.arrows(p0, p0 + snap.xaxis[ax] * length, width, rgba[ax], style)
    for t, kind in ((0, BOX), (1, SPHERE)):
      sel = show & (jt == t)
      if sel.any():
        b = np.asarray(m.jnt_bodyid)[sel]
        h = 0.3 * length
        batch.add(kind, snap.xanchor[sel], snap.xmat[b], (h, h, h, 0), rgba[sel])

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
      if not m.light_active[i] or len(L) >= shaders.MAX_LIGHTS:
        continue
      ltype = int(m.light_type[i])
      directional = ltype == 1
      cutoff = math.cos(math.radians(float(m.light_cutoff[i]))) if ltype == 0 else -1.0
      L.append(((*snap.light_xpos[i], 1.0 if directional else 0.0), snap.light_xdir[i],
                m.light_ambient[i], m.light_diffuse[i], m.light_specular[i],
                m.light_attenuation[i], (cutoff, float(m.light_exponent[i])), i))
    return L

  def _shadow_matrix(self, lights, batch_arrays):
    """Light view-projection of the shadow map: the first model light that casts shadows (a
    spot or directional one, as MuJoCo's renderer; its headlight never does: no such light,
    no shadow), fitted around the non-plane instances that cast shadows this frame."""
    m = self.m
    src = None
    for k, l in enumerate(lights):
      if l[7] >= 0 and m.light_castshadow[l[7]] and int(m.light_type[l[7]]) in (0, 1):
        src = k
        break
    if src is None:
      return None, -1
    arrays = [a for kind, a in enumerate(batch_arrays) if kind != QUAD and len(a)]
    if not arrays:
      return None, -1
    a = np.concatenate(arrays)
    lo, hi = a[:, 0:3].min(0), a[:, 0:3].max(0)
    center = 0.5 * (lo + hi)
    reach_i = np.linalg.norm(a[:, 12:15], axis=1) + a[:, 15]     # bounding radius per instance
    reach = float(np.max(reach_i))
    radius = 0.5 * float(np.linalg.norm(hi - lo)) + reach + 1e-3
    pos, d = lights[src][0], np.asarray(lights[src][1], float)
    if not np.linalg.norm(d) > 1e-12:     # a light without direction (e.g. an empty snapshot)
      return None, -1
    d = d / np.linalg.norm(d)
    self._shadow_ortho = pos[3] > 0.5
    self._shadow_k = (1.0, 1.0)     # the part of the map in use, per axis
    self._shadow_half = 0.0         # a spot light's shadow frustum: half angle (radians)
    if pos[3] > 0.5:     # directional: orthographic box around the scene
      eye_l = center - d * 2 * radius
      view = _look(eye_l, d)
      # fitted to the casters' extent across the light, not their bounding sphere, at the
      # sphere's texel size (shadow_size texels across its diameter): only the corner of the
      # map the casters need is drawn and read, and the floor pays for lookups only there
      p = a[:, 0:3].astype(np.float64) @ view[:2, :3].T + view[:2, 3]
      lo_l = np.maximum((p - reach_i[:, None]).min(0), -radius) - 1e-3
      hi_l = np.minimum((p + reach_i[:, None]).max(0), radius) + 1e-3
      k = np.minimum((hi_l - lo_l) / (2 * radius) + 2.0 / self.shadow_size, 1.0)
      corner = np.eye(4)     # NDC [-1, 1] -> [-1, 2k - 1]
      corner[0, 0], corner[1, 1] = k
      corner[:2, 3] = k - 1
      self._shadow_k = (float(k[0]), float(k[1]))
      proj = corner @ _ortho(lo_l, hi_l, 0.01 * radius, 4 * radius)
    else:
      eye_l = np.asarray(pos[:3], float)
      view = _look(eye_l, d)
      cut = lights[src][6][0]
      # MuJoCo's spot shadow frustum is narrower than the cone: full angle 2 cutoff x
      # map.shadowscale (at most 160 degrees); outside it the light shines, unshadowed
      cone = math.degrees(math.acos(cut)) if cut > -1 else 80.0
      half = math.radians(min(max(cone * float(self.vis.map.shadowscale), 5.0), 80.0))
      self._shadow_half = half
      dist = float(np.linalg.norm(center - eye_l))
      far = dist + 2 * radius
      near = max(dist - 2 * radius, 0.05 * far, 1e-3)   # depth precision where shadows fall
      proj = _persp(2 * half, 1.0, near, far)
    return proj @ view, src

  # ------------------------------------------------------------------------------ render

  def render(self, snapshot, camera, opts=None, width=None, height=None, fbo=None):
    """Draw `snapshot` seen by `camera` into `fbo` (or the bound framebuffer), size w x h."""
    opts = opts or VisOptions()
    ctx = self.ctx
    if fbo is None:
      fbo = ctx.fbo
    if width is None or height is None:
      width, height = fbo.viewport[2], fbo.viewport[3]
    width, height = max(int(width), 1), max(int(height), 1)
    eye, forward, up = camera.pose(snapshot, self.m)
    viewproj = camera.projection(width / height) @ camera.view_matrix(snapshot, self.m)
    nk = self._nkinds
    # opaque geoms, transparent geoms, opaque decorations, transparent decorations
    bo, bg, bd, bt = _Batch(nk), _Batch(nk), _Batch(nk), _Batch(nk)
    self._skins.update(snapshot, opts)
    self._geom_instances(snapshot, opts, eye, bo, bg)
    self._scene_ngeom += self._skins.count()   # skins come first in mjvScene
    self._flexes.update(snapshot, opts, bo, bg, (SPHERE, CYLINDER))
    self._scene_ngeom += self._flexes.count()
    self._decor_instances(snapshot, opts, bd, bt)    # their count: what bd and bt gain
    geoms, tgeoms, decor = bo.arrays(), bg.arrays(), bd.arrays()
    trans = [np.concatenate([a, b]) for a, b in zip(tgeoms, bt.arrays())]
    # every geom casts a shadow, transparent ones too (MuJoCo's shadow pass draws all but
    # decorations, whatever their alpha); planes are left out (they only receive)
    tgeoms[QUAD] = tgeoms[QUAD][:0]
    skin_rows, skin_key = self._skins.casters()
    flex_rows, flex_key = self._flexes.casters()
    casters = ([geoms[k] for k in range(nk) if k != QUAD] + tgeoms + self._textured.casters()
               if opts.shadows else [])
    opaque = []
    for kind in range(self._nkinds):
      a = trans[kind]
      if len(a) > 1:     # back to front
        trans[kind] = a[np.argsort(-np.linalg.norm(a[:, 0:3] - eye, axis=1), kind="stable")]
      for part in (geoms, decor):
        a = part[kind]
        if len(a) > 1 and kind != QUAD:   # front to back: early depth test skips hidden pixels
          part[kind] = a[np.argsort(np.linalg.norm(a[:, 0:3] - eye, axis=1), kind="stable")]
      # geoms first: the shadow pass draws only them (decorations cast no shadow)
      opaque.append(np.concatenate([geoms[kind], decor[kind]]))
    lights = self._lights(snapshot, forward, eye)
    shadow_mat, shadow_idx = (None, -1)
    for kind in range(self._nkinds):
      self._upload(("o", kind), opaque[kind])
      self._upload(("t", kind), trans[kind])
    if opts.shadows:
      shadow_mat, shadow_idx = self._shadow_matrix(lights, geoms + tgeoms
                                                   + self._textured.casters()
                                                   + [skin_rows, flex_rows])
    ctx.enable(moderngl.DEPTH_TEST)
    # the shadow map is drawn again only when the casters or the light moved (paused, settled)
    key = None if shadow_mat is None else b"".join([_gl(shadow_mat), skin_key, flex_key]
                                                   + [c.tobytes() for c in casters])
    if shadow_mat is not None and key != self._shadow_key:
      self._shadow_key = key
      self._shadow_fbo.use()
      self._shadow_fbo.clear(depth=1.0)
      ctx.enable(moderngl.CULL_FACE)
      self._depth_prog["u_viewproj"].write(_gl(shadow_mat))
      ctx.polygon_offset = (4.0, 8.0)     # slope-scaled depth bias against shadow acne
      for kind in range(self._nkinds):
        if kind != QUAD and len(geoms[kind]):
          self._vaos["d", kind].render(instances=len(geoms[kind]))
        if len(tgeoms[kind]):
          self._upload(("s", kind), tgeoms[kind])
          self._vaos["ds", kind].render(instances=len(tgeoms[kind]))
      self._textured.draw_depth(self._depth_prog)
      self._skins.draw_depth(self._depth_prog)
      self._flexes.draw_depth(self._depth_prog)
      ctx.polygon_offset = (0.0, 0.0)
    fbo.use()
    ctx.viewport = (0, 0, width, height)
    fbo.clear(*opts.background, 1.0, depth=1.0, viewport=(0, 0, width, height))
    if self.vis.skybox is not None and self._textured.sky is None:   # else after the geoms
      self._draw_sky(forward)
    self._shadow_tex.use(location=0)
    sh = shadow_mat is not None      # the program variant that reads the shadow map, or not
    geom_prog, plane_prog = self._geom_progs[sh], self._plane_progs[sh]
    # floors in pieces: the shadow variant only where the shadow map reaches
    split = sh and self.split_floor and len(opaque[QUAD]) > 0
    # ... and when the shadow light is the only spot light on the planes, the pieces outside
    # its frustum (so outside its cone) need no per-fragment spot lighting at all
    positional = [k for k, l in enumerate(lights) if l[0][3] < 0.5]
    cut = lights[shadow_idx][6][0] if sh else -1.0
    bare = (split and self._plane_bare is not None and not self._shadow_ortho
            and positional == [shadow_idx] and cut > -1.0
            and math.acos(cut) <= self._shadow_half)      # the map covers the cone
    progs = (geom_prog, plane_prog) + ((self._plane_progs[False],) if split else ())
    progs += (self._plane_bare,) if bare else ()
    for prog in {id(p): p for p in progs}.values():
      if prog is not self._geom_progs[True] and prog is not self._geom_progs[False]:
        self._set_positional(prog, lights, shadow_idx if sh else -1)
    for prog in {id(p): p for p in progs}.values():
      self._frame_uniforms(prog, viewproj, eye, lights, shadow_mat, shadow_idx)
    ctx.wireframe = bool(opts.wireframe)
    ctx.depth_func = "<="    # as MuJoCo: of coinciding surfaces the later drawn shows
    ctx.disable(moderngl.BLEND)
    for kind in self._opaque_order:
      if len(opaque[kind]):
        self._twoside(kind == QUAD)
        if kind == QUAD:
          ctx.disable(moderngl.CULL_FACE)
        else:
          ctx.enable(moderngl.CULL_FACE)
        if kind == QUAD and split:
          self._draw_floor_pieces(len(opaque[kind]), bare)
        else:
          self._vaos[_vkey("o", sh), kind].render(instances=len(opaque[kind]))
    self._draw_textured(sh, viewproj, eye, lights, shadow_mat, shadow_idx)
    for part in (self._skins, self._flexes):
      part.draw(sh, lambda prog: self._frame_uniforms(prog, viewproj, eye, lights, shadow_mat,
                                                      shadow_idx), False)
    self._draw_lines(snapshot, opts, viewproj)
    self._draw_wide_lines(viewproj, width, height)
    if opts.haze:
      self._draw_haze(snapshot, opts, eye, camera.clip()[1], viewproj)
    if (any(len(a) for a in trans) or self._skins.any_transparent()
        or self._flexes.any_transparent()):
      # transparent geoms receive no shadow (MuJoCo shadows only opaque ones): the programs
      # that never read the shadow map, the shadow light lit as any other
      for prog in (self._geom_progs[False], self._plane_progs[False]):
        if not any(prog is p for p in progs):
          if prog is self._plane_progs[False] and prog is not self._geom_progs[False]:
            self._set_positional(prog, lights, -1)
          self._frame_uniforms(prog, viewproj, eye, lights, None, -1)
      ctx.enable(moderngl.BLEND)
      ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
      ctx.depth_mask = False      # ("<=": an inertia box may coincide with its geom's faces)
      ctx.enable(moderngl.CULL_FACE)
      # planes keep their own normal here: a plane seen from behind is lit as from the front
      # (MuJoCo's one-sided lighting); seen from the front the normal faces the eye anyway
      self._twoside(False)
      for _ in range(2):       # twice, as MuJoCo does (its transparent geoms look denser)
        for kind in range(self._nkinds):
          if len(trans[kind]):
            if kind == QUAD:
              ctx.disable(moderngl.CULL_FACE)
            else:
              ctx.enable(moderngl.CULL_FACE)
            self._vaos[_vkey("t", False), kind].render(instances=len(trans[kind]))
        for part in (self._skins, self._flexes):
          part.draw(False, lambda prog: self._frame_uniforms(prog, viewproj, eye, lights, None,
                                                             -1), True)
      ctx.depth_mask = True
      ctx.disable(moderngl.BLEND)
    ctx.wireframe = False
    ctx.depth_func = "<"
    ctx.disable(moderngl.CULL_FACE | moderngl.DEPTH_TEST)   # leave the state as imgui expects

  def _twoside(self, on):
    """u_twoside of every geom program: planes (drawn without culling) turn their normal to
    the eye; other shapes keep their normals, as MuJoCo's culled one-sided lighting."""
    if bool(on) is self._twoside_key:
      return
    self._twoside_key = bool(on)
    progs = list(self._geom_progs.values()) + list(self._plane_progs.values())
    if self._plane_bare is not None:
      progs.append(self._plane_bare)
    for prog in progs:
      self._set_uniform(prog, "u_twoside", int(on))

  def _frame_uniforms(self, prog, viewproj, eye, lights, shadow_mat, shadow_idx):
    """This frame's camera, lights and shadow-map uniforms of a geom program."""
    self._set_uniform(prog, "u_viewproj", _gl(viewproj))
    self._set_uniform(prog, "u_eye", tuple(float(x) for x in eye))
    self._set_lights(prog, lights)
    self._set_uniform(prog, "u_shadow_light", shadow_idx if shadow_mat is not None else -1)
    self._set_uniform(prog, "u_shadow_mat",
                      _gl(_BIAS_IDENTITY if shadow_mat is None else shadow_mat))
    self._set_uniform(prog, "u_shadow_scale", float(self.shadow_strength))
    self._set_uniform(prog, "u_shadow_bias", 0.0005 if self._shadow_ortho else 0.0)
    self._set_uniform(prog, "u_shadow", 0)

  def _draw_textured(self, sh, viewproj, eye, lights, shadow_mat, shadow_idx):
    """Textured geoms (render/textures.py) with this frame's uniforms: opaque, then blended;
    then the skybox texture where no opaque geom is (depth-tested: hidden pixels cost nothing)."""
    if not self._textured.groups:
      if self._textured.sky is not None:
        self._textured.draw_sky(viewproj)
      return
    def set_uniforms(prog, plane):
      if plane and self._plane_npos:
        self._set_positional(prog, lights, shadow_idx if sh else -1)
      self._frame_uniforms(prog, viewproj, eye, lights, shadow_mat, shadow_idx)
    self._textured.draw(sh, set_uniforms, self._plane_npos, False)
    if self._textured.sky is not None:
      self._textured.draw_sky(viewproj)
    if any(g[3] for g in self._textured.groups):
      ctx = self.ctx
      ctx.enable(moderngl.BLEND)
      ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
      ctx.depth_mask = False
      for _ in range(2):    # twice, as the other transparent geoms; no shadow received
        self._textured.draw(False, set_uniforms, self._plane_npos, True)
      ctx.depth_mask = True
      ctx.disable(moderngl.BLEND)

  def _draw_floor_pieces(self, n, bare=False):
    """The opaque planes (n instances) in five clipped pieces: inside the shadow map's footprint
    with the program that reads it, the four pieces around it with the one that does not.
    llvmpipe runs both sides of a branch, so a floor pixel outside the footprint would otherwise
    pay the shadow-map lookup. With `bare`, the four outer pieces are drawn without the
    per-fragment spot light (they lie outside its cone)."""
    ctx = self.ctx
    outer = (self._plane_bare, "ob") if bare else (self._plane_progs[False], _vkey("o", False))
    inner = (self._plane_progs[True], _vkey("o", True))
    for i in range(4):
      ctx.enable_direct(_GL_CLIP_DISTANCE0 + i)
    for shadow, planes in _floor_pieces(*self._shadow_k):
      prog, vao = inner if shadow else outer
      prog["u_clip"].write(planes)
      self._vaos[vao, QUAD].render(instances=n)
    for i in range(4):
      ctx.disable_direct(_GL_CLIP_DISTANCE0 + i)
    for prog in (inner[0], outer[0]):
      # zero planes clip nothing: llvmpipe clips by every distance the shader writes, whether
      # or not GL_CLIP_DISTANCEi is enabled, and the planes' programs may be the geoms' too
      prog["u_clip"].write(_NO_CLIP)

  def _haze_triangles(self, snap, opts, eye, far):
    """The haze band as MuJoCo's renderer draws it with the skybox (mjrHAZE): a truncated cone
    around the eye at 0.7 x the far clip distance, from the first infinite plane (in a shown
    geom group) up to eye level, in rgba.haze with alpha 0 at both ends and 1 at an elevation set
    by map.haze. Triangles (n, 7) float32 (position, rgba), or None when MuJoCo draws none: no
    skybox, no infinite plane, or the eye below it."""
    if self._textured.sky is None and self.vis.skybox is None:
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

  def _draw_haze(self, snap, opts, eye, far, viewproj):
    """Blend the haze band over the opaque scene (depth-tested, as MuJoCo's skybox pass)."""
    tris = self._haze_triangles(snap, opts, eye, far)
    if tris is None:
      return
    ctx = self.ctx
    if tris.nbytes > self._haze_buf.size:
      self._haze_buf.orphan(tris.nbytes)
    self._haze_buf.write(tris.tobytes())
    self._line_prog["u_viewproj"].write(_gl(viewproj))
    ctx.disable(moderngl.CULL_FACE)
    ctx.enable(moderngl.BLEND)
    ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
    self._haze_vao.render(moderngl.TRIANGLES, vertices=len(tris))
    ctx.disable(moderngl.BLEND)

  def _draw_sky(self, forward):
    """The skybox as a vertical gradient (rgb1 above, rgb2 below the horizon), drawn behind."""
    c1, c2 = (np.asarray(c[:3], np.float32) for c in self.vis.skybox)
    t = 0.5 + 0.5 * float(forward[2])      # looking up shows more of rgb1
    top = c1 * min(1.0, 0.5 + t) + c2 * (1 - min(1.0, 0.5 + t))
    bottom = c1 * max(0.0, t - 0.5) + c2 * (1 - max(0.0, t - 0.5))
    quad = np.array([[-1, -1, *bottom], [1, -1, *bottom], [-1, 1, *top], [1, 1, *top]],
                    np.float32)
    self._sky_buf.write(quad.tobytes())
    self.ctx.disable(moderngl.DEPTH_TEST)
    self._sky_vao.render(moderngl.TRIANGLE_STRIP)
    self.ctx.enable(moderngl.DEPTH_TEST)

  def _upload(self, key, a):
    if not len(a):
      return
    buf = self._inst[key]
    if a.nbytes > buf.size:
      buf.orphan(max(a.nbytes, 2 * buf.size))
    buf.write(a.tobytes())

  def _set_positional(self, prog, lights, shadow_idx):
    """The u_p* uniforms of the plane program: its spot/point lights in a fixed-size list."""
    n = self._plane_npos
    pos = [k for k, l in enumerate(lights) if l[0][3] < 0.5][:n]
    arrays = {name: np.zeros((n, w), np.float32) for name, w in (
        ("u_ppos", 3), ("u_pdir", 3), ("u_pamb", 3), ("u_pdif", 3), ("u_pspec", 3),
        ("u_patt", 3), ("u_pspot", 2))}
    arrays["u_patt"][:, 0] = 1.0
    arrays["u_pspot"][:, 0] = -1.0
    shadow = -1
    for j, k in enumerate(pos):
      l = lights[k]
      d = np.asarray(l[1], float)
      arrays["u_ppos"][j] = l[0][:3]
      arrays["u_pdir"][j] = d / max(np.linalg.norm(d), 1e-12)
      arrays["u_pamb"][j], arrays["u_pdif"][j], arrays["u_pspec"][j] = l[2], l[3], l[4]
      arrays["u_patt"][j], arrays["u_pspot"][j] = l[5], l[6]
      shadow = j if k == shadow_idx else shadow
    for name, a in arrays.items():
      self._set_uniform(prog, name, a.tobytes())
    self._set_uniform(prog, "u_pshadow", shadow)

  @staticmethod
  def _set_uniform(prog, name, value):
    """Set a uniform if the program uses it (the GLSL compiler drops unused ones)."""
    if name not in prog:
      return
    if isinstance(value, bytes):
      prog[name].write(value)
    else:
      prog[name].value = value

  def _set_lights(self, prog, lights):
    n = len(lights)
    self._set_uniform(prog, "u_nlight", n)
    if not n:
      return

    def arr(idx, width):
      a = np.zeros((shaders.MAX_LIGHTS, width), np.float32)
      a[:n] = [np.asarray(l[idx], float)[:width] for l in lights]
      return a.tobytes()
    for name, idx, w in (("u_lpos", 0, 4), ("u_ldir", 1, 3), ("u_lamb", 2, 3), ("u_ldif", 3, 3),
                         ("u_lspec", 4, 3), ("u_latt", 5, 3), ("u_lspot", 6, 2)):
      if name in prog:
        prog[name].write(arr(idx, w))

  def _draw_lines(self, snap, opts, viewproj):
    segs = []
    for a in self.lines:
      c = np.asarray(a[2], np.float32)
      segs.append(np.concatenate([np.asarray(a[0], np.float32), c]))
      segs.append(np.concatenate([np.asarray(a[1], np.float32), c]))
    if not segs:
      return
    data = np.array(segs, np.float32)
    if data.nbytes > self._line_buf.size:
      self._line_buf.orphan(2 * data.nbytes)
    self._line_buf.write(data.tobytes())
    self._line_prog["u_viewproj"].write(_gl(viewproj))
    self._line_vao.render(moderngl.LINES, vertices=len(data))

  # ------------------------------------------------------------------------------ helpers

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

  def release(self):
    """Free every GL object this renderer made."""
    objs = (list(self._vaos.values()) + list(self._inst.values()) + self._vbos + self._ibos
            + list(getattr(self, "_mesh_vbos", []))
            + [self._line_vao, self._line_buf, self._haze_vao, self._haze_buf, self._wide_vao,
               self._wide_buf, self._wide_corners, self._wide_prog, self._sky_vao, self._sky_buf, self._sky_prog,
               self._shadow_fbo, self._shadow_tex, self._depth_prog, self._line_prog])
    if self._plane_bare is not None:
      objs.append(self._plane_bare)
    for sh in (True, False):
      objs.append(self._geom_progs[sh])
      if self._plane_progs[sh] is not self._geom_progs[sh]:
        objs.append(self._plane_progs[sh])
    for o in objs:
      o.release()
    self._textured.release()
    self._skins.release()
    self._flexes.release()
    self._vaos, self._inst, self._vbos, self._ibos = {}, {}, [], []


_RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)   # mjRAYDATA fields: dist, dir, origin, point, normal, depth
_SENS_RANGEFINDER, _SENS_GEOMFROMTO = 7, 41     # mjtSensor
_OBJ_SITE, _OBJ_CAMERA = 6, 7                   # mjtObj


def _ray_sensors(m):
  """The sensors drawn as rays: (kind "site"/"camera"/"fromto", object id, sensordata address,
  data spec, values per ray, offset of each mjRAYDATA field, camera rays in the camera frame)."""
  out = []
  nsensor = int(getattr(m, "nsensor", 0))
  if not nsensor or not hasattr(m, "sensor_intprm"):
    return out
  for i in range(nsensor):
    st, adr = int(m.sensor_type[i]), int(m.sensor_adr[i])
    if st == _SENS_GEOMFROMTO:
      out.append(("fromto", -1, adr, 0, 6, (), None))
      continue
    if st != _SENS_RANGEFINDER:
      continue
    spec, ot, obj = int(m.sensor_intprm[i, 0]), int(m.sensor_objtype[i]), int(m.sensor_objid[i])
    off, stride = [], 0
    for j, size in enumerate(_RAYDATA_SIZE):
      off.append(stride)
      stride += size if spec & (1 << j) else 0
    if ot == _OBJ_SITE:
      out.append(("site", obj, adr, spec, stride, tuple(off), None))
    elif ot == _OBJ_CAMERA:
      out.append(("camera", obj, adr, spec, stride, tuple(off), _camera_rays(m, obj)))
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


_BIAS_IDENTITY = np.eye(4)
_GL_CLIP_DISTANCE0 = 0x3000


def _vkey(p, shadow):
  """Key of the instanced VAO of pass `p` ('o' opaque, 't' transparent) in a shadow variant."""
  return p if shadow else p + "n"


def _gl(mat):
  """A 4x4 numpy matrix as the column-major float32 bytes GLSL expects."""
  return np.ascontiguousarray(np.asarray(mat, np.float32).T).tobytes()


def _look(eye, d):
  """View matrix looking from `eye` along unit `d`."""
  up = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.99 else np.array([0.0, 1.0, 0.0])
  r = np.cross(d, up)
  r /= np.linalg.norm(r)
  u = np.cross(r, d)
  v = np.eye(4)
  v[0, :3], v[1, :3], v[2, :3] = r, u, -d
  v[:3, 3] = -v[:3, :3] @ eye
  return v


def _ortho(lo, hi, n, f):
  """Orthographic projection of the view-space box lo <= (x, y) <= hi, n <= -z <= f."""
  p = np.eye(4)
  p[0, 0], p[1, 1] = 2 / (hi[0] - lo[0]), 2 / (hi[1] - lo[1])
  p[0, 3], p[1, 3] = -(hi[0] + lo[0]) / (hi[0] - lo[0]), -(hi[1] + lo[1]) / (hi[1] - lo[1])
  p[2, 2], p[2, 3] = -2 / (f - n), -(f + n) / (f - n)
  return p


def _persp(fovy, aspect, n, f):
  t = math.tan(fovy / 2)
  p = np.zeros((4, 4))
  p[0, 0], p[1, 1] = 1 / (t * aspect), 1 / t
  p[2, 2], p[2, 3], p[3, 2] = -(f + n) / (f - n), -2 * f * n / (f - n), -1.0
  return p


def _clip_planes(*rows):
  """u_clip of up to 4 planes a*x + b*y + c*w + e >= 0 over the shadow map's clip coordinates
  (inside the map: -w <= x, y <= w); missing rows are zero: they clip nothing."""
  m = np.zeros((4, 4))
  if rows:
    m[:len(rows)] = rows
  return _gl(m)


_NO_CLIP = _clip_planes()


_FOOT = 0.002    # overlap of neighbouring floor pieces: no cracks between them


def _floor_pieces(kx, ky):
  """(shadow variant?, u_clip) of the five floor pieces when the map's used part is
  -w <= x <= ax w, -w <= y <= ay w (a = 2k - 1): that part, then the four around it. The inner
  piece overlaps the outer ones and those overlap each other, but never the inner part: the
  outer pieces may be drawn with a program that is right only outside it."""
  ax, ay, f = 2 * kx - 1, 2 * ky - 1, _FOOT
  return (
      (True, _clip_planes((1, 0, 1 + f, 0), (-1, 0, ax + f, 0), (0, 1, 1 + f, 0),
                          (0, -1, ay + f, 0))),                             # inside
      (False, _clip_planes((1, 0, -ax, 0))),                                # x >= ax w
      (False, _clip_planes((-1, 0, -1, 0))),                                # x <= -w
      (False, _clip_planes((-1, 0, ax + f, 0), (1, 0, 1 + f, 0), (0, 1, -ay, 0))),   # y >= ay w
      (False, _clip_planes((-1, 0, ax + f, 0), (1, 0, 1 + f, 0), (0, -1, -1, 0))),   # y <= -w
  )
