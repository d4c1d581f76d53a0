"""GMSH mesh files (.msh, format 2.2 or 4.1, ASCII or binary) for <flexcomp type="gmsh">.

Read as MuJoCo's flexcomp reader reads them (mjCFlexcomp::LoadGMSH): one block of nodes
and one block of elements (lines, triangles or tetrahedra), node tags turned into 0-based ids.
Returns (points (n*3 floats), elements (ints), dim).
"""
import struct


class GmshError(ValueError):
  """A malformed GMSH file (the caller names the element)."""


def _find(data, key):
  """Offset of `key` in `data` (-1 when absent)."""
  return data.find(key)


def read_gmsh(data):
  """(points, elements, dim) of the GMSH file bytes `data`."""
  if not data:
    raise GmshError("Empty GMSH file")
  if not data.startswith(b"$MeshFormat"):
    raise GmshError("GMSH file must begin with $MeshFormat")
  try:
    head = data[11:64].split()
    version, binary = float(head[0]), int(head[1])
  except (IndexError, ValueError):
    raise GmshError("Could not read GMSH file header") from None
  if round(100 * version) not in (220, 410):
    raise GmshError("Only GMSH file format versions 4.1 and 2.2 are supported")
  nb, ne = _find(data, b"$Nodes"), _find(data, b"$EndNodes")
  eb, ee = _find(data, b"$Elements"), _find(data, b"$EndElements")
  if nb < 0:
    raise GmshError("GMSH file missing $Nodes")
  if eb < 0:
    raise GmshError("GMSH file missing $Elements")
  nb += len("$Nodes") + 1
  eb += len("$Elements") + 1
  if ne < nb:
    raise GmshError("GMSH file missing $EndNodes after $Nodes")
  if ee < eb:
    raise GmshError("GMSH file missing $EndElements after $Elements")
  nodes, elems = data[nb:ne], data[eb:ee]
  if round(100 * version) == 410:
    return _gmsh41(nodes, elems, binary)
  return _gmsh22(nodes, elems, binary)


def _ints(tokens, n, what):
  try:
    vals = [int(next(tokens)) for _ in range(n)]
  except (StopIteration, ValueError):
    raise GmshError(f"Error reading {what}") from None
  return vals


def _gmsh41(nodes, elems, binary):
  """Points, elements and dim of a format 4.1 file's node and element sections."""
  if not binary:
    tok = iter(nodes.split())
    nblock, nnode, mintag, maxtag, edim, _, _, ninblock = _ints(tok, 8, "Nodes header")
    if nblock != 1 or nnode != ninblock:
      raise GmshError("All nodes must be in single block")
    if maxtag != ninblock:
      raise GmshError("Maximum number of nodes must be equal to number of nodes in a block")
    if not 1 <= edim <= 3:
      raise GmshError("Entity must be 1D, 2D or 3D")
    for i in range(nnode):
      try:   # as an istream reads an integer: a coordinate's integer part
        text = next(tok)
        tag = int(float(text))
      except (StopIteration, ValueError):
        raise GmshError("Error reading node tags") from None
      if tag != i + mintag or text != str(tag).encode():
        raise GmshError("Node tags must be sequential")
    try:
      points = [float(next(tok)) for _ in range(3 * nnode)]
    except (StopIteration, ValueError):
      raise GmshError("Error reading node coordinates") from None
    tok = iter(elems.split())
    nblock, nelem, _, _, dim, _, etype, ninblock = _ints(tok, 8, "Elements header")
  else:
    if len(nodes) < 52:
      raise GmshError("Invalid nodes header")
    nblock, nnode, mintag, maxtag = struct.unpack_from("<4Q", nodes, 0)
    edim, _, _ = struct.unpack_from("<3i", nodes, 32)
    ninblock, = struct.unpack_from("<Q", nodes, 44)
    if nblock != 1 or nnode != ninblock:
      raise GmshError("All nodes must be in single block")
    if not 1 <= edim <= 3:
      raise GmshError("Entity must be 1D, 2D or 3D")
    if len(nodes) < 52 + nnode * 32:
      raise GmshError("Insufficient byte size of Nodes")
    tags = struct.unpack_from(f"<{nnode}Q", nodes, 52)
    if any(tag != i + mintag for i, tag in enumerate(tags)):
      raise GmshError("Node tags must be sequential")
    points = list(struct.unpack_from(f"<{3 * nnode}d", nodes, 52 + 8 * nnode))
    if len(elems) < 52:
      raise GmshError("Invalid elements header")
    nblock, nelem = struct.unpack_from("<2Q", elems, 0)
    dim, _, etype = struct.unpack_from("<3i", elems, 32)
    ninblock, = struct.unpack_from("<Q", elems, 44)
  if nblock != 1 or nelem != ninblock:
    raise GmshError("All elements must be in single block")
  if dim != edim:
    raise GmshError("Inconsistent dimensionality in Elements")
  if {1: 1, 2: 2, 3: 4}[dim] != etype:
    raise GmshError("Element type inconsistent with dimensionality")
  element = []
  if not binary:
    for _ in range(nelem):
      vals = _ints(tok, dim + 2, "Elements")
      element += [v - mintag for v in vals[1:]]
  else:
    size = (dim + 2) * 8
    if len(elems) < 52 + nelem * size:
      raise GmshError("Insufficient byte size of Elements")
    vals = struct.unpack_from(f"<{nelem * (dim + 2)}Q", elems, 52)
    for i in range(nelem):
      element += [v - mintag for v in vals[i * (dim + 2) + 1:(i + 1) * (dim + 2)]]
  return points, element, edim


_TYPES22 = {2: (2, 3), 4: (3, 4)}   # element type -> (dim, nodes)


def _header22(block, what):
  """A 2.2 section's first line must be a plain count (IsValidElementOrNodeHeader22)."""
  line = block.split(b"\n", 1)[0].rstrip(b"\r")
  if not line.isdigit():
    raise GmshError(f"Invalid {what} header")


def _gmsh22(nodes, elems, binary):
  """Points, elements and dim of a format 2.2 file's node and element sections."""
  if not binary:
    _header22(nodes, "node")
    _header22(elems, "elements")
    tok = iter(nodes.split())
    nnode, = _ints(tok, 1, "Nodes header")
    points = []
    for _ in range(nnode):
      _ints(tok, 1, "node tags")
      try:
        points += [float(next(tok)) for _ in range(3)]
      except (StopIteration, ValueError):
        raise GmshError("Error reading node coordinates") from None
    tok = iter(elems.split())
    nelem, = _ints(tok, 1, "Elements header")
    element, dim = [], 0
    for i in range(nelem):
      _, etype, ntag = _ints(tok, 3, "Elements")
      if i == 0:
        if etype not in _TYPES22:
          raise GmshError("Invalid number of node tags")
        dim, nn = _TYPES22[etype]
      _ints(tok, ntag, "Elements")
      for v in _ints(tok, nn, "Elements"):
        if v > nnode or v < 1:
          raise GmshError("Invalid node tag")
        element.append(v - 1)
    return points, element, dim
  line = nodes[:10].split(b"\n")[0]
  try:
    nnode = int(line)
  except ValueError:
    raise GmshError("Invalid number of nodes") from None
  off = len(line) + 1   # past the count's line end
  if len(nodes) < 4 + nnode * 28:
    raise GmshError("Insufficient byte size of Nodes")
  points = []
  for i in range(nnode):
    points += struct.unpack_from("<3d", nodes, off + i * 28 + 4)
  line = elems[:10].split(b"\n")[0]
  try:
    nelem = int(line)
  except ValueError:
    raise GmshError("Invalid number of elements") from None
  off = len(line) + 1
  etype, _, ntag = struct.unpack_from("<3i", elems, off)
  if etype not in _TYPES22:
    raise GmshError("Invalid number of node tags")
  dim, nn = _TYPES22[etype]
  element = []
  if ntag > 0:    # gmsh: per element (type, count, tags) header then tag, 2 tags, nodes
    size = (6 + nn) * 4
    for i in range(nelem):
      element += [v - 1 for v in struct.unpack_from(f"<{nn}i", elems, off + i * size + 24)]
  else:           # fTetWild: one header, then tag and nodes per element
    first = struct.unpack_from(f"<{nn}i", elems, off + 16)
    element += [v - 1 for v in first]
    size = (1 + nn) * 4
    for i in range(nelem - 1):
      element += [v - 1 for v in
                  struct.unpack_from(f"<{nn}i", elems, off + 24 + i * size + 12)]
  if any(v < 0 or v >= nnode for v in element):
    raise GmshError("Invalid node tag")
  return points, element, dim
