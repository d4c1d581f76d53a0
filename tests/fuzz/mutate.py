"""Mutations of an MJCF (or URDF) file: `make_mutant(seed, index, seeds)` draws a seed model and
one to three mutations from `random.Random` seeded with (seed, index), so the same numbers give
the same mutant on every run. Element-level mutations edit the lxml tree (drop, duplicate,
reorder and move elements; swap, break and miscount attribute values; unknown references and
keywords; include and default-class cycles; deep nesting; absurd sizes and asset files); byte
level ones edit the written file (truncation, bytes that are not UTF-8)."""
import copy
import hashlib
import random
import struct
import zlib

from lxml import etree

MAIN = "fuzz_mutant.xml"      # the mutant's file name, beside the seed's own files

# numbers that break models: zero, signs, the ends of float64 and of C's integer types, NaN
BAD_NUMBERS = ("0", "-0", "-1", "0.5", "-0.5", "1e-300", "1e6", "1e9", "-1e9", "1e20", "-1e20",
               "1e30", "1e308", "-1e308", "1e400", "nan", "-nan", "inf", "-inf", "2147483647",
               "2147483648", "-2147483649", "4294967296", "9223372036854775808",
               "99999999999999999999999", "0x10", "1e", "+", "--1", "1.5.2")
# MJCF keywords by attribute name (valid for some element, maybe not this one), plus nonsense
_KEYWORDS = {
    "type": "plane hfield sphere capsule ellipsoid cylinder box mesh sdf free ball slide hinge "
            "2d cube skybox connect weld joint tendon flex distance user",
    "integrator": "Euler RK4 implicit implicitfast", "cone": "pyramidal elliptic",
    "solver": "PGS CG Newton", "jacobian": "dense sparse auto",
    "dyntype": "none integrator filter filterexact muscle user",
    "gaintype": "fixed affine muscle user", "biastype": "none affine muscle user",
    "limited": "true false auto", "ctrllimited": "true false auto",
    "forcelimited": "true false auto", "actlimited": "true false auto",
    "actearly": "true false", "builtin": "none gradient checker flat",
    "mark": "none edge cross random", "angle": "radian degree", "coordinate": "local global",
    "inertiafromgeom": "true false auto", "mode": "fixed track trackcom targetbody targetbodycom",
    "objtype": "body xbody geom site camera joint tendon actuator",
    "reftype": "body xbody geom site camera", "eulerseq": "xyz XYZ zyx zyz xyx",
    "fluidshape": "none ellipsoid", "shellinertia": "true false",
    "inertia": "convex exact legacy shell", "autolimits": "true false",
    "balanceinertia": "true false", "discardvisual": "true false", "fusestatic": "true false",
    "projection": "perspective orthographic", "colorspace": "auto linear sRGB",
    "content_type": "image/png model/stl text/plain", "datatype": "real positive axis quaternion",
    "needstage": "pos vel acc", "wrap": "sphere cylinder",
}
_NONSENSE = ("", " ", "fuzz", "true false", "TRUE", "1", "-1", "nan")
# attributes that name other elements
REF_KEYS = frozenset((
    "joint", "joint1", "joint2", "body", "body1", "body2", "geom", "geom1", "geom2", "site",
    "site1", "site2", "tendon", "tendon1", "tendon2", "actuator", "mesh", "material", "texture",
    "hfield", "class", "childclass", "objname", "refname", "target", "cranksite", "slidersite",
    "jointinparent", "sidesite", "flex", "skin", "camera", "light", "refsite", "instance",
    "plugin", "bone", "key", "sensor", "parent", "child", "link"))
_NAME_KEYS = frozenset(("name", "class", "childclass"))
# (element, attribute, values) that size an allocation: point 5 of issue #34, absurd sizes
_SIZES = (
    ("size", "memory", ("1G", "1T", "1E", "999999999999M", "-1", "1e30", "inf", "nan")),
    ("size", "nconmax", ("1000000000", "2147483648", "-5", "1e30")),
    ("size", "njmax", ("1000000000", "2147483648", "-5", "1e30")),
    ("size", "nstack", ("1000000000000", "-5", "inf")),
    ("size", "nuserdata", ("1000000000000", "2147483648", "-5", "1e300")),
    ("size", "nkey", ("1000000000", "2147483648", "-2")),
    ("size", "nuser_body", ("100000000", "-2", "2147483648")),
    ("size", "nuser_geom", ("100000000", "-2")),
    ("size", "nuser_jnt", ("100000000", "-2")),
    ("size", "nuser_actuator", ("100000000", "-2")),
    ("texture", "width", ("1000000", "2147483647", "4294967296", "-1", "0", "1e300")),
    ("texture", "height", ("1000000", "2147483647", "-1", "0", "inf")),
    ("hfield", "nrow", ("1000000", "2147483647", "-1", "0", "1e30")),
    ("hfield", "ncol", ("1000000", "2147483647", "-1", "0")),
    ("replicate", "count", ("1000000", "2147483647", "-1", "0", "1e20")),
    ("option", "ccd_iterations", ("2000000000", "-1", "1e30")),
    ("option", "iterations", ("2000000000", "-1", "1e30")),
    ("option", "ls_iterations", ("2000000000", "-1")),
    ("option", "noslip_iterations", ("2000000000", "-1")),
    ("option", "sdf_iterations", ("2000000000", "-1")),
    ("option", "sdf_initpoints", ("2000000000", "-1")),
    ("mesh", "maxhullvert", ("2147483647", "-5", "3", "1e30")),
    ("geom", "condim", ("2", "5", "7", "-1", "1e9")),
    ("geom", "priority", ("2147483648", "-1e30")),
    ("geom", "group", ("2147483648", "-1", "31", "1e30")),
    ("joint", "group", ("2147483648", "-1", "1e30")),
    ("geom", "contype", ("4294967296", "-1", "1e30")),
    ("geom", "conaffinity", ("4294967296", "-1", "1e30")),
    ("actuator", "actdim", ("1000000000", "-2", "1e30")),
)


def mutant_rng(seed, index):
  """The random.Random of mutant `index` of run `seed`."""
  return random.Random(f"numjoco-fuzz/{seed}/{index}")


class Mutant:
  """One mutant: its seed model, the mutations applied (one line each) and its files (the
  model as MAIN and any files it refers to, {name: bytes}), written beside the seed's files."""

  def __init__(self, seed_path, seed, index):
    self.seed_path, self.seed, self.index = seed_path, seed, index
    self.ops, self.files = [], {}

  @property
  def key(self):
    """A hash of the mutant's content (distinct mutants have distinct keys)."""
    h = hashlib.sha1(self.seed_path.encode())
    for name in sorted(self.files):
      h.update(name.encode() + b"\0" + self.files[name] + b"\0")
    return h.hexdigest()[:16]


def make_mutant(seed, index, seeds):
  """Mutant `index` of run `seed`, of a model drawn from the paths `seeds`."""
  rng = mutant_rng(seed, index)
  path = rng.choice(seeds)
  mut = Mutant(path, seed, index)
  with open(path, "rb") as f:
    text = f.read()
  try:
    root = etree.fromstring(text, etree.XMLParser(remove_blank_text=False))
  except etree.XMLSyntaxError:
    root = None      # MuJoCo's lenient XML: only byte-level mutations
  nops = rng.choice((1, 1, 1, 2, 2, 3))
  byte_op = root is None or rng.random() < 0.12
  if root is not None:
    for _ in range(nops - byte_op if byte_op else nops):
      for _attempt in range(20):
        name, fn, _ = rng.choices(TREE_OPS, weights=[w for _, _, w in TREE_OPS])[0]
        desc = fn(rng, root, mut)
        if desc is not None:
          mut.ops.append(f"{name}: {desc}")
          break
    text = etree.tostring(root, encoding="utf-8")
  if byte_op:
    name, fn = rng.choice(_BYTE_OPS)
    text, desc = fn(rng, text)
    mut.ops.append(f"{name}: {desc}")
  mut.files[MAIN] = text
  return mut


# --------------------------------------------------------------------------- tree inspection

def _elements(root):
  return [e for e in root.iter() if isinstance(e.tag, str) and e is not root]


def _label(e):
  name = e.get("name")
  return f"<{e.tag}{' name=' + repr(name) if name else ''}> (seed line {e.sourceline})"


def _numbers(text):
  try:
    return [float(p) for p in text.split()] if text.split() else None
  except ValueError:
    return None


def _numeric_attrs(root):
  return [(e, k) for e in root.iter() if isinstance(e.tag, str) for k, v in e.attrib.items()
          if k not in _NAME_KEYS and _numbers(v) is not None]


def _all_attrs(root):
  return [(e, k) for e in root.iter() if isinstance(e.tag, str) for k in e.attrib]


def _subtree(e):
  return set(x for x in e.iter())


def _choice(rng, items, least=1):
  """A random one of `items`, or None when there are fewer than `least`."""
  return rng.choice(items) if len(items) >= least else None


# ------------------------------------------------------------------------------ tree mutations

def _drop(rng, root, mut):
  e = _choice(rng, _elements(root))
  if e is None:
    return None
  e.getparent().remove(e)
  return f"drop {_label(e)}"


def _duplicate(rng, root, mut):
  e = _choice(rng, _elements(root))
  if e is None:
    return None
  e.addnext(copy.deepcopy(e))
  return f"duplicate {_label(e)}"


def _reorder(rng, root, mut):
  parents = [e for e in root.iter() if isinstance(e.tag, str)
             and sum(isinstance(c.tag, str) for c in e) >= 2]
  if not parents:
    return None
  p = rng.choice(parents)
  kids = [c for c in p if isinstance(c.tag, str)]
  order = list(kids)
  rng.shuffle(order)
  for c in kids:
    p.remove(c)
  for c in order:
    p.append(c)
  return f"reorder the children of {_label(p)}"


def _move(rng, root, mut):
  e = _choice(rng, _elements(root), 2)
  if e is None:
    return None
  inside = _subtree(e)
  t = _choice(rng, [t for t in root.iter() if isinstance(t.tag, str) and t not in inside
                    and t is not e.getparent()])
  if t is None:
    return None
  t.insert(rng.randint(0, len(t)), e)
  return f"move {_label(e)} into {_label(t)}"


def _swap_values(rng, root, mut):
  attrs = _all_attrs(root)
  a = _choice(rng, attrs, 2)
  if a is None:
    return None
  same = [x for x in attrs if x[1] == a[1] and x[0] is not a[0]]
  b = rng.choice(same) if same and rng.random() < 0.5 else rng.choice(attrs)
  va, vb = a[0].get(a[1]), b[0].get(b[1])
  a[0].set(a[1], vb)
  b[0].set(b[1], va)
  return f"swap {_label(a[0])}.{a[1]} and {_label(b[0])}.{b[1]}"


def _pick_numbers(rng, root):
  """(element, attribute, its values as strings) of a random numeric attribute, or None."""
  attrs = _numeric_attrs(root)
  if not attrs:
    return None
  e, k = rng.choice(attrs)
  return e, k, e.get(k).split()


def _bad_number(rng, root, mut):
  picked = _pick_numbers(rng, root)
  if picked is None:
    return None
  e, k, parts = picked
  i = rng.randrange(len(parts))
  if rng.random() < 0.2:
    new = repr(float(parts[i]) * rng.choice((-1, 1e6, -1e6, 1e-9, 1e300)))
  else:
    new = rng.choice(BAD_NUMBERS)
  parts[i] = new
  e.set(k, " ".join(parts))
  return f"{_label(e)}.{k}[{i}] = {new}"


def _miscount(rng, root, mut):
  picked = _pick_numbers(rng, root)
  if picked is None:
    return None
  e, k, parts = picked
  how = rng.choice(("add", "drop", "empty", "double", "many"))
  if how == "add":
    parts.append(rng.choice(("0", "1", "-1", "2")))
  elif how == "drop":
    parts.pop()
  elif how == "empty":
    parts = []
  elif how == "double":
    parts = parts + parts
  else:
    parts = ["1"] * rng.choice((7, 13, 100, 10000))
  e.set(k, " ".join(parts))
  return f"{_label(e)}.{k}: {how} values ({len(parts)})"


def _pick_attr(rng, root, keys):
  """(element, attribute) of a random attribute named one of `keys`, or None."""
  return _choice(rng, [(e, k) for e, k in _all_attrs(root) if k in keys])


def _set(e, k, value):
  e.set(k, value)
  return f"{_label(e)}.{k} = {value!r}"


def _keyword(rng, root, mut):
  picked = _pick_attr(rng, root, _KEYWORDS)
  if picked is None:
    return None
  return _set(*picked, rng.choice(_KEYWORDS[picked[1]].split() + list(_NONSENSE)))


def _reference(rng, root, mut):
  """An unknown name, an empty one, or the name of some element (maybe of another kind)."""
  picked = _pick_attr(rng, root, REF_KEYS)
  if picked is None:
    return None
  names = [x.get("name") for x in root.iter() if isinstance(x.tag, str) and x.get("name")]
  choice = rng.random()
  if choice < 0.4 or not names:
    return _set(*picked, "fuzz_unknown")
  return _set(*picked, "" if choice < 0.5 else rng.choice(names))


def _add_attribute(rng, root, mut):
  attrs = _all_attrs(root)
  elems = _elements(root)
  if not attrs or not elems:
    return None
  src, k = rng.choice(attrs)
  e = rng.choice(elems)
  e.set(k, src.get(k))
  return f"{_label(e)}.{k} = {src.get(k)!r} (from {_label(src)})"


def _include(rng, root, mut):
  how = rng.choice(("cycle", "self", "missing", "not xml", "deep", "twice", "wrong root"))
  inc = etree.Element("include")
  if how == "cycle":
    mut.files["fuzz_inc_a.xml"] = b'<mujoco><include file="fuzz_inc_b.xml"/></mujoco>'
    mut.files["fuzz_inc_b.xml"] = b'<mujoco><include file="fuzz_inc_a.xml"/></mujoco>'
    inc.set("file", "fuzz_inc_a.xml")
  elif how == "self":
    inc.set("file", MAIN)
  elif how == "missing":
    inc.set("file", "fuzz_nothere.xml")
  elif how == "not xml":
    mut.files["fuzz_inc.xml"] = bytes(rng.randrange(256) for _ in range(64))
    inc.set("file", "fuzz_inc.xml")
  elif how == "deep":
    depth = rng.choice((5, 30))
    for i in range(depth):
      mut.files[f"fuzz_inc_{i}.xml"] = (f'<mujoco><include file="fuzz_inc_{i + 1}.xml"/>'
                                        '</mujoco>').encode()
    mut.files[f"fuzz_inc_{depth}.xml"] = b"<mujoco/>"
    inc.set("file", "fuzz_inc_0.xml")
  elif how == "twice":
    mut.files["fuzz_inc.xml"] = b"<mujoco><option timestep='0.002'/></mujoco>"
    inc.set("file", "fuzz_inc.xml")
    root.insert(0, copy.deepcopy(inc))
  else:
    mut.files["fuzz_inc.xml"] = b"<robot><link name='x'/></robot>"
    inc.set("file", "fuzz_inc.xml")
  parents = [root] + [e for e in _elements(root) if rng.random() < 0.1]
  rng.choice(parents).insert(0, inc)
  return f"include ({how})"


def _default_class(rng, root, mut):
  defaults = [e for e in root.iter("default")]
  how = rng.choice(("nest in itself", "duplicate class", "unknown childclass", "deep"))
  if how == "nest in itself" and defaults:
    d = rng.choice(defaults)
    d.append(copy.deepcopy(d))
    return f"{how}: {_label(d)}"
  if how == "duplicate class" and len(defaults) > 1:
    a, b = rng.sample(defaults, 2)
    b.set("class", a.get("class", "main"))
    return f"{how}: {_label(b)} takes {_label(a)}'s class"
  if how == "unknown childclass":
    bodies = [e for e in root.iter("body", "worldbody", "frame")]
    if not bodies:
      return None
    b = rng.choice(bodies)
    b.set("childclass", rng.choice(("fuzz_unknown", "main", "")))
    return f"{how}: {_label(b)}"
  depth = rng.choice((50, 300, 2000))
  top = etree.SubElement(root, "default")
  top.set("class", "fuzz_d0")
  for i in range(1, depth):
    top = etree.SubElement(top, "default")
    top.set("class", f"fuzz_d{i}")
  etree.SubElement(top, "geom").set("size", "0.1")
  return f"nested defaults ({depth} deep)"


def _deep_bodies(rng, root, mut):
  """A chain of bodies nested around MuJoCo's limit of 499 levels (a hinge at the top, a geom
  at the bottom: deep, not big; outside <replicate>, which would multiply it)."""
  parents = [e for e in root.iter("body", "worldbody")
             if not any(a.tag == "replicate" for a in e.iterancestors())]
  if not parents:
    return None
  p = rng.choice(parents)
  where = _label(p)
  depth = rng.choice((20, 250, 300, 496, 497, 2000))
  for i in range(depth):
    p = etree.SubElement(p, "body")
    p.set("name", f"fuzz_b{i}")
    p.set("pos", "0 0 0.01")
    if i == 0:
      etree.SubElement(p, "joint").set("axis", "1 0 0")
  etree.SubElement(p, "geom").set("size", "0.01")
  return f"{depth} nested bodies under {where}"


def _absurd_size(rng, root, mut):
  tag, key, values = rng.choice(_SIZES)
  value = rng.choice(values)
  present = [e for e in root.iter(tag)] if tag != "actuator" else [
      e for e in root.iter("general", "motor", "position")]
  if present:
    e = rng.choice(present)
  elif tag in ("size", "option"):
    e = etree.Element(tag)
    root.insert(0, e)
  elif tag == "texture":
    asset = etree.SubElement(root, "asset")
    e = etree.SubElement(asset, "texture", name="fuzz_tex", type="2d", builtin="checker",
                         width="8", height="8")
  elif tag == "hfield":
    asset = etree.SubElement(root, "asset")
    e = etree.SubElement(asset, "hfield", name="fuzz_hf", nrow="4", ncol="4",
                         size="1 1 0.1 0.1")
  else:
    return None
  e.set(key, value)
  return f"{_label(e)}.{key} = {value}"


def _asset_file(rng, root, mut):
  """Point an asset at a file that is missing, this model, garbage, or a header that claims
  absurd dimensions (a binary STL with 4e9 triangles, a PNG of 1e5 x 1e5 pixels, an hfield
  of 1e5 x 1e5 samples)."""
  users = [e for e in root.iter("mesh", "texture", "hfield", "skin") if e.get("file")]
  kind = rng.choice(("mesh", "texture", "hfield")) if not users or rng.random() < 0.3 else None
  if kind is not None:
    asset = etree.SubElement(root, "asset")
    e = etree.SubElement(asset, kind, name=f"fuzz_{kind}")
    if kind == "texture":
      e.set("type", "2d")
    if kind == "hfield":
      e.set("size", "1 1 0.1 0.1")
  else:
    e = rng.choice(users)
  ext = {"mesh": ".stl", "texture": ".png", "hfield": ".bin", "skin": ".skn"}[e.tag]
  how = rng.choice(("missing", "itself", "garbage", "absurd", "empty", "truncated"))
  name = f"fuzz_file{ext}"
  if how == "missing":
    name = "fuzz_nothere" + ext
  elif how == "itself":
    name = MAIN
  elif how == "garbage":
    mut.files[name] = bytes(rng.randrange(256) for _ in range(rng.choice((3, 84, 600))))
  elif how == "empty":
    mut.files[name] = b""
  else:
    data = _absurd_file(ext)
    mut.files[name] = data if how == "absurd" else data[:rng.randrange(1, len(data))]
  e.set("file", name)
  return f"{_label(e)}.file = {how} {ext}"


def _absurd_file(ext):
  if ext == ".stl":
    return b"\0" * 80 + struct.pack("<I", 0xFFFFFFF0) + b"\0" * 100
  if ext == ".png":
    ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    idat = b"IDAT" + zlib.compress(b"\0" * 1000)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk
            + struct.pack(">I", zlib.crc32(chunk)) + struct.pack(">I", len(idat) - 4) + idat
            + struct.pack(">I", zlib.crc32(idat)) + struct.pack(">I", 0) + b"IEND"
            + struct.pack(">I", zlib.crc32(b"IEND")))
  if ext == ".bin":
    return struct.pack("<ii", 100000, 100000) + b"\0" * 64
  return struct.pack("<iiii", 2000000000, 2000000000, 2000000000, 2000000000) + b"\0" * 64


# the element-level mutations: (name, function(rng, root, mutant) -> description or None when
# it does not apply, weight of the draw)
TREE_OPS = (
    ("drop", _drop, 10), ("duplicate", _duplicate, 8), ("reorder", _reorder, 5),
    ("move", _move, 6), ("swap", _swap_values, 8), ("number", _bad_number, 20),
    ("count", _miscount, 8), ("keyword", _keyword, 7), ("reference", _reference, 7),
    ("attribute", _add_attribute, 3), ("include", _include, 3), ("default", _default_class, 3),
    ("nesting", _deep_bodies, 2), ("size", _absurd_size, 6), ("file", _asset_file, 4))


# ------------------------------------------------------------------------------ byte mutations

def _truncate(rng, text):
  cut = rng.randrange(0, max(1, len(text)))
  return text[:cut], f"truncated at byte {cut} of {len(text)}"


def _non_utf8(rng, text):
  bad = rng.choice((b"\xff", b"\xc3\x28", b"\x80\x80", b"\xed\xa0\x80", b"\xfe\xff", b"\0",
                    b"\x1b"))
  quotes = [i for i in range(len(text)) if text[i:i + 1] == b'"']
  at = rng.choice(quotes) + 1 if quotes and rng.random() < 0.7 else rng.randrange(len(text) + 1)
  return text[:at] + bad + text[at:], f"{bad!r} inserted at byte {at}"


def _encoding(rng, text):
  decl = rng.choice((b'<?xml version="1.0" encoding="UTF-16"?>\n',
                     b'<?xml version="1.0" encoding="latin-1"?>\n',
                     b'<?xml version="1.0" encoding="fuzz"?>\n', b"\xef\xbb\xbf"))
  body = text.split(b"?>", 1)[1] if text.lstrip().startswith(b"<?xml") else text
  return decl + body, f"declaration {decl.strip()!r}"


_BYTE_OPS = (("truncate", _truncate), ("bytes", _non_utf8), ("encoding", _encoding))
