"""MJCF elements as read: `Node` (tag, attributes, children, source file and line), the located
errors and warnings (``file.xml:LINE: <tag name="...">: message``), attribute values
(`floats`, `number`, `keyword`, and `Reader` over a default class), and reading XML files with
their includes (`read`), leniently where MuJoCo's parser is.
"""
import math
import os

from lxml import etree

from numjoco.engine.mjcf import _limits

# the deepest element MuJoCo's XML reader (tinyxml2) accepts, the root being at level 1
MAX_DEPTH = 499
# integer attributes are C ints in MuJoCo
INT_MIN, INT_MAX = -2**31, 2**31 - 1


class MjcfError(ValueError):
  """An error in an MJCF model, located by file, line and element."""

  def __init__(self, node, msg, file=None, line=None):
    if node is not None:
      file, line = node.file, node.line
      name = node.attrib.get("name")
      elem = f"<{node.tag} name=\"{name}\">" if name else f"<{node.tag}>"
      text = f"{os.path.basename(file)}:{line}: {elem}: {msg}"
    else:
      text = f"{os.path.basename(file or '<string>')}:{line}: {msg}"
    super().__init__(text)
    self.file, self.line, self.node, self.msg = file, line, node, msg


class MjcfWarning(UserWarning):
  """Something in an MJCF model was ignored (it changes only the drawing, not the physics)."""


def warn(node, msg):
  """Warn about an ignored part of a model, located like `MjcfError`."""
  import warnings
  name = node.attrib.get("name")
  elem = f"<{node.tag} name=\"{name}\">" if name else f"<{node.tag}>"
  warnings.warn_explicit(f"{os.path.basename(node.file or '<string>')}:{node.line}: {elem}: "
                         f"{msg}", MjcfWarning, node.file or "<string>", node.line or 0)


class Node:
  """One MJCF element: tag, attributes (strings), children, source file and line."""

  __slots__ = ("tag", "attrib", "children", "file", "line", "parent")

  def __init__(self, tag, attrib, file, line, parent=None):
    self.tag, self.attrib, self.file, self.line = tag, dict(attrib), file, line
    self.children, self.parent = [], parent

  def get(self, key, default=None):
    return self.attrib.get(key, default)

  def error(self, msg):
    return MjcfError(self, msg)

  def __repr__(self):
    return f"Node({self.tag!r}, {self.file}:{self.line})"


# set by <attach> on a skin copied from an SKN file: the prefix its bones' body names take
SKIN_PREFIX = "_attach_prefix"


# ------------------------------------------------------------------------------------- reading

def _read_xml(text, file):
  # as MuJoCo's parser: UTF-8 whatever the declaration says, nesting up to MAX_DEPTH (_convert
  # checks it; libxml2 alone stops at 256 levels unless huge_tree)
  parser = etree.XMLParser(remove_comments=True, remove_pis=True, huge_tree=True,
                           encoding="utf-8")
  try:
    return etree.fromstring(text, parser)
  except etree.XMLSyntaxError as e:
    err = e
  fixed, notes = _lenient_xml(text)
  if notes:   # what MuJoCo's XML parser reads but a strict one does not
    try:
      root = etree.fromstring(fixed, parser)
    except etree.XMLSyntaxError:
      pass
    else:
      import warnings
      for line, what in notes:
        warnings.warn_explicit(f"{os.path.basename(file)}:{line}: {what}", MjcfWarning, file,
                               line)
      return root
  line = err.position[0] if err.position else err.lineno
  raise MjcfError(None, f"malformed XML: {err.msg}", file=file, line=line) from None


_NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")
_SPACE_NOTE = "attributes without a space between them (read as if separated)"
_COMMENT_NOTE = "'--' inside a comment (the comment is ignored)"


def _lenient_xml(text):
  """(text as a strict XML parser reads it, [(line, note)]) for two things MuJoCo's parser
  (tinyxml2) accepts: an attribute's closing quote directly followed by the next attribute's
  name inside a tag (a space is inserted), and '--' inside a comment (the comment is emptied,
  its line breaks kept). CDATA, processing instructions and text between tags are left
  alone."""
  out, notes = bytearray(), []
  i, n, line = 0, len(text), 1

  def copy(upto):
    nonlocal i, line
    line += text.count(b"\n", i, upto)
    out.extend(text[i:upto])
    i = upto

  def note(what):
    if (line, what) not in notes:
      notes.append((line, what))

  while i < n:
    lt = text.find(b"<", i)
    if lt < 0:
      copy(n)
      break
    copy(lt)
    if text.startswith(b"<!--", i):
      stop = text.find(b"-->", i + 4)
      stop = n if stop < 0 else stop + 3
      body = text[i + 4:stop - 3]
      if b"--" in body or body.endswith(b"-"):
        note(_COMMENT_NOTE)
        out.extend(b"<!--" + b"\n" * body.count(b"\n") + b"-->")
        line += text.count(b"\n", i, stop)
        i = stop
      else:
        copy(stop)
      continue
    for start, end in ((b"<![CDATA[", b"]]>"), (b"<?", b"?>"), (b"<!", b">")):
      if text.startswith(start, i):
        stop = text.find(end, i + len(start))
        copy(n if stop < 0 else stop + len(end))
        break
    else:   # a start or end tag: walk its attributes
      j = i + 1
      while j < n and text[j] != ord(">"):
        if text[j] in (ord('"'), ord("'")):
          close = text.find(text[j:j + 1], j + 1)
          if close < 0:
            break
          j = close + 1
          if j < n and text[j] in _NAME_START:
            copy(j)
            out.extend(b" ")
            note(_SPACE_NOTE)
          continue
        j += 1
      copy(min(j + 1, n))
  return bytes(out), notes


_NAME_KEYS = frozenset(("name", "class", "childclass", "file", "content_type", "prefix"))


def _has_nan(text):
  """A numeric attribute value with a NaN among its numbers (MuJoCo warns about it)."""
  try:
    vals = [float(p) for p in text.split()]
  except ValueError:
    return False
  return any(v != v for v in vals)


class _Includes:
  """What <include> resolves against while one model file is read: the main file (every include
  path is relative to its folder, as MuJoCo's XML reference says; like MuJoCo 4, a path that is
  not there is then tried relative to the including file's folder) and the files already
  included (MuJoCo refuses a file included twice)."""

  def __init__(self, main):
    self.main = main
    self.seen = set()


def _convert(elem, file, parent, assets, depth, includes=None, level=1):
  if includes is None:
    includes = _Includes(file)
  node = Node(elem.tag, elem.attrib, file, elem.sourceline, parent)
  if level > MAX_DEPTH:
    raise node.error(f"elements nested more than {MAX_DEPTH} deep (MuJoCo's limit)")
  for key, text in node.attrib.items():
    if key not in _NAME_KEYS and "nan" in text.lower() and _has_nan(text):
      warn(node, f"attribute '{key}': XML contains a 'NaN'. Please check it carefully.")
  for child in elem:
    if not isinstance(child.tag, str):
      continue
    if child.tag == "include":
      inc = Node("include", child.attrib, file, child.sourceline, node)
      for key in inc.attrib:
        if key != "file":
          raise inc.error(f"unknown attribute '{key}'")
      if "file" not in inc.attrib:
        raise inc.error("missing attribute 'file'")
      if any(isinstance(c.tag, str) for c in child):
        raise inc.error("an <include> element cannot have children")
      for sub in _load_include(inc, assets, depth, includes, level):
        sub.parent = node
        node.children.append(sub)
      continue
    node.children.append(_convert(child, file, node, assets, depth, includes, level + 1))
  return node


def read_referenced(node, name, assets, what):
  """(bytes, path) of the XML file `name` referred to by `node` (relative to node's file): from
  `assets` (by the name as written, the resolved path or their normalised forms), else disk."""
  base = os.path.dirname(node.file) if node.file and not node.file.startswith("<") else ""
  path = os.path.normpath(os.path.join(base, name))
  text = None
  if assets is not None:
    for key in (name, path, os.path.normpath(name)):
      if key in assets:
        text = assets[key]
        break
    if text is None:
      for key, val in assets.items():
        if os.path.normpath(key) == os.path.normpath(name):
          text = val
  if text is None:
    if why := _limits.unreadable(path, f"{what} '{name}'"):
      raise node.error(why)
    with open(path, "rb") as f:
      text = f.read()
  return (text.encode() if isinstance(text, str) else text), path


def _load_include(inc, assets, depth, includes, level):
  """Children of the root element of the file named by <include file=...>: the path is taken
  relative to the main model file's folder, else (an include inside an included file written
  relative to its own folder, which MuJoCo 4 also finds) relative to the including file's."""
  if depth > 20:
    raise inc.error("include nesting too deep (recursive include?)")
  name = inc.attrib["file"]
  as_main = Node("include", inc.attrib, includes.main, inc.line)   # resolves from main's folder
  try:
    text, path = read_referenced(as_main, name, assets, "include file")
  except MjcfError as e:
    if inc.file == includes.main:
      raise inc.error(e.msg) from None
    try:
      text, path = read_referenced(inc, name, assets, "include file")
    except MjcfError:
      raise inc.error(e.msg) from None
  key = os.path.normcase(os.path.abspath(path))
  if key in includes.seen:
    raise inc.error(f"file '{name}' already included")
  includes.seen.add(key)
  # the included root stands for the including element: its children sit one level below
  sub = _convert(_read_xml(text, path), path, None, assets, depth + 1, includes, level)
  if not sub.children:
    raise inc.error(f"empty include file '{name}'")
  return sub.children


def read_text(text, file, assets=None):
  """The element tree of XML `text` read from `file`, includes spliced in."""
  return _convert(_read_xml(text, file), file, None, assets, 0)


def read(source, assets=None):
  """The element tree of an MJCF (or URDF) file path or XML string (bytes/str), includes spliced
  in, as written: not yet expanded (<attach>, <replicate>) nor checked (engine/mjcf/parse.py)."""
  if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("<")):
    text = source.encode() if isinstance(source, str) else source
    file = "<string>"
  else:
    file = os.fspath(source)
    if not os.path.exists(file):
      raise MjcfError(None, "file not found", file=file, line=0)
    if why := _limits.unreadable(file, "model file"):
      raise MjcfError(None, why, file=file, line=0)
    with open(file, "rb") as f:
      text = f.read()
  return read_text(text, file, assets)


# ------------------------------------------------------------------------------------- values

BOOL = {"true": True, "false": False}
LIMITED = {"false": 0, "true": 1, "auto": 2}


def user_values(node, text):
  """Values of a `user` attribute (any number of them; <size nuser_*> sizes the arrays)."""
  return [] if text is None else floats(node, "user", attrib={"user": text})


# attributes that change only the drawing, or hold user data (as do all of <visual> and of a
# <light>): a NaN or inf in them is kept (MuJoCo warns of NaN, _convert too); elsewhere it would
# poison the simulation
_DRAWN = frozenset(("rgba", "rgb1", "rgb2", "markrgb", "emission", "specular", "shininess",
                    "reflectance", "metallic", "roughness", "texrepeat", "user"))
# attributes MuJoCo stores as float (as all of <visual>): beyond FLT_MAX it refuses them
_FLOAT32 = frozenset(("rgba", "emission", "specular", "shininess", "reflectance", "metallic",
                      "roughness", "texrepeat"))
_FLOAT32_LIGHT = frozenset(("attenuation", "cutoff", "exponent", "ambient", "diffuse",
                            "bulbradius", "intensity", "range"))
_FLT_MAX = 3.4028234663852886e38
_INF = ("inf", "infinity")


def floats(node, key, n=None, lo=None, attrib=None):
  """Attribute `key` as a list of floats; exactly `n` values, or between `lo` and `n`. NaN and
  inf are refused except in what only draws (_DRAWN, <visual>, <light>); a finite value beyond
  FLT_MAX where MuJoCo keeps a float is refused as MuJoCo refuses it."""
  text = (attrib if attrib is not None else node.attrib).get(key)
  if text is None:
    return None
  parts = text.split()
  try:
    vals = [float(p) for p in parts]
  except ValueError:
    vals = [_strtod(node, key, text, p) for p in parts]
  total = sum(vals)
  if total - total != 0 and any(math.isinf(v) and p.lstrip("+-").lower() not in _INF
                                for p, v in zip(parts, vals)):
    # a number beyond the double range (1e400): strtod's ERANGE, which MuJoCo refuses
    raise node.error(f"number is too large in attribute '{key}'")
  visual = node.parent is not None and node.parent.tag == "visual"
  if total - total != 0 and key not in _DRAWN and not visual and node.tag != "light":
    bad = [p for p, v in zip(parts, vals) if not math.isfinite(v)]
    if bad:
      raise node.error(f"attribute '{key}': '{bad[0]}' is not a finite number (a model with it "
                       "cannot be simulated)")
  if (visual or key in _FLOAT32 or (node.tag == "light" and key in _FLOAT32_LIGHT)) and any(
      _FLT_MAX < abs(v) < math.inf for v in vals):
    raise node.error(f"number is too large in attribute '{key}' (a float)")
  if n is not None:
    lo = n if lo is None else lo
    if not lo <= len(vals) <= n:
      want = f"{n}" if lo == n else f"{lo} to {n}"
      raise node.error(f"attribute '{key}': expected {want} values, got {len(vals)}")
  return vals


def _strtod(node, key, text, part):
  """One number as C's strtod reads it whole (MuJoCo's reader): decimal, or hexadecimal
  (0x10, -0x1.8p3)."""
  try:
    return float(part)
  except ValueError:
    pass
  if part.lstrip("+-")[:2].lower() == "0x":
    try:
      return float.fromhex(part)
    except ValueError:
      pass
  raise node.error(f"attribute '{key}': non-numeric value '{text[:80]}'")


def ints(node, key, vals):
  """The numbers `vals` read from attribute `key` as ints: MuJoCo reads integer attributes as C
  ints, so a value that is not whole, not finite or outside [INT_MIN, INT_MAX] is refused."""
  for v in vals:
    if not (math.isfinite(v) and v == int(v) and INT_MIN <= v <= INT_MAX):
      raise node.error(f"attribute '{key}': expected an integer from {INT_MIN} to {INT_MAX}, "
                       f"got '{v:g}'")
  return [int(v) for v in vals]


def number(node, key, default=None, attrib=None, integer=False):
  """Scalar numeric attribute (int when `integer`), or `default` when absent or empty."""
  if not (attrib if attrib is not None else node.attrib).get(key, "").strip():
    return default      # absent, or empty: as MuJoCo reads it
  vals = floats(node, key, 1, attrib=attrib)
  return ints(node, key, vals)[0] if integer else vals[0]


def keyword(node, key, choices, default=None, attrib=None):
  """Attribute value from `choices` (a dict keyword -> value), or `default` when absent."""
  text = (attrib if attrib is not None else node.attrib).get(key)
  if text is None:
    return default
  if text not in choices:
    raise node.error(f"attribute '{key}': invalid value '{text}' (expected one of "
                     f"{', '.join(choices)})")
  return choices[text]


class Reader:
  """Reads one element's attributes on top of its default class, with MuJoCo's semantics.

  Vector attributes given with fewer values than their length override only the leading
  entries, first from the default class and then from the element itself; an empty one
  (pos="") is left out, as MuJoCo reads it.
  """

  def __init__(self, node, dflt):
    self.node, self.srcs = node, (dflt or {}, node.attrib)

  def has(self, key):
    return any(key in s for s in self.srcs)

  def vec(self, key, base, n=None, lo=1):
    out = list(base)
    n = len(out) if n is None else n
    for src in self.srcs:
      if key in src and src[key].strip():
        vals = floats(self.node, key, n, lo, attrib=src)
        out[:len(vals)] = vals
    return out

  def exact(self, key, base, n):
    return self.vec(key, base, n, n)

  def num(self, key, base):
    return self.exact(key, [base], 1)[0]

  def int(self, key, base):
    return ints(self.node, key, [self.num(key, base)])[0]

  def kw(self, key, choices, base):
    out = base
    for src in self.srcs:
      out = keyword(self.node, key, choices, out, attrib=src)
    return out

  def str(self, key, base=None):
    out = base
    for src in self.srcs:
      out = src.get(key, out)
    return out


class Obj(dict):
  """A compiled element (attribute access over a dict) that remembers its source node."""
  __getattr__ = dict.__getitem__

  def __setattr__(self, k, v):
    self[k] = v


# MuJoCo's default solref and solimp (mjDEFAULT_SOLREF / mjDEFAULT_SOLIMP)
SOLREF = [0.02, 1.0]
SOLIMP = [0.9, 0.95, 0.001, 0.5, 2.0]
