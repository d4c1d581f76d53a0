"""Draw a Scene (render/scene.py: what to draw, as MuJoCo's mjv_updateScene) with moderngl
(OpenGL 3.3 core), as MuJoCo's mjr_render: geoms and decorations, lights, one shadow map,
transparency, the skybox and haze; or flat, as segmentation and depth (render/segment.py).

Every shape is drawn instanced: one draw call per mesh kind and pass, whatever the number of
geoms. Mesh geoms are drawn with their triangles: one vertex buffer per mesh asset (a draw "kind"
after the primitives), instanced over the geoms that use it. Geoms with a texture and the skybox
texture are drawn by render/textures.py (one instanced call per shape and texture). Skins
(render/skin.py) and flexes (render/flex.py) are world-space meshes drawn through the same
programs.
"""
import math

import moderngl
import numpy as np

from numjoco.render import meshes
from numjoco.render import segment
from numjoco.render import shaders
from numjoco.render import surfaces
from numjoco.render import textures
# VisOptions and LABELS are importable from here too (the viewer and the tests import them so)
from numjoco.render.scene import (  # noqa: F401
    BALL, BOX, CAPSULE, CONE, CYLINDER, KINDS, LABELS, QUAD, ROD, SPHERE, TIP, SceneBuilder,
    VisOptions)
from numjoco.render.scene import FLOATS as _FLOATS
from numjoco.render.shaders import AROUND, GL_CLIP_DISTANCE0, INSIDE, OUTSIDE
_INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
_INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")
_OPAQUE_ORDER = (SPHERE, CAPSULE, CYLINDER, BOX, CONE, BALL, ROD, TIP, QUAD)   # the floor last


class SceneRenderer:
  """Draws snapshots of one model into the current (or a given) framebuffer of `ctx`: its
  SceneBuilder (`builder`) makes each frame's Scene (`update_scene`), `draw` draws it."""

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
    self.user_geoms = []     # a script's geoms (app.passive.UserGeom) drawn each frame
    self.builder = SceneBuilder()
    self.scene = None        # the last Scene drawn
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
    self._wide_corners = ctx.buffer(segment.WIDE_CORNERS.tobytes())
    self._wide_buf = ctx.buffer(reserve=64 * 10 * 4, dynamic=True)
    self._wide_vao = ctx.vertex_array(self._wide_prog, [
        (self._wide_corners, "2f", "in_corner"),
        (self._wide_buf, "3f 3f 4f/i", "i_p0", "i_p1", "i_color")])
    self._haze_buf = ctx.buffer(reserve=4096 * 7 * 4, dynamic=True)
    self._haze_vao = ctx.vertex_array(self._line_prog, [(self._haze_buf, "3f 4f", "in_pos",
                                                         "in_color")])
    self._twoside_key = None
    self._light_cache = (None, [])      # (lights, uniforms) of _light_uniforms
    self._pos_cache = (None, None, [])  # (key, lights, uniforms) of _positional_uniforms
    self._line_buf = ctx.buffer(reserve=1024 * 7 * 4, dynamic=True)
    self._line_vao = ctx.vertex_array(self._line_prog, [(self._line_buf, "3f 4f", "in_pos",
                                                         "in_color")])
    self._shadow_tex = ctx.depth_texture((self.shadow_size, self.shadow_size))
    self._shadow_tex.compare_func = "<="
    self._shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
    self._shadow_tex.repeat_x = self._shadow_tex.repeat_y = False
    self._shadow_fbo = ctx.framebuffer(depth_attachment=self._shadow_tex)
    self.split_floor = True   # draw floors in pieces (see _draw_floor_pieces); False: in one
    self.clip_sky = True      # draw the sky only outside an opaque plane (sky_edges)
    self._plane_progs, self._plane_npos = dict(self._geom_progs), 0
    self._plane_bare = None
    # floor pieces around the shadow map's footprint: the shadow light lit apart, no map read
    self._plane_apart = ctx.program(*shaders.geom_program(0, shaders.APART))
    self._vaos["oa", QUAD] = self._geom_vao(self._plane_apart, QUAD, "o")
    self._nkinds = len(KINDS)
    self._mesh_gl = []        # GL objects of the current model's mesh assets
    self._opaque_order = _OPAQUE_ORDER
    self._textured = textures.TexturedGeoms(ctx)
    self._skins = surfaces.SkinDraw(ctx)
    self._flexes = surfaces.FlexDraw(ctx)
    self._ids = segment.IdPass(ctx)
    if m is not None:
      self.set_model(m)

  # ------------------------------------------------------------------------------- model

  def _mesh_buffers(self, kind):
    """(vertex buffer, index buffer or None) of a mesh kind: a primitive's indexed triangles or
    a mesh asset's (or height field's) unindexed ones."""
    if kind >= len(KINDS):
      return self._mesh_vbos[kind - len(KINDS)], None
    return self._vbos[2 * kind], self._ibos[2 * kind]

  def _geom_vao(self, prog, kind, p):
    vbo, ibo = self._mesh_buffers(kind)
    return self.ctx.vertex_array(prog, [(vbo, "3f 3f 1f", "in_pos", "in_normal", "in_cap"),
                                        (self._inst[p, kind], _INSTANCE_FMT, *_INSTANCE_ATTRS)],
                                 ibo)

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

  def _set_meshes(self, mesh_verts):
    """Vertex buffers, instance buffers and VAOs of the model's mesh assets and height fields
    (kinds len(KINDS) + i) from their vertex rows (SceneBuilder.mesh_verts)."""
    for o in self._mesh_gl:
      o.release()
    for key in [k for k in self._vaos if k[1] >= len(KINDS)]:
      del self._vaos[key]
    for key in [k for k in self._inst if k[1] >= len(KINDS)]:
      del self._inst[key]
    self._mesh_gl, self._mesh_vbos = [], []
    for i, verts in enumerate(mesh_verts):
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
    self._nkinds = len(KINDS) + len(mesh_verts)
    self._ids.forget(len(KINDS))
    mesh_kinds = tuple(range(len(KINDS), self._nkinds))
    self._opaque_order = _OPAQUE_ORDER[:-1] + mesh_kinds + _OPAQUE_ORDER[-1:]

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
    self._vaos.pop(("oa", QUAD)).release()
    self._plane_apart.release()
    self._plane_apart = self.ctx.program(*shaders.geom_program(npos, shaders.APART))
    self._vaos["oa", QUAD] = self._geom_vao(self._plane_apart, QUAD, "o")
    if npos:   # planes outside the one spot light's cone (see _floor_pieces' callers)
      self._plane_bare = self.ctx.program(*shaders.geom_program(npos, False, positional=False))
      self._vaos["ob", QUAD] = self._geom_vao(self._plane_bare, QUAD, "o")
    self._plane_npos = npos
    self._twoside_key = None     # new programs: u_twoside unset

  def set_model(self, m):
    """The scene builder's per-model constants, then the GL objects of the model's meshes,
    textures, skins and flexes."""
    self.m = m
    self._shadow_key = None
    b = self.builder
    b.set_model(m)
    self.vis = b.vis
    npos = sum(1 for i in range(m.nlight) if m.light_active[i] and int(m.light_type[i]) != 1)
    self._set_plane_program(min(npos, shaders.MAX_LIGHTS))
    self._set_meshes(b.mesh_verts)
    self._textured.set_model(m, b.textures)
    self._skins.set_model(b.skins, self)
    self._flexes.set_model(b.flexes, self)

  # what the app sets and reads of the scene: the builder's
  max_geom = property(lambda self: self.builder.max_geom,
                      lambda self, v: setattr(self.builder, "max_geom", int(v)),
                      doc="capacity of the scene (mjvScene.maxgeom)")
  scene_full = property(lambda self: self.builder.scene_full,
                        doc="whether the last frame left markers out (mjWARN_VGEOMFULL)")
  highlight_body = property(lambda self: self.builder.highlight_body,
                            lambda self, v: setattr(self.builder, "highlight_body", v),
                            doc="selected body: its geoms glow (MuJoCo's pert.select)")
  highlight_skin = property(lambda self: self.builder.highlight_skin,
                            lambda self, v: setattr(self.builder, "highlight_skin", v),
                            doc="selected skin: it glows (pert.skinselect)")
  highlight_flex = property(lambda self: self.builder.highlight_flex,
                            lambda self, v: setattr(self.builder, "highlight_flex", v),
                            doc="selected flex: it glows (pert.flexselect)")

  # ------------------------------------------------------------------------------ frame

  def _draw_wide_lines(self, a, viewproj, width, height):
    """The rangefinder lines `a` ((n, 10): p0, p1, rgba), 3 * global.linewidth pixels wide
    (mjGEOM_LINE)."""
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

  def update_scene(self, snapshot, camera, opts=None):
    """The Scene of `snapshot` seen by `camera` under VisOptions `opts` (mjv_updateScene), with
    the app's `lines` and `arrows`."""
    eye, forward, _ = camera.pose(snapshot, self.m)
    return self.builder.build(snapshot, opts or VisOptions(), eye, forward, camera.clip()[1],
                              self.lines, self.arrows, self.user_geoms)

  def render(self, snapshot, camera, opts=None, width=None, height=None, fbo=None, hidden=()):
    """Draw `snapshot` seen by `camera` into `fbo` (or the bound framebuffer), size w x h:
    `update_scene` (mjv_updateScene), then `draw` (mjr_render)."""
    opts = opts or VisOptions()
    self.draw(self.update_scene(snapshot, camera, opts), camera.view_matrix(snapshot, self.m),
              camera.projection, opts, width, height, fbo, hidden)

  def draw_ids(self, scene, view, projection, width, height, fbo):
    """Draw a Scene flat into `fbo` (colour attachments: RGBA8, R32F) as segmentation and
    depth (render/segment.py; mjr_render with mjRND_SEGMENT and mjRND_IDCOLOR), size w x h,
    with the 4x4 `view` matrix and `projection(aspect)`. Returns the frame's objects: (n, 2)
    int32 [objid, objtype]; the pixels of row k are coloured k + 1 (0: nothing drawn), and
    the float attachment holds the distance along the view axis."""
    self._skins.upload()
    self._flexes.upload()
    fbo.use()
    self.ctx.viewport = (0, 0, width, height)
    fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0, viewport=(0, 0, width, height))
    view = np.asarray(view, float)
    return self._ids.draw(scene, projection(width / height) @ view, -view[2], (width, height),
                          3.0 * float(self.vis.global_.linewidth), self._mesh_buffers,
                          (self._flexes, self._skins))

  def draw(self, scene, view, projection, opts=None, width=None, height=None, fbo=None,
           hidden=()):
    """Draw a Scene into `fbo` (or the bound framebuffer), size w x h, with the 4x4 `view`
    matrix and `projection(aspect)` (a Camera's). `hidden`: pixel rectangles (x, y, w, h from
    the bottom left) that an opaque UI covers: left at the background colour, nothing shaded
    there (their depth is the near plane's)."""
    opts = opts or VisOptions()
    self.scene = scene
    ctx = self.ctx
    if fbo is None:
      fbo = ctx.fbo
    if width is None or height is None:
      width, height = fbo.viewport[2], fbo.viewport[3]
    width, height = max(int(width), 1), max(int(height), 1)
    eye, forward = scene.eye, scene.forward
    viewproj = projection(width / height) @ view
    self._skins.upload()
    self._flexes.upload()
    self._textured.groups = scene.textured
    geoms, tgeoms, decor = list(scene.geoms), list(scene.tgeoms), list(scene.decor)
    trans = [np.concatenate([a, b]) for a, b in zip(tgeoms, scene.tdecor)]
    # every geom casts a shadow, transparent ones too (MuJoCo's shadow pass draws all but
    # decorations, whatever their alpha); planes are left out (they only receive)
    tgeoms[QUAD] = tgeoms[QUAD][:0]
    skin_rows, skin_key = scene.skins.casters()
    flex_rows, flex_key = scene.flexes.casters()
    tex_casters = [part for kind, _, part, _ in scene.textured if kind != QUAD]
    nk = self._nkinds
    casters = ([geoms[k] for k in range(nk) if k != QUAD] + tgeoms + tex_casters
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
    lights = scene.lights
    shadow_mat, shadow_idx = (None, -1)
    for kind in range(self._nkinds):
      self._upload(("o", kind), opaque[kind])
      self._upload(("t", kind), trans[kind])
    if opts.shadows:
      shadow_mat, shadow_idx = self._shadow_matrix(lights, geoms + tgeoms + tex_casters
                                                   + [skin_rows, flex_rows])
    ctx.enable(moderngl.DEPTH_TEST)
    # the shadow map is drawn again only when the casters or the light moved (paused, settled)
    key = None if shadow_mat is None else b"".join([_gl(shadow_mat), skin_key, flex_key]
                                                   + [c.tobytes() for c in casters])
    if shadow_mat is not None and key != self._shadow_key:
      self._shadow_key = key
      self._draw_shadow_map(shadow_mat, geoms, tgeoms)
      # llvmpipe: the main pass reads the map; waiting for it here rather than letting the
      # first draw that samples it force the flush saves 3-5 ms a 1280x720 frame
      ctx.finish()
    fbo.use()
    ctx.viewport = (0, 0, width, height)
    fbo.clear(*opts.background, 1.0, depth=1.0, viewport=(0, 0, width, height))
    for rect in hidden:
      if rect[2] > 0 and rect[3] > 0:
        fbo.clear(*opts.background, 1.0, depth=0.0, viewport=tuple(rect))
    if self.vis.skybox is not None and self._textured.sky is None:   # else after the geoms
      self._draw_sky(forward)
    self._shadow_tex.use(location=0)
    sh = shadow_mat is not None      # the program variant that reads the shadow map, or not
    geom_prog, plane_prog = self._geom_progs[sh], self._plane_progs[sh]
    # floors in pieces: the shadow variant only where the shadow map reaches
    split = sh and self.split_floor
    pieces = _floor_pieces(*self._shadow_k, self._spot_cone(lights, shadow_idx)) if split else ()
    split_quad = split and len(opaque[QUAD]) > 0
    progs = (geom_prog, plane_prog) + ((self._plane_apart,) if split_quad else ())
    if split_quad and any(piece == OUTSIDE for piece, _ in pieces):
      progs += (self._plane_bare,)
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
        if kind == QUAD and split_quad:
          self._draw_floor_pieces(pieces, len(opaque[kind]))
        else:
          self._vaos[_vkey("o", sh), kind].render(instances=len(opaque[kind]))
    sky = None      # the sky only where no opaque plane is (a floor often fills the view)
    if self.clip_sky and self._textured.sky is not None and not opts.wireframe:
      planes = [opaque[QUAD]] + [part for kind, _, part, trans in scene.textured
                                 if kind == QUAD and not trans]
      sky = sky_edges(np.concatenate(planes), viewproj, width, height)
    self._draw_textured(sh, viewproj, eye, lights, shadow_mat, shadow_idx,
                        (lambda variant, n: self._draw_pieces(pieces, variant, n)) if split
                        else None, sky)
    for part in (self._skins, self._flexes):
      part.draw(sh, lambda prog: self._frame_uniforms(prog, viewproj, eye, lights, shadow_mat,
                                                      shadow_idx), False)
    self._draw_lines(scene.lines, viewproj)
    self._draw_wide_lines(scene.wide_lines, viewproj, width, height)
    if scene.haze is not None:
      self._draw_haze(scene.haze, viewproj)
    if (any(len(a) for a in trans) or scene.skins.any_transparent()
        or scene.flexes.any_transparent()):
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

  def _draw_shadow_map(self, shadow_mat, geoms, tgeoms):
    """The casters' depth from the shadow light (`shadow_mat`): the opaque geoms (their
    instances lead the opaque buffers), the transparent ones, textured geoms, skins, flexes."""
    ctx = self.ctx
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

  def _twoside(self, on):
    """u_twoside of every geom program: planes (drawn without culling) turn their normal to
    the eye; other shapes keep their normals, as MuJoCo's culled one-sided lighting."""
    if bool(on) is self._twoside_key:
      return
    self._twoside_key = bool(on)
    progs = list(self._geom_progs.values()) + list(self._plane_progs.values())
    if self._plane_bare is not None:
      progs.append(self._plane_bare)
    progs.append(self._plane_apart)
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

  def _draw_textured(self, sh, viewproj, eye, lights, shadow_mat, shadow_idx, split=None,
                     sky=None):
    """Textured geoms (render/textures.py) with this frame's uniforms: opaque, then blended;
    then the skybox texture where no opaque geom is (depth-tested), in the pieces `sky` of
    sky_edges. `split(variant, n)` draws opaque planes in pieces as the untextured ones
    (_draw_pieces)."""
    if not self._textured.groups:
      if self._textured.sky is not None:
        self._textured.draw_sky(viewproj, sky)
      return
    def set_uniforms(prog, plane):
      if plane and self._plane_npos:
        self._set_positional(prog, lights, shadow_idx if sh else -1)
      self._frame_uniforms(prog, viewproj, eye, lights, shadow_mat, shadow_idx)
    self._textured.draw(sh, set_uniforms, self._plane_npos, False, split)
    if self._textured.sky is not None:
      self._textured.draw_sky(viewproj, sky)
    if any(g[3] for g in self._textured.groups):
      ctx = self.ctx
      ctx.enable(moderngl.BLEND)
      ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
      ctx.depth_mask = False
      for _ in range(2):    # twice, as the other transparent geoms; no shadow received
        self._textured.draw(False, set_uniforms, self._plane_npos, True)
      ctx.depth_mask = True
      ctx.disable(moderngl.BLEND)

  def _spot_cone(self, lights, shadow_idx):
    """When the shadow light is a spot light and the planes' only positional one: its cone's
    pyramid in the shadow map's clip coordinates, |x|, |y| <= c w (None otherwise). Outside it
    the light adds nothing, so the floor there needs no per-fragment light at all."""
    if self._plane_npos == 0 or self._shadow_ortho or shadow_idx < 0:
      return None
    if [k for k, l in enumerate(lights) if l[0][3] < 0.5] != [shadow_idx]:
      return None
    cut = float(lights[shadow_idx][6][0])
    if not -1.0 < cut or math.acos(min(cut, 1.0)) > math.radians(89.0):
      return None
    return math.tan(math.acos(min(cut, 1.0))) / math.tan(self._shadow_half)

  def _draw_floor_pieces(self, pieces, n):
    """The opaque untextured planes (n instances) in `pieces` (_draw_pieces)."""
    progs = {INSIDE: (self._plane_progs[True], _vkey("o", True)),
             AROUND: (self._plane_apart, "oa"),
             OUTSIDE: (self._plane_bare, "ob")}
    self._draw_pieces(pieces, lambda piece: (progs[piece][0], self._vaos[progs[piece][1], QUAD]),
                      n)

  def _draw_pieces(self, pieces, variant, n):
    """Draw n plane instances in the clipped pieces of _floor_pieces: inside the shadow map's
    footprint with the program that reads it, around it with one that does not, and outside a
    spot light's cone without the per-fragment spot light. `variant(piece)` gives a piece's
    (program, vao). llvmpipe runs both sides of a branch, so a floor pixel outside the footprint
    would otherwise pay the shadow-map lookup, and one outside the cone the spot light."""
    ctx = self.ctx
    for i in range(4):
      ctx.enable_direct(GL_CLIP_DISTANCE0 + i)
    used = {}
    for piece, planes in pieces:
      prog, vao = variant(piece)
      prog["u_clip"].write(planes)
      vao.render(instances=n)
      used[id(prog)] = prog
    for i in range(4):
      ctx.disable_direct(GL_CLIP_DISTANCE0 + i)
    for prog in used.values():
      # zero planes clip nothing: llvmpipe clips by every distance the shader writes, whether
      # or not GL_CLIP_DISTANCEi is enabled, and the planes' programs may be the geoms' too
      prog["u_clip"].write(_NO_CLIP)

  def _draw_haze(self, tris, viewproj):
    """Blend the haze band's triangles over the opaque scene (depth-tested, as MuJoCo's skybox
    pass)."""
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
    for name, value in self._positional_uniforms(lights, shadow_idx):
      self._set_uniform(prog, name, value)

  def _positional_uniforms(self, lights, shadow_idx):
    """[(name, value)] of _set_positional, made once per frame's `lights` and shadow light."""
    key = (shadow_idx, self._plane_npos)
    if self._pos_cache[0] == key and self._pos_cache[1] is lights:
      return self._pos_cache[2]
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
    out = [(name, a.tobytes()) for name, a in arrays.items()] + [("u_pshadow", shadow)]
    self._pos_cache = (key, lights, out)
    return out

  @staticmethod
  def _set_uniform(prog, name, value):
    """Set a uniform if the program uses it (the GLSL compiler drops unused ones)."""
    member = prog.get(name, None)   # a dict lookup (`name in prog` iterates the members)
    if member is None:
      return
    if isinstance(value, bytes):
      member.write(value)
    else:
      member.value = value

  def _set_lights(self, prog, lights):
    self._set_uniform(prog, "u_nlight", len(lights))
    for name, value in self._light_uniforms(lights):
      self._set_uniform(prog, name, value)

  def _light_uniforms(self, lights):
    """[(name, bytes)] of the u_l* light arrays, made once per frame's `lights`."""
    if self._light_cache[0] is lights:
      return self._light_cache[1]
    n = len(lights)
    out = []
    if n:
      def arr(idx, width):
        a = np.zeros((shaders.MAX_LIGHTS, width), np.float32)
        a[:n] = [np.asarray(l[idx], float)[:width] for l in lights]
        return a.tobytes()
      out = [(name, arr(idx, w)) for name, idx, w in (
          ("u_lpos", 0, 4), ("u_ldir", 1, 3), ("u_lamb", 2, 3), ("u_ldif", 3, 3),
          ("u_lspec", 4, 3), ("u_latt", 5, 3), ("u_lspot", 6, 2))]
    self._light_cache = (lights, out)
    return out

  def _draw_lines(self, lines, viewproj):
    segs = []
    for a in lines:
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
    """Pixel coordinates of world points (see SceneBuilder.project)."""
    return self.builder.project(points_world, camera, width, height, snapshot)

  def labels(self, snapshot, camera, opts, width, height):
    """[(x, y, text)] in pixels for opts.labels (see SceneBuilder.labels)."""
    return self.builder.labels(snapshot, camera, opts, width, height)

  def release(self):
    """Free every GL object this renderer made."""
    objs = (list(self._vaos.values()) + list(self._inst.values()) + self._vbos + self._ibos
            + list(getattr(self, "_mesh_vbos", []))
            + [self._line_vao, self._line_buf, self._haze_vao, self._haze_buf, self._wide_vao,
               self._wide_buf, self._wide_corners, self._wide_prog, self._sky_vao, self._sky_buf, self._sky_prog,
               self._shadow_fbo, self._shadow_tex, self._depth_prog, self._line_prog])
    if self._plane_bare is not None:
      objs.append(self._plane_bare)
    objs.append(self._plane_apart)
    for sh in (True, False):
      objs.append(self._geom_progs[sh])
      if self._plane_progs[sh] is not self._geom_progs[sh]:
        objs.append(self._plane_progs[sh])
    for o in objs:
      o.release()
    self._textured.release()
    self._skins.release()
    self._flexes.release()
    self._ids.release()
    self._vaos, self._inst, self._vbos, self._ibos = {}, {}, [], []


_BIAS_IDENTITY = np.eye(4)
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


def _ring(x0, x1, y0, y1, c=None):
  """The four pieces around the part x0 w <= x <= x1 w, y0 w <= y <= y1 w of the shadow map's
  clip coordinates (unbounded outward, or within |x|, |y| <= (c + _FOOT) w), each as its rows
  (a, b, e) of a x + b y + e w >= 0. They start at the part's edge and overlap each other and
  what lies outward by _FOOT."""
  f = _FOOT
  bound = [] if c is None else [(-1, 0, c + f), (1, 0, c + f), (0, -1, c + f), (0, 1, c + f)]
  return (
      [(1, 0, -x1)] + [r for r in bound if r[0] == 0] + bound[:1],           # x >= x1 w
      [(-1, 0, x0)] + [r for r in bound if r[0] == 0] + bound[1:2],          # x <= x0 w
      [(0, 1, -y1), (-1, 0, x1 + f), (1, 0, f - x0)] + bound[2:3],           # y >= y1 w
      [(0, -1, y0), (-1, 0, x1 + f), (1, 0, f - x0)] + bound[3:],            # y <= y0 w
  )


def _floor_pieces(kx, ky, cone=None):
  """(piece, u_clip) of the floor pieces when the map's used part is -w <= x <= ax w,
  -w <= y <= ay w (a = 2k - 1): that part (INSIDE), then the four around it (AROUND). With
  `cone` c (_spot_cone: outside |x|, |y| <= c w the spot light adds nothing), the pieces beyond
  the cone are OUTSIDE: the four around the part if c <= 1, else four around the cone's pyramid,
  and the AROUND ones end at it. A piece overlaps the pieces outward of it but never a part
  inward: its program may be right only outside them. Behind the light (w < 0) only the outer
  ring is left."""
  ax, ay, f = 2 * kx - 1, 2 * ky - 1, _FOOT
  inside = (INSIDE, _clip_planes((1, 0, 1 + f, 0), (-1, 0, ax + f, 0), (0, 1, 1 + f, 0),
                                 (0, -1, ay + f, 0)))
  rows = lambda ring: [_clip_planes(*[(a, b, e, 0) for a, b, e in r]) for r in ring]
  if cone is None:
    return (inside,) + tuple((AROUND, p) for p in rows(_ring(-1, ax, -1, ay)))
  if cone <= 1:
    return (inside,) + tuple((OUTSIDE, p) for p in rows(_ring(-1, ax, -1, ay)))
  return ((inside,) + tuple((AROUND, p) for p in rows(_ring(-1, ax, -1, ay, cone)))
          + tuple((OUTSIDE, p) for p in rows(_ring(-cone, cone, -cone, cone))))


def sky_edges(planes, viewproj, width, height):
  """Where the sky may show beside the largest opaque plane on screen (`planes`: instance rows,
  render/scene.py layout): None when no plane is in view (the whole screen), else rows
  (a, b, c), one per edge of the plane's convex outline in normalised device coordinates, each
  keeping a x + b y + c >= 0: the screen outside that edge, reaching 4 pixels inside it (no
  crack between floor and sky; the sky is depth-tested there); an empty list when the plane
  fills the screen. The outline is the plane's rectangle cut by the near and far clip planes
  (beyond the far plane the sky shows through), so every pixel inside it is covered by the plane
  or by something nearer."""
  best, best_area = None, 0.0
  for a in planes:
    rot = np.array([a[3:6], a[6:9], a[9:12]], float)
    corners = [np.asarray(a[0:3], float) + rot @ (sx * a[12], sy * a[13], 0.0)
               for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    poly = [viewproj @ np.append(c, 1.0) for c in corners]
    for sign in (1.0, -1.0):        # near: z + w >= 0, far: w - z >= 0
      poly = _clip_polygon(poly, lambda p, s=sign: p[3] + s * p[2])
    if len(poly) < 3:
      continue
    xy = np.array([p[:2] / p[3] for p in poly])
    area = 0.5 * float(np.sum(xy[:, 0] * np.roll(xy[:, 1], -1) - np.roll(xy[:, 0], -1) * xy[:, 1]))
    if abs(area) > best_area:
      best, best_area = (xy if area > 0 else xy[::-1]), abs(area)
  if best is None:
    return None
  margin = 8.0 / max(min(width, height), 1)    # 4 pixels, in device coordinates
  screen = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
  edges = []
  for p, q in zip(best, np.roll(best, -1, axis=0)):
    d = q - p
    n = np.array([d[1], -d[0]]) / max(float(np.hypot(*d)), 1e-12)   # outward (counter-clockwise)
    row = (n[0], n[1], margin - float(n @ p))
    if np.any(screen @ n + row[2] >= 0.0):    # some of the screen lies outside this edge
      edges.append(row)
  return edges


def _clip_polygon(poly, dist):
  """Sutherland-Hodgman: the part of a convex polygon (homogeneous points) where dist >= 0."""
  out = []
  for i, p in enumerate(poly):
    q = poly[(i + 1) % len(poly)]
    dp, dq = dist(p), dist(q)
    if dp >= 0:
      out.append(p)
    if (dp >= 0) != (dq >= 0):
      out.append(p + (q - p) * (dp / (dp - dq)))
  return out
