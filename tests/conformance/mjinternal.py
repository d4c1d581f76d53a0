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
