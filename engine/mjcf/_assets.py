"""The Compiler's assets (MuJoCo's user_mesh.cc, user_texture.cc and the asset parts of
user_objects.cc): materials, textures, meshes (files, builtins, SDF-plugin meshes, the hull a
colliding geom needs), height fields, and the geom attributes that refer to them (mesh and
hfield geoms, fitting a primitive to a mesh, geom plugins). `AssetCompiler` is a base class of
compile.Compiler; its methods read and fill the compiler's state."""


import math
import os

import numpy as np

from numjoco.engine import rotation
from numjoco.engine.mjcf import _limits
from numjoco.engine.mjcf import _mesh
from numjoco.engine.mjcf import _meshgen
from numjoco.engine.mjcf import _plugin
from numjoco.engine.mjcf import _texture
from numjoco.engine.mjcf._node import BOOL as _BOOL, floats, ints
from numjoco.engine.mjcf._node import Obj as _Obj, Reader as _Reader


class AssetCompiler:
  """Compiler methods for <asset> elements and the geoms that use them."""

  def _material(self, n):
    rd, _ = self._reader(n, "main")
    texture = rd.str("texture")
    for c in n.children:    # <layer texture= role=>: the rgb role is what the renderer draws
      if c.tag == "layer" and c.get("role", "rgb") == "rgb" and c.get("texture"):
        if texture is not None and n.get("texture") is not None:
          raise c.error("material has both a texture attribute and an rgb layer")
        texture = c.get("texture")
    self.mats.append(_Obj(
        node=n, name=n.get("name", ""), rgba=rd.exact("rgba", [1, 1, 1, 1], 4),
        emission=rd.num("emission", 0), specular=rd.num("specular", 0.5),
        shininess=rd.num("shininess", 0.5), reflectance=rd.num("reflectance", 0),
        texture=texture, texrepeat=rd.exact("texrepeat", [1.0, 1.0], 2),
        texuniform=rd.kw("texuniform", _BOOL, False)))

  def _texture(self, n):
    """<texture>: a PNG file, six face files or a procedural texture -> pixels
    (engine/mjcf/_texture.py), kept for the renderer as mjModel's tex_* fields."""
    rd, _ = self._reader(n, "main")
    kind = rd.kw("type", _texture.TYPES, _texture.TYPES["cube"])
    file = rd.str("file")
    name = n.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
    if not name and kind != _texture.TYPES["skybox"]:
      raise n.error("texture needs a name (or a file to take it from)")
    builtin = rd.kw("builtin", {b: b for b in _texture.BUILTINS}, "none")
    rgb1 = rd.exact("rgb1", [0.8, 0.8, 0.8], 3)
    colorspace = (rd.str("colorspace", "auto") or "auto").lower()
    if colorspace not in _texture.COLORSPACES:
      raise n.error(f"invalid colorspace '{colorspace}' (expected auto, linear or sRGB)")
    nchannel = rd.int("nchannel", 3)
    srgb = False
    try:
      if builtin != "none":
        width, height = rd.int("width", 0), rd.int("height", 0)
        _limits.check_samples(n, f"builtin texture of {width} x {height} pixels"
                              f"{'' if kind == _texture.TYPES['2d'] else ' x 6 faces'}",
                              width * (height if kind == _texture.TYPES["2d"] else 6 * width))
        data = _texture.builtin(
            kind, builtin, width, height, rgb1,
            rd.exact("rgb2", [0.5, 0.5, 0.5], 3), rd.kw("mark", {k: k for k in _texture.MARKS},
                                                       "none"),
            rd.exact("markrgb", [0.0, 0.0, 0.0], 3), rd.num("random", 0.01))
      else:
        hflip, vflip = rd.kw("hflip", _BOOL, False), rd.kw("vflip", _BOOL, False)
        ctype = rd.str("content_type")
        if file is not None and _is_ktx(file, ctype):
          # MuJoCo keeps a KTX file's bytes as they are (for renderers that read KTX:
          # a 1 x filesize, 1-channel 2d texture, linear unless said otherwise)
          if kind != _texture.TYPES["2d"]:
            raise n.error("cube and skybox textures loaded from files must have 3 channels")
          if hflip or vflip:
            raise n.error("cannot flip KTX textures")
          raw = self._asset_bytes(n, file, "texture", self.texturedir)
          data = np.frombuffer(raw, np.uint8).reshape(1, len(raw), 1)
          if colorspace == "auto":
            colorspace = "linear"
        elif file is not None:
          img, srgb = self._texture_file(n, file, ctype, nchannel)
          img = _texture.flip(img, hflip, vflip)
          if kind == _texture.TYPES["2d"]:
            data = img
          else:
            grid = ints(n, "gridsize", rd.exact("gridsize", [1, 1], 2))
            data = _texture.cube_from_grid(img, grid, rd.str("gridlayout", ""), rgb1)
        else:
          keys = ("fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
          if not any(rd.has(k) for k in keys):
            if kind == _texture.TYPES["2d"]:
              raise n.error("2d texture needs a file or a builtin")
            raise n.error("cube or skybox texture needs a file, face files or a builtin")
          if kind == _texture.TYPES["2d"]:
            raise n.error("Cannot load 2D texture from separate files")
          faces = []
          for k in keys:
            f = rd.str(k)
            if f is None:
              faces.append(None)
              continue
            img, srgb = self._texture_file(n, f, ctype, nchannel)
            faces.append(_texture.flip(img, hflip, vflip))
          data = _texture.cube_from_faces(faces, rgb1)
    except _texture.TextureError as e:
      raise n.error(f"texture '{name or file}': {e}") from None
    if colorspace == "auto" and builtin == "none":    # files: from the PNG's sRGB chunks
      colorspace = "srgb" if srgb else "linear"
    self.textures.append(_Obj(node=n, name=name, type=kind, data=data,
                              colorspace=_texture.COLORSPACES[colorspace]))

  def _texture_file(self, n, file, content_type, nchannel):
    """(pixels, is_srgb) of one texture image file, found as meshes are (texturedir)."""
    kind = content_type or ("image/png" if file.lower().endswith(".png") else
                            "image/ktx" if file.lower().endswith(".ktx") else None)
    if kind != "image/png":
      raise n.error(f"texture file '{file}': unsupported content type "
                    f"'{kind or os.path.splitext(file)[1]}' (PNG and KTX are read)")
    data = self._asset_bytes(n, file, "texture", self.texturedir)
    try:
      return _texture.decode_png(data, nchannel)
    except _texture.TextureError as e:
      raise n.error(f"texture file '{file}': {e}") from None

  def _mesh(self, n):
    """<mesh>: read its vertices (file or inline) and compile it (engine/mjcf/_mesh.py)."""
    rd, _ = self._reader(n, "main")
    builtin = n.get("builtin")
    file = n.get("file")
    name = n.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
    if not name:
      raise n.error("mesh without a file needs a name")
    vert, face, uv, faceuv, nrm, facenrm = None, None, None, None, None, None
    if n.get("face") is not None:
      vals = floats(n, "face")
      if len(vals) % 3:
        raise n.error("face data must be a multiple of 3 integers")
      face = np.array(ints(n, "face", vals), np.int32).reshape(-1, 3)
    shell = False
    plugin = [c for c in n.children if c.tag == "plugin"]
    if plugin:
      vert, face, nrm = self._mesh_sdf(n, plugin, builtin, file, face)
    elif builtin is not None:
      vert, bface, shell = self._mesh_builtin(n, builtin, file)
      face = face if bface is None else bface
      nrm = _meshgen.normals(builtin, floats(n, "params"))
    elif file is not None:
      if n.get("vertex") is not None:
        raise n.error("repeated vertex specification (file and vertex)")
      vert, fface, uv, faceuv, nrm, facenrm = self._mesh_file(n, file)
      if face is not None and fface is not None and file.lower().endswith((".stl", ".msh")):
        raise n.error("repeated face specification (file and face)")
      if fface is None:
        uv = faceuv = None
      face = face if fface is None else fface
    else:
      vals = floats(n, "vertex")
      if vals is None:
        raise n.error("mesh needs a file or vertex data")
      if len(vals) % 3:
        raise n.error("vertex data must be a multiple of 3")
      vert = np.array(vals, np.float32).reshape(-1, 3)
    if n.get("texcoord") is not None:    # per-vertex texture coordinates (face indices shared)
      if uv is not None:
        raise n.error("repeated texcoord specification")
      vals = floats(n, "texcoord")
      if len(vals) != 2 * len(vert):
        raise n.error(f"texcoord must have 2 values per vertex ({2 * len(vert)}), got "
                      f"{len(vals)}")
      uv = np.array(vals, np.float32).reshape(-1, 2)
      faceuv = None if face is None else np.asarray(face, np.int32).copy()
    if n.get("normal") is not None:      # per-vertex normals (face indices shared)
      if nrm is not None:
        raise n.error("repeated normal specification")
      vals = floats(n, "normal")
      if len(vals) % 3:
        raise n.error("normal data must be a multiple of 3")
      nrm, facenrm = np.array(vals, np.float32).reshape(-1, 3), None
    try:
      self.meshes.append(_Obj(
          node=n, name=name, scale=rd.exact("scale", [1.0] * 3, 3),
          inertia=_builtin_inertia(shell, rd.kw("inertia", _mesh.INERTIA,
                                                _mesh.INERTIA["legacy"])),
          maxhullvert=rd.int("maxhullvert", -1), raw=(vert, face)))
    except _mesh.MeshError as e:
      raise n.error(str(e)) from None
    mh = self.meshes[-1].maxhullvert
    if mh != -1 and mh < 4:
      raise n.error("maxhullvert must be larger than 3")
    self.meshes[-1].refpos = rd.exact("refpos", [0.0] * 3, 3)
    self.meshes[-1].refquat = rd.exact("refquat", [1.0, 0.0, 0.0, 0.0], 4)
    self.meshes[-1].compiled = None
    self.meshes[-1].texcoord, self.meshes[-1].facetexcoord = uv, faceuv
    self.meshes[-1].normal, self.meshes[-1].facenormal = nrm, facenrm   # None: MakeNormal's
    self.meshes[-1].smoothnormal = rd.kw("smoothnormal", _BOOL, False)
    self.meshes[-1].reorient = not plugin
    if plugin and self.meshes[-1].scale != [1.0, 1.0, 1.0]:
      raise n.error(f"attribute scale is not compatible with SDFs in mesh '{name}'")

  def _mesh_sdf(self, n, plugin, builtin, file, face):
    """(vert, face, normal) of a mesh made from an SDF plugin instance by marching cubes, as
    mjCMesh::LoadSDF (engine/mjcf/_plugin.py, engine/mjcf/_mesh.py sdf_mesh)."""
    if len(plugin) > 1:
      raise plugin[1].error("a mesh takes one plugin")
    if builtin is not None or file is not None or n.get("vertex") is not None or face is not None:
      raise n.error("a mesh made from an SDF plugin cannot also have builtin, file, vertex or "
                    "face data")
    inst = _plugin.resolve(plugin[0], self.plugins, self.plugin_declared,
                           self.plugin_implicit)
    try:
      return _mesh.sdf_mesh(lambda p: _plugin.distance(inst.kind, inst.attr, p),
                            _plugin.aabb(inst.kind, inst.attr))
    except _mesh.MeshError as e:
      raise n.error(str(e)) from None

  def _mesh_builtin(self, n, builtin, file):
    """(vert, face or None, shell) of <mesh builtin=... params=...> (engine/mjcf/_meshgen.py)."""
    if file is not None or n.get("vertex") is not None:
      raise n.error("a builtin mesh cannot also have a file or vertex data")
    if builtin not in _meshgen.TYPES:
      raise n.error(f"attribute 'builtin': invalid value '{builtin}' (expected one of "
                    f"{', '.join(_meshgen.TYPES)})")
    params = floats(n, "params")
    if params is None:
      raise n.error(f"builtin mesh '{builtin}' needs the 'params' attribute")
    try:
      return _meshgen.make(builtin, params)
    except _mesh.MeshError as e:
      raise n.error(str(e)) from None

  def _mesh_file(self, n, file):
    """A mesh file, parsed (`_asset_bytes` finds it)."""
    data = self._asset_bytes(n, file, "mesh")
    try:
      return _mesh.read_file(file, data)
    except _mesh.MeshError as e:
      raise n.error(str(e)) from None

  def _asset_bytes(self, n, file, what, assetdir=None):
    """Bytes of an asset file: from `assets`, else `assetdir` (meshdir unless given) relative to
    the model's directory."""
    if self.strippath:
      file = os.path.basename(file.replace("\\", "/"))
    assetdir = self.meshdir if assetdir is None else assetdir
    rel = os.path.join(assetdir, file) if assetdir else file
    for key in (file, rel, os.path.normpath(rel)):
      if self.assets and key in self.assets:
        data = self.assets[key]
        break
    else:
      root_file = self.root.file if self.root.file and not self.root.file.startswith("<") else ""
      path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(root_file))
                                           if root_file else os.getcwd(), rel))
      if why := _limits.unreadable(path, f"{what} file '{file}'"):
        raise n.error(why)
      with open(path, "rb") as f:
        data = f.read()
    if isinstance(data, str):
      data = data.encode()
    return data

  def _mesh_compiled(self, mid):
    """The compiled mesh `mid` (compiled once, on first use; its hull graph only where the
    compile needs it: no faces, or inertia='convex')."""
    me = self.meshes[mid]
    if me.compiled is None:
      vert, face = me.raw
      try:
        me.compiled = _mesh.compile_mesh(vert, face, me.scale, me.refpos, me.refquat,
                                         me.inertia, me.maxhullvert, needhull=False,
                                         reorient=me.reorient)
      except _mesh.MeshError as e:
        raise me.node.error(f"mesh '{me.name}': {e}") from None
    return me.compiled

  def _mesh_hull(self, mid):
    """The hull graph of mesh `mid`, made when a colliding geom or a pair needs it (as
    MuJoCo's needhull): a flat mesh that only draws or is fitted needs none."""
    cm = self._mesh_compiled(mid)
    if cm["graph"] is None:
      me = self.meshes[mid]
      try:
        cm["graph"] = _mesh.make_graph(np.asarray(me.raw[0], np.float64), me.maxhullvert,
                                       me.scale[0] * me.scale[1] * me.scale[2] > 0)
      except _mesh.MeshError as e:
        raise me.node.error(f"mesh '{me.name}': {e}") from None
    return cm["graph"]

  def _hfield(self, n):
    """<hfield>: elevation from a PNG or MuJoCo's binary file, or nrow/ncol (+ elevation)."""
    rd = _Reader(n, None)
    file = rd.str("file")
    name = n.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
    size = rd.exact("size", [0.0] * 4, 4)
    if not rd.has("size") or any(x <= 0 for x in size):
      raise n.error("hfield size: 4 positive values required (radius x, radius y, "
                    "elevation z, base z)")
    nrow, ncol = rd.int("nrow", 0), rd.int("ncol", 0)
    if nrow < 0 or ncol < 0:
      raise n.error("hfield nrow and ncol must not be negative")
    data = None
    if file is not None:
      if nrow or ncol or rd.has("elevation"):
        raise n.error("hfield specified from file and manually")
      nrow, ncol, data = self._hfield_file(n, file, rd.str("content_type"))
    else:
      if nrow < 1 or ncol < 1:
        raise n.error("hfield not specified: give 'file', or 'nrow' and 'ncol'")
      _limits.check_samples(n, f"hfield of {nrow} x {ncol}", nrow * ncol)
      data = np.zeros((nrow, ncol), np.float32)
      if rd.has("elevation"):
        vals = np.array(floats(n, "elevation"), np.float32)
        if vals.size != nrow * ncol:
          raise n.error("elevation data length must match nrow*ncol")
        data = vals.reshape(nrow, ncol)[::-1]   # the XML is top-to-bottom, the model bottom-up
    if nrow < 2 or ncol < 2:
      raise n.error("hfield needs at least 2 rows and 2 columns")
    data = np.ascontiguousarray(data, np.float32).reshape(-1)
    lo, hi = data.min(), data.max()
    data = data - lo
    if float(hi) - float(lo) > rotation.EPS:
      data = data / (hi - lo)
    self.hfields.append(_Obj(node=n, name=name, size=size, nrow=nrow, ncol=ncol, data=data))

  def _hfield_file(self, n, file, content_type):
    """(nrow, ncol, data bottom row first) of a PNG (gray = red channel, as lodepng) or of
    MuJoCo's binary format (int32 nrow, ncol, float32 data)."""
    raw = self._asset_bytes(n, file, "hfield")
    kind = content_type or ("image/png" if file.lower().endswith(".png")
                            else "image/vnd.mujoco.hfield")
    if kind == "image/png":
      import io as _io
      from PIL import Image
      try:
        img = Image.open(_io.BytesIO(raw))
        img.load()
      except Exception as e:  # noqa: BLE001 - any decoder error names the file
        raise n.error(f"cannot read PNG '{file}': {e}") from None
      if img.mode in ("I;16", "I;16B", "I"):
        gray = (np.asarray(img, np.uint32) >> 8).astype(np.float32)
      else:
        gray = np.asarray(img.convert("RGBA"), np.float32)[:, :, 0]
      return gray.shape[0], gray.shape[1], gray[::-1]
    if kind != "image/vnd.mujoco.hfield":
      raise n.error(f"unsupported content type: '{kind}'")
    if len(raw) < 8:
      raise n.error(f"hfield missing header '{file}'")
    nrow, ncol = (int(v) for v in np.frombuffer(raw[:8], np.int32))
    if nrow < 1 or ncol < 1:
      raise n.error(f"non-positive hfield dimensions in file '{file}'")
    if len(raw) != 8 + 4 * nrow * ncol:
      raise n.error(f"unexpected file size in file '{file}'")
    return nrow, ncol, np.frombuffer(raw[8:], np.float32).reshape(nrow, ncol)

  def _geom_hfield(self, n, g):
    """Height field geom: size and bounds come from the asset, as mjCGeom::Compile."""
    name = n.get("hfield")
    for i, h in enumerate(self.hfields):
      if h.name == name:
        break
    else:
      raise n.error(f"unknown hfield '{name}'")
    hs = h.size
    g.dataid = i
    g.size = [hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]]
    g.rbound = math.sqrt(hs[0] * hs[0] + hs[1] * hs[1] + max(hs[2] * hs[2], hs[3] * hs[3]))
    lo, hi = [-hs[0], -hs[1], -hs[3]], [hs[0], hs[1], hs[2]]
    g.aabb = [(lo[k] + hi[k]) / 2 for k in range(3)] + [(hi[k] - lo[k]) / 2 for k in range(3)]

  def _geom_meshid(self, rd, n):
    """Id of the mesh a geom names (type mesh, or a primitive fitted to it)."""
    name = rd.str("mesh")
    if name is None:
      raise n.error("mesh geom must have a 'mesh' attribute")
    for i, me in enumerate(self.meshes):
      if me.name == name:
        break
    else:
      raise n.error(f"unknown mesh '{name}'")
    if rd.has("fromto"):
      raise n.error("fromto cannot be used with mesh geom")
    return i

  def _geom_fit(self, rd, n, g):
    """A primitive geom with mesh=: sized to the mesh's inertia box (or, with compiler
    fitaabb, its bounding box) times fitscale and placed in its frame (mjCMesh::FitGeom);
    the geom keeps no reference to the mesh, but takes its material."""
    i = self._geom_meshid(rd, n)
    if g.type in (0, 1):
      raise n.error("invalid geom type in fitting mesh (sphere, capsule, cylinder, "
                    "ellipsoid or box)")
    me, cm = self.meshes[i], self._mesh_compiled(i)
    g.meshid = i
    g.size, center = _mesh.fit_geom(cm, g.type, g.size, self.fitaabb, rd.num("fitscale", 1.0))
    if rd.str("material") is None and me.node.get("material") is not None:
      g.matid = self._matid(_Reader(me.node, None), me.node)   # the mesh's material
    meshpos = [a + b for a, b in zip(rotation.rot_vec_quat(center, cm["quat"]), cm["pos"])]
    g.pos, g.quat = rotation.frameaccum(g.pos, g.quat, meshpos, cm["quat"])
    _surfacevel_to_mesh_frame(g, meshpos, cm["quat"])

  def _geom_plugin(self, n, g):
    """The SDF plugin instance of a geom (`<plugin>` child), or None (an sdf geom without one
    uses the octree SDF of its mesh)."""
    plugin = [c for c in n.children if c.tag == "plugin"]
    if len(plugin) > 1:
      raise plugin[1].error("a geom takes one plugin")
    if g.type != 8:
      if plugin:
        raise plugin[0].error("only sdf geoms take a plugin")
      return None
    if not plugin:
      return None
    return _plugin.resolve(plugin[0], self.plugins, self.plugin_declared,
                           self.plugin_implicit)

  def _geom_mesh(self, rd, n, g):
    """Mesh geom: its mesh id, the mesh frame folded into the geom frame, size and bounds."""
    i = self._geom_meshid(rd, n)
    me = self.meshes[i]
    if rd.kw("shellinertia", _BOOL, False):
      raise n.error("for mesh geoms, inertia should be specified in the mesh asset")
    cm = self._mesh_compiled(i)
    if g.type == 8 and g.plugin is None and not me.reorient:
      raise n.error(f"sdf geom without a plugin on mesh '{me.name}', which is made from an "
                    "SDF plugin and has no octree (give the geom the mesh's <plugin>)")
    g.dataid = g.meshid = i
    if rd.str("material") is None and me.node.get("material") is not None:
      g.matid = self._matid(_Reader(me.node, None), me.node)   # the mesh's material
    g.pos, g.quat = rotation.frameaccum(g.pos, g.quat, cm["pos"], cm["quat"])
    _surfacevel_to_mesh_frame(g, cm["pos"], cm["quat"])
    a = cm["aamm"]
    g.size = [max(abs(a[k]), abs(a[k + 3])) for k in range(3)]
    g.aabb = ([(a[k] + a[k + 3]) / 2 for k in range(3)]
              + [(a[k + 3] - a[k]) / 2 for k in range(3)])
    g.rbound = math.sqrt(sum(s * s for s in g.size))
    return cm


def _is_ktx(file, content_type):
  return content_type == "image/ktx" or (not content_type and file.lower().endswith(".ktx"))


def _builtin_inertia(shell, inertia):
  """A mesh's inertia type: flat builtin meshes switch to 'shell' (the plate always, 4.0's
  flat flexcomp shapes only from 'legacy')."""
  if shell is True or (shell == "legacy" and inertia == _mesh.INERTIA["legacy"]):
    return _mesh.INERTIA["shell"]
  return inertia


def mesh_geom_inertia(boxsz, mass):
  """Diagonal inertia of a mesh geom: its mesh's equivalent inertia box (mjCGeom::SetInertia)."""
  b = boxsz
  return [mass * (b[1] * b[1] + b[2] * b[2]) / 3, mass * (b[0] * b[0] + b[2] * b[2]) / 3,
          mass * (b[0] * b[0] + b[1] * b[1]) / 3]


def _surfacevel_to_mesh_frame(g, meshpos, mquat):
  """Re-express a geom's surfacevel in its compiled frame, which absorbed the mesh frame
  (meshpos, mquat): the angular origin moves to meshpos (v += w x meshpos), both parts rotate
  by the inverse mesh orientation (mjCGeom::Compile)."""
  sv = g.surfacevel
  if not any(sv):
    return
  w = sv[3:6]
  v = [sv[0] + w[1] * meshpos[2] - w[2] * meshpos[1], sv[1] + w[2] * meshpos[0] - w[0] * meshpos[2],
       sv[2] + w[0] * meshpos[1] - w[1] * meshpos[0]]
  inv = [mquat[0], -mquat[1], -mquat[2], -mquat[3]]
  g.surfacevel = list(rotation.rot_vec_quat(v, inv)) + list(rotation.rot_vec_quat(w, inv))
