"""MuJoCo 4.0's internal (static) functions, called through ctypes: a reference for routines
whose 4.0 source we do not have.

The wheel's libmujoco keeps its ELF symbol table, local symbols included, so a static function
such as the GJK distance subalgorithm's S2D has a known offset from the library's exported
mjc_ccd. `function(name, restype, *argtypes)` returns it callable (System V calling
convention, which these plain C functions keep; checked by comparing results). Test and
diagnostic code only: nothing in engine/, render/ or app/ imports this.
"""
import ctypes
import functools
import os
import struct

import mujoco

LIB_PATH = os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so.%s" % mujoco.__version__)


@functools.lru_cache(maxsize=None)
def _symbols():
  """{name: value} of the function symbols in libmujoco's .symtab (ELF64, little endian)."""
  with open(LIB_PATH, "rb") as f:
    data = f.read()
  if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
    raise RuntimeError(f"{LIB_PATH}: not a little-endian ELF64 file")
  shoff, = struct.unpack_from("<Q", data, 0x28)
  shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
  sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
  out = {}
  for _, stype, _, _, off, size, link, _, _, entsize in sections:
    if stype != 2:   # SHT_SYMTAB
      continue
    stroff = sections[link][4]
    for k in range(size // entsize):
      name, info, _, _, value, _ = struct.unpack_from("<IBBHQQ", data, off + k * entsize)
      if info & 0xF == 2 and value:   # STT_FUNC
        end = data.index(b"\0", stroff + name)
        out[data[stroff + name:end].decode()] = value
  if not out:
    raise RuntimeError(f"{LIB_PATH}: no symbol table (stripped library)")
  return out


@functools.lru_cache(maxsize=None)
def _lib():
  return ctypes.CDLL(LIB_PATH)


def function(name, restype, *argtypes):
  """MuJoCo's function `name` (static ones included) as a ctypes function."""
  syms = _symbols()
  if name not in syms:
    raise KeyError(f"{name} is not in {LIB_PATH}'s symbol table")
  base = ctypes.cast(_lib().mjc_ccd, ctypes.c_void_p).value - syms["mjc_ccd"]
  return ctypes.CFUNCTYPE(restype, *argtypes)(base + syms[name])


_VEC = ctypes.POINTER(ctypes.c_double)


def _arr(v, n=3):
  return (ctypes.c_double * n)(*[float(x) for x in v])


def s1d(s1, s2):
  """4.0's S1D: barycentric coordinates of the point of segment s1s2 closest to the origin."""
  lam = (ctypes.c_double * 2)()
  function("S1D", None, _VEC, _VEC, _VEC)(lam, _arr(s1), _arr(s2))
  return tuple(lam)


def s2d(s1, s2, s3):
  """4.0's S2D: the same for triangle s1s2s3."""
  lam = (ctypes.c_double * 3)()
  function("S2D", None, _VEC, _VEC, _VEC, _VEC)(lam, _arr(s1), _arr(s2), _arr(s3))
  return tuple(lam)


def eig3(mat, tol):
  """4.0's compiler's mjuu_eig3 (Jacobi on a symmetric 3x3 `mat`, tolerance `tol`):
  (eigval, quat, eigvec, iterations)."""
  ev, vec, q = (ctypes.c_double * 3)(), (ctypes.c_double * 9)(), (ctypes.c_double * 4)()
  it = function("_Z9mjuu_eig3PdS_S_PKdd", ctypes.c_int, _VEC, _VEC, _VEC, _VEC,
                ctypes.c_double)(ev, vec, q, _arr(mat, 9), tol)
  return list(ev), list(q), list(vec), it


def sdf_geom_field(mjm, mjd, g, x, gtype):
  """4.0's static geomDistance and geomGradient (its SDF collider's field of a primitive geom) of
  geom g taken as type `gtype`, at point x of the geom's frame: (distance, gradient)."""
  p = ctypes.c_void_p
  dist = function("geomDistance", ctypes.c_double, p, p, p, ctypes.c_int, _VEC, ctypes.c_int)
  grad = function("geomGradient", None, _VEC, p, p, p, ctypes.c_int, _VEC, ctypes.c_int)
  out = _arr((0, 0, 0))
  grad(out, mjm._address, mjd._address, None, g, _arr(x), gtype)
  return dist(mjm._address, mjd._address, None, g, _arr(x), gtype), tuple(out)


def ccd(mjm, mjd, g1, g2, margin, iterations=None):
  """4.0's exported mjc_ccd on geoms g1, g2 of a compiled MjModel/MjData (their CCD objects
  made by mjc_initCCDObj with the pair margin, one contact): (dist, x1, x2), the penetration
  (negative) or distance and the witness points of geom 1 and 2. The status layout (dist at 8,
  x1 at 0x198, x2 at 0x648) is the reference source's mjCCDStatus, which 4.0's mjc_ccd keeps
  (read from its code)."""
  lib = _lib()
  lib.mjc_initCCDObj.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int, ctypes.c_double]
  lib.mjc_ccd.argtypes = [ctypes.c_void_p] * 4
  lib.mjc_ccd.restype = ctypes.c_double
  lib.mjc_ccdSize.argtypes = [ctypes.c_int] * 3
  lib.mjc_ccdSize.restype = ctypes.c_size_t
  k = int(mjm.opt.ccd_iterations if iterations is None else iterations)
  objs = [ctypes.create_string_buffer(4096) for _ in range(2)]   # mjCCDObj: under 1 kB
  for obj, g in zip(objs, (g1, g2)):
    lib.mjc_initCCDObj(obj, mjm._address, mjd._address, g, margin)
  buf = ctypes.create_string_buffer(lib.mjc_ccdSize(64, 64, k))
  config = struct.pack("<i4xdi4xdQii", k, mjm.opt.ccd_tolerance, 1, 0.0, ctypes.addressof(buf),
                       64, 64)
  status = ctypes.create_string_buffer(1 << 13)
  dist = lib.mjc_ccd(config, status, objs[0], objs[1])
  raw = status.raw
  return (dist, struct.unpack_from("<3d", raw, 0x198), struct.unpack_from("<3d", raw, 0x648))


# 4.0's mjCCDObj keeps its half of the GJK simplex: support points at 0xc8 (24 bytes each),
# their vertex ids at 0x128, the simplex size at 0x138; the support function at 0x1e8 and the
# id of the last support vertex at 0x88 (read from 4.0's polytope2/3, checked against them)
_OBJ_X, _OBJ_INDEX, _OBJ_NSIMPLEX, _OBJ_SUPPORT, _OBJ_VERTINDEX = 0xc8, 0x128, 0x138, 0x1e8, 0x88
_STATUS_TOLERANCE = 0xb00


def polytope(mjm, mjd, g1, g2, margin, tolerance, directions, nverts_max=64, nfaces_max=256):
  """4.0's EPA start (its static polytope2, polytope3 or polytope4, by the simplex size) from the
  simplex of the Minkowski supports of geoms g1, g2 in `directions` (2-4 unit vectors; the
  support of g2 taken in the opposite direction, as GJK's).

  Returns a dict: 'simplex' [(vert1, vert2, index1, index2)] as given, 'ret' (0 or 4.0's status
  code), 'nverts', 'nfaces', 'nmap', 'center', 'verts' [(vert, vert1, vert2, index1, index2)]
  for the first nverts + 1 slots (polytope2 keeps a candidate support one above), 'faces'
  [(v1, v2, v3, adj, v, dist2)] for the first nfaces, 'map' (face numbers), and 'simplex_after'
  (the simplex the objects hold afterwards, changed where one polytopeN handed over to
  another)."""
  lib = _lib()
  lib.mjc_initCCDObj.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int, ctypes.c_double]
  objs = [ctypes.create_string_buffer(4096) for _ in range(2)]
  for obj, g in zip(objs, (g1, g2)):
    lib.mjc_initCCDObj(obj, mjm._address, mjd._address, g, margin)
  support = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
  simplex = []
  for k, u in enumerate(directions):
    pts = []
    for obj, sign in zip(objs, (1.0, -1.0)):
      res, dv = (ctypes.c_double * 3)(), _arr([sign * x for x in u])
      support(struct.unpack_from("<Q", obj.raw, _OBJ_SUPPORT)[0])(
          ctypes.addressof(res), ctypes.addressof(obj), ctypes.addressof(dv))
      idx, = struct.unpack_from("<i", obj.raw, _OBJ_VERTINDEX)
      pts.append((tuple(res), idx))
    simplex.append((pts[0][0], pts[1][0], pts[0][1], pts[1][1]))
  for obj, side in zip(objs, (0, 1)):
    for k, s in enumerate(simplex):
      struct.pack_into("<3d", obj, _OBJ_X + 24 * k, *s[side])
      struct.pack_into("<i", obj, _OBJ_INDEX + 4 * k, s[2 + side])
    struct.pack_into("<i", obj, _OBJ_NSIMPLEX, len(simplex))
  verts = ctypes.create_string_buffer(nverts_max * 80)
  faces = ctypes.create_string_buffer(nfaces_max * 56)
  fmap = ctypes.create_string_buffer(nfaces_max * 8)
  pt = ctypes.create_string_buffer(0x100)
  struct.pack_into("<QiiQii", pt, 0, ctypes.addressof(verts), 0, 0, ctypes.addressof(faces), 0,
                   nfaces_max)
  struct.pack_into("<Qi", pt, 0x38, ctypes.addressof(fmap), 0)
  status = ctypes.create_string_buffer(1 << 13)
  struct.pack_into("<d", status, _STATUS_TOLERANCE, tolerance)
  p = ctypes.c_void_p
  n = len(simplex)
  if n == 2:
    ret = function("polytope2", ctypes.c_int, p, p, p, p)(pt, status, objs[0], objs[1])
  elif n == 3:
    ret = function("polytope3", ctypes.c_int, p, p, p, p, ctypes.c_int)(pt, status, objs[0],
                                                                       objs[1], 1)
  else:
    ret = function("polytope4", ctypes.c_int, p, p, p, p)(pt, status, objs[0], objs[1])
  nverts, = struct.unpack_from("<i", pt.raw, 0x08)
  nfaces, = struct.unpack_from("<i", pt.raw, 0x18)
  nmap, = struct.unpack_from("<i", pt.raw, 0x40)
  out = {"simplex": simplex, "ret": ret, "nverts": nverts, "nfaces": nfaces, "nmap": nmap,
         "center": struct.unpack_from("<3d", pt.raw, 0x20)}
  out["verts"] = []
  for i in range(min(nverts + 1, nverts_max)):
    v = struct.unpack_from("<9dii", verts.raw, 80 * i)
    out["verts"].append((v[0:3], v[3:6], v[6:9], v[9], v[10]))
  out["faces"] = []
  for i in range(nfaces):
    f = struct.unpack_from("<4i4d", faces.raw, 56 * i)
    out["faces"].append((f[0] & 0x3ff, (f[0] >> 10) & 0x3ff, (f[0] >> 20) & 0x3ff, f[1:4], f[4:7],
                         f[7]))
  base = ctypes.addressof(faces)
  out["map"] = [(struct.unpack_from("<Q", fmap.raw, 8 * i)[0] - base) // 56 for i in range(nmap)]
  nafter, = struct.unpack_from("<i", objs[0].raw, _OBJ_NSIMPLEX)
  out["simplex_after"] = [
      (struct.unpack_from("<3d", objs[0].raw, _OBJ_X + 24 * k),
       struct.unpack_from("<3d", objs[1].raw, _OBJ_X + 24 * k),
       struct.unpack_from("<i", objs[0].raw, _OBJ_INDEX + 4 * k)[0],
       struct.unpack_from("<i", objs[1].raw, _OBJ_INDEX + 4 * k)[0]) for k in range(nafter)]
  return out


def support(mjm, mjd, g, directions, margin=0.0):
  """4.0's support points of geom g (its mjCCDObj's support function, as GJK and EPA call it)
  in each unit direction, in order, on one object: a mesh's exhaustive support starts from
  the previous support vertex, so the order matters. Returns [(point, vertex id)]."""
  lib = _lib()
  lib.mjc_initCCDObj.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int, ctypes.c_double]
  obj = ctypes.create_string_buffer(4096)
  lib.mjc_initCCDObj(obj, mjm._address, mjd._address, g, margin)
  fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
      struct.unpack_from("<Q", obj.raw, _OBJ_SUPPORT)[0])
  out = []
  for u in directions:
    res, dv = (ctypes.c_double * 3)(), _arr(u)
    fn(ctypes.addressof(res), ctypes.addressof(obj), ctypes.addressof(dv))
    out.append((tuple(res), struct.unpack_from("<i", obj.raw, _OBJ_VERTINDEX)[0]))
  return out
