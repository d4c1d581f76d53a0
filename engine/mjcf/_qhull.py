"""Qhull's own hull records for a mesh's `mesh_graph`, through libqhull_r (cmeel-qhull).

MuJoCo's mjCMesh::MakeGraph (src/user/user_mesh.cc) runs Qhull with "qhull Qt" on the mesh's
vertices, triangulates, builds the vertex neighbour sets (qh_vertexneighbors), and then writes
the graph in Qhull's internal orders: hull vertices in `qh.vertex_list` order, each vertex's
edges in the order of its neighbour facets and their vertex sets, faces in `qh.facet_list`
order with the first two corners swapped on `toporient` facets. That vertex order is where the
hill climbs over the graph start and which of several equally deep vertices they keep, so a
hull in any other order breaks ties (a face lying exactly flat on a plane) differently from
MuJoCo. scipy's Qhull hides those lists (its extension exports no Qhull symbol), so this module
calls the shared libqhull_r that the cmeel-qhull wheel ships (Qhull 2020.2) with ctypes and
reads the lists from Qhull's structs.

The struct offsets below are those of Qhull 2020.2's libqhull_r.h on LP64 platforms (Linux,
macOS); tests/test_mesh_hull_order.py checks the graphs against MuJoCo's. `hull_records`
returns None where that library is not installed (there is no Windows wheel) or is another
version, and the caller then builds the graph from scipy's hull in point-id order.
"""
import ctypes
import os
import sys
import tempfile
import threading

import numpy as np

# libqhull_r.h of Qhull 2020.2 (cmeel-qhull 8.0.2.x) on LP64: byte offsets of the fields read
_VERSION = "8.0.2"
_SIZEOF_QHT = 8768
_QH_FACET_LIST, _QH_VERTEX_LIST = 2456, 2544
_FACET_NEXT, _FACET_VERTICES = 56, 64
_FACET_TOPORIENT_BYTE, _FACET_TOPORIENT_MASK = 113, 16
_VERTEX_NEXT, _VERTEX_POINT, _VERTEX_NEIGHBORS = 0, 16, 24
_SET_ELEMENTS = 8           # setT: int maxsize; then the NULL-terminated element array
_PTR = ctypes.sizeof(ctypes.c_void_p)

_lock = threading.Lock()
_lib = None
_tried = False


class QhullError(Exception):
  """Qhull refused the points; the message is Qhull's first line."""


def _library():
  """The loaded libqhull_r and libc, or None where cmeel-qhull is absent or not LP64."""
  global _lib, _tried
  with _lock:
    if _tried:
      return _lib
    _tried = True
    if sys.platform == "win32" or _PTR != 8:
      return None
    try:
      import importlib.metadata as md
      if not md.version("cmeel-qhull").startswith(_VERSION):
        return None   # the offsets below are this version's
      files = md.files("cmeel-qhull") or []
    except Exception:
      return None
    names = ("libqhull_r.so", "libqhull_r.dylib")
    path = next((str(f.locate()) for f in files if os.path.basename(str(f)) in names), None)
    if path is None or not os.path.exists(path):
      return None
    try:
      qh = ctypes.CDLL(path)
      libc = ctypes.CDLL(None)
    except OSError:
      return None
    vp, ip = ctypes.c_void_p, ctypes.c_int
    qh.qh_zero.argtypes = [vp, vp]
    qh.qh_new_qhull.argtypes = [vp, ip, ip, vp, ip, ctypes.c_char_p, vp, vp]
    qh.qh_new_qhull.restype = ip
    qh.qh_vertexneighbors.argtypes = [vp]
    qh.qh_pointid.argtypes = [vp, vp]
    qh.qh_pointid.restype = ip
    qh.qh_freeqhull.argtypes = [vp, ip]
    qh.qh_memfreeshort.argtypes = [vp, ctypes.POINTER(ip), ctypes.POINTER(ip)]
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fopen.restype = vp
    libc.fclose.argtypes = [vp]
    _lib = (qh, libc)
    return _lib


def available():
  """Whether Qhull's own orders can be read on this machine."""
  return _library() is not None


def _ptr(addr):
  return ctypes.c_void_p.from_address(addr).value


def _set(addr):
  """The elements of a Qhull setT (NULL-terminated) at `addr`."""
  out = []
  if not addr:
    return out
  e = addr + _SET_ELEMENTS
  while True:
    p = _ptr(e)
    if not p:
      return out
    out.append(p)
    e += _PTR


def hull_records(points, options):
  """Run Qhull as mjCMesh::MakeGraph does: qh_new_qhull with `options` (which include "Qt",
  so qh_triangulate runs), then qh_vertexneighbors.

  Returns (vertices, neighbors, faces): the hull vertices' point ids in qh.vertex_list order;
  for each, its neighbour facets in set order, each facet a tuple of point ids in set order;
  and the facets in qh.facet_list order as (point ids in set order, toporient). None when the
  library is unavailable. Raises QhullError with Qhull's message when Qhull fails."""
  lib = _library()
  if lib is None:
    return None
  qh, libc = lib
  pts = np.ascontiguousarray(points, np.float64)
  state = ctypes.create_string_buffer(_SIZEOF_QHT)
  fd, errpath = tempfile.mkstemp(prefix="numjoco-qhull-")
  os.close(fd)
  err = libc.fopen(errpath.encode(), b"w")
  try:
    qh.qh_zero(state, err)
    code = qh.qh_new_qhull(state, 3, len(pts), pts.ctypes.data, 0,
                           ("qhull " + options).encode(), None, err)
    try:
      if code:
        libc.fclose(err)
        err = None
        with open(errpath, errors="replace") as f:
          lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        raise QhullError(lines[0] if lines else f"exit code {code}")
      qh.qh_vertexneighbors(state)
      base = ctypes.addressof(state)
      first, stride = pts.ctypes.data, 3 * pts.itemsize

      def pid(vertex):
        """qh_pointid: the input points are Qhull's (no option here copies them)."""
        point = _ptr(vertex + _VERTEX_POINT)
        k, r = divmod(point - first, stride)
        return k if r == 0 and 0 <= k < len(pts) else qh.qh_pointid(state, point)

      faces, corners = [], {}
      facet = _ptr(base + _QH_FACET_LIST)
      while facet and _ptr(facet + _FACET_NEXT):
        ids = tuple(pid(v) for v in _set(_ptr(facet + _FACET_VERTICES)))
        corners[facet] = ids
        top = ctypes.c_ubyte.from_address(facet + _FACET_TOPORIENT_BYTE).value
        faces.append((ids, bool(top & _FACET_TOPORIENT_MASK)))
        facet = _ptr(facet + _FACET_NEXT)
      vertices, neighbors = [], []
      vertex = _ptr(base + _QH_VERTEX_LIST)
      while vertex and _ptr(vertex + _VERTEX_NEXT):
        vertices.append(pid(vertex))
        neighbors.append([corners[f] for f in _set(_ptr(vertex + _VERTEX_NEIGHBORS))])
        vertex = _ptr(vertex + _VERTEX_NEXT)
      return vertices, neighbors, faces
    finally:
      qh.qh_freeqhull(state, 0)
      a, b = ctypes.c_int(), ctypes.c_int()
      qh.qh_memfreeshort(state, ctypes.byref(a), ctypes.byref(b))
  finally:
    if err:
      libc.fclose(err)
    os.unlink(errpath)
