"""<custom>: numeric, text and tuple elements, checked as MuJoCo's compiler checks them (names
required and unique, a numeric's size, a text not empty, a tuple not empty and naming objects
that exist). Their fields (numeric_data, text_data, tuple_objtype, ...) are not compiled: no
part of the engine or the viewer reads them."""
from numjoco.engine import types as t
from numjoco.engine.mjcf._node import floats, number

_ATTRS = {"numeric": {"name", "size", "data"}, "text": {"name", "data"}, "tuple": {"name"},
          "element": {"objtype", "objname", "prm"}}
# tuple objtype keywords (mju_str2Type) and the mjtObj whose names they are looked up in
OBJTYPES = {"body": "BODY", "xbody": "BODY", "joint": "JOINT", "dof": "DOF", "geom": "GEOM",
            "site": "SITE", "camera": "CAMERA", "light": "LIGHT", "flex": "FLEX",
            "mesh": "MESH", "skin": "SKIN", "hfield": "HFIELD", "texture": "TEXTURE",
            "material": "MATERIAL", "pair": "PAIR", "exclude": "EXCLUDE",
            "equality": "EQUALITY", "tendon": "TENDON", "actuator": "ACTUATOR",
            "sensor": "SENSOR", "numeric": "NUMERIC", "text": "TEXT", "tuple": "TUPLE",
            "key": "KEY", "plugin": "PLUGIN", "frame": "FRAME"}


def _attrs(node):
  for key in node.attrib:
    if key not in _ATTRS[node.tag]:
      raise node.error(f"unknown attribute '{key}'")


def check(root):
  """Check every <custom> section's elements; returns the tuples' entries to resolve once the
  model's names are known (check_tuples): (tuple element, index in the tuple, <element>)."""
  entries = []
  seen = {"numeric": set(), "text": set(), "tuple": set()}
  for custom in (c for c in root.children if c.tag == "custom"):
    for key in custom.attrib:
      raise custom.error(f"unknown attribute '{key}'")
    for n in custom.children:
      _attrs(n)
      name = n.get("name")
      if not name:
        raise n.error("required attribute missing: 'name'")
      if name in seen[n.tag]:
        raise n.error(f"repeated name '{name}' in {n.tag}")
      seen[n.tag].add(name)
      if n.tag == "numeric":
        data = floats(n, "data") or []
        size = number(n, "size", -1, integer=True)
        size = len(data) if size == -1 else size
        if size <= 0:
          raise n.error("custom field size must be positive")
        if len(data) > size:
          raise n.error("attribute 'data' has too much data")
      elif n.tag == "text":
        if not n.get("data"):
          raise n.error("text field cannot be empty")
      else:
        if not n.children:
          raise n.error(f"tuple '{name}' is empty")
        for i, e in enumerate(n.children):
          _attrs(e)
          for key in ("objtype", "objname"):
            if not e.get(key):
              raise e.error(f"required attribute missing: '{key}'")
          if e.get("objtype") not in OBJTYPES:
            raise e.error(f"unknown object type '{e.get('objtype')}'")
          floats(e, "prm", 1)
          entries.append((n, i, e))
  return entries, seen


def check_tuples(entries, custom_names, names):
  """Each tuple entry names an object of its type that exists (MuJoCo: "unrecognized object
  'x' in tuple 0"); types whose names the compiler does not keep (dof, flex, plugin, frame, ...)
  are not checked."""
  for n, i, e in entries:
    kind = OBJTYPES[e.get("objtype")]
    if kind in ("NUMERIC", "TEXT", "TUPLE"):
      known = custom_names[kind.lower()]
    else:
      obj = getattr(t.mjtObj, kind, None)
      if obj is None or obj not in names:
        continue
      known = names[obj]
    if e.get("objname") not in known:
      raise e.error(f"unrecognized object '{e.get('objname')}' in tuple {i}")
