"""MJCF `<replicate>`: expand each one into `count` frames of namespaced copies, as MuJoCo does.

Replica i sits in a frame whose position accumulates `offset` in the previous replica's frame
and whose orientation is `euler` applied i times (computed from i*euler, as MuJoCo does for
precision). Every named element in the copy gets the suffix `sep` + i, zero-padded to the
digits of `count`; nested replicates append the inner suffix first. Elements of the other
sections (tendons, actuators, sensors, equalities, contact pairs/excludes) that refer to a name
inside the replicated tree are removed from where they stood and re-appended at the end of their
section once per replica, referring to that replica's names. Keyframes are not replicated.

As MuJoCo (which attaches one replica after the other), sensors that refer to nothing
(e.g. `clock`) are copied once per replica too, the copies made for earlier replicas included:
a clock `clk` under count 3 becomes clk, clk0, clk1, clk01, clk2, clk02, clk12, clk012.
"""
import math

from numjoco.engine import rotation
from numjoco.engine.mjcf import _limits

# attributes that name another element (tendon path children included)
_REF_KEYS = ("joint", "joint1", "joint2", "jointinparent", "tendon", "tendon1", "tendon2",
             "site", "site1", "site2", "refsite", "cranksite", "slidersite", "sidesite",
             "body", "body1", "body2", "geom", "geom1", "geom2", "objname", "refname",
             "target", "actuator")
_SECTIONS = ("tendon", "actuator", "sensor", "equality", "contact")
FLEX_BASE = "_flex_base"   # a replicated flexcomp's own name (before the replica suffixes)


def _copy(node, parent, suffix, names):
  """Deep copy of `node` with names in `names` suffixed (its own and references)."""
  from numjoco.engine.mjcf._node import Node
  attrib = dict(node.attrib)
  if node.tag == "flexcomp" and attrib.get("name"):
    # MuJoCo replicates the bodies a flexcomp made: their names take the suffix after the
    # vertex number (f_1 -> f_10), engine/mjcf/_flexcomp.py reads the unsuffixed name here
    attrib.setdefault(FLEX_BASE, attrib["name"])
  if "name" in attrib and attrib["name"]:
    attrib["name"] += suffix
  for key in _REF_KEYS:
    if key in attrib and attrib[key] in names:
      attrib[key] += suffix
  c = Node(node.tag, attrib, node.file, node.line, parent)
  c.children = [_copy(k, c, suffix, names) for k in node.children]
  return c


def _size(node):
  return 1 + sum(_size(k) for k in node.children)


class _Budget:
  """Elements made so far by the expansion, refused past _limits.MAX_REPLICATED."""

  def __init__(self):
    self.made = 0

  def spend(self, node, n):
    self.made += n
    if self.made > _limits.MAX_REPLICATED:
      raise node.error(f"replicate would make more than {_limits.MAX_REPLICATED} elements "
                       f"(count {node.get('count')}), more than numjoco expands")


def _names(node, out):
  if node.get("name"):
    out.add(node.get("name"))
  for c in node.children:
    _names(c, out)
  return out


def _refers(node, names):
  if any(node.attrib.get(k) in names for k in _REF_KEYS):
    return True
  return any(_refers(c, names) for c in node.children)


def _refless(node):
  """True for an element that names no other element (a clock sensor)."""
  return not any(node.attrib.get(k) for k in _REF_KEYS) and all(map(_refless, node.children))


def _compiler(root):
  degree, seq = True, "xyz"
  for c in root.children:
    if c.tag == "compiler":
      degree = {"degree": True, "radian": False}.get(c.get("angle"), degree)
      seq = c.get("eulerseq", seq)
  return degree, seq


def _flexcomp_outside_body(node):
  """MuJoCo builds a replica in an unnamed body: a flexcomp not inside a body of the
  replicate (frames do not count) has no named parent."""
  for k in node.children:
    if k.tag == "flexcomp":
      raise k.error("Parent body must have name")
    if k.tag == "frame":
      _flexcomp_outside_body(k)


def expand(root):
  """Replace every <replicate> below `root` (in document order, inner ones first)."""
  from numjoco.engine.mjcf._node import Node, floats, number, warn
  degree, seq = _compiler(root)
  sections = [c for c in root.children if c.tag in _SECTIONS]
  budget = _Budget()

  def walk(node):
    i = 0
    while i < len(node.children):
      c = node.children[i]
      if c.tag != "replicate":
        walk(c)
        i += 1
        continue
      walk(c)   # inner replicates first
      for key in c.attrib:
        if key == "prefix":   # not in MuJoCo's schema; MuJoCo ignores it (names keep `sep`)
          warn(c, "attribute 'prefix' is ignored, as MuJoCo ignores it (use 'sep')")
        elif key not in ("count", "offset", "euler", "sep", "childclass"):
          raise c.error(f"unknown attribute '{key}'")
      count = number(c, "count", integer=True)
      if count is None:
        raise c.error("missing attribute 'count'")
      if count < 1:
        raise c.error("attribute 'count' must be positive")
      for k in c.children:
        if k.tag in ("joint", "freejoint", "inertial"):
          raise k.error(f"<{k.tag}> cannot be a direct child of <replicate>: wrap it in a body")
      _flexcomp_outside_body(c)
      offset = floats(c, "offset", 3) or [0.0, 0.0, 0.0]
      euler = floats(c, "euler", 3) or [0.0, 0.0, 0.0]
      sep = c.get("sep", "")
      step = rotation.orientation("euler", euler, degree, seq)
      names = set()
      for k in c.children:
        _names(k, names)
      digits = len(str(count))   # as MuJoCo: count 10 names b00 ... b09
      budget.spend(c, count * (1 + sum(_size(k) for k in c.children)))
      pos, frames = [0.0, 0.0, 0.0], []
      for r in range(count):
        turn = [r * e for e in euler]
        if not all(math.isfinite(x) for x in turn + pos):
          raise c.error(f"replica {r}'s frame is not finite (offset or euler too large)")
        q = rotation.orientation("euler", turn, degree, seq)
        suffix = sep + str(r).zfill(digits)
        attrib = {"pos": " ".join(repr(x) for x in pos), "quat": " ".join(repr(x) for x in q)}
        if c.get("childclass"):
          attrib["childclass"] = c.get("childclass")
        f = Node("frame", attrib, c.file, c.line, node)
        f.children = [_copy(k, f, suffix, names) for k in c.children]
        frames.append(f)
        pos, _ = rotation.frameaccum(pos, q, offset, step)   # offset turned by this replica's q
      node.children[i:i + 1] = frames
      i += len(frames)
      # referring elements of the other sections: one copy per replica, at the section's end;
      # and, as MuJoCo attaches each replica, a copy of every sensor that refers to
      # nothing (a clock), the copies made for earlier replicas included (clk, clk0, clk1,
      # clk01, ...)
      for sec in sections:   # document order: tendons replicated here rename actuators' refs
        refs = [k for k in sec.children if _refers(k, names)]
        loose = sec.tag == "sensor" and any(_refless(k) for k in sec.children)
        if not refs and not loose:
          continue
        for k in refs:
          _names(k, names)
        template = {id(k) for k in refs}
        for r in range(count):
          suffix = sep + str(r).zfill(digits)
          budget.spend(c, sum(_size(k) for k in sec.children
                              if id(k) in template or (loose and _refless(k))))
          sec.children.extend([_copy(k, sec, suffix, names) for k in sec.children
                               if id(k) in template or (loose and _refless(k))])
        sec.children = [k for k in sec.children if id(k) not in template]

  for c in root.children:
    if c.tag == "worldbody":
      walk(c)
  return root
