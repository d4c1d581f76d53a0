"""Attribute values of <flex> and <flexcomp> elements (and their contact, edge and elasticity
children) as MuJoCo's XML reader reads them, and the flex spec they fill (`default_flex`,
mjs_defaultFlex): shared by engine/mjcf/_flex.py and engine/mjcf/_flexcomp.py."""
from numjoco.engine.mjcf import _node
from numjoco.engine.mjcf._node import floats

SELF = {"none": 0, "narrow": 1, "bvh": 2, "sap": 3, "auto": 4}
ELASTIC2D = {"none": 0, "bend": 1, "stretch": 2, "both": 3}
BOOL = {"false": 0, "true": 1}


def ints(n, key):
  """Attribute `key` as a list of ints (None when absent)."""
  vals = floats(n, key)
  if vals is None:
    return None
  return _node.ints(n, key, vals)


def num(n, key, default):
  """Scalar attribute `key`, or `default`."""
  vals = floats(n, key, 1)
  return default if vals is None else vals[0]


def integer(n, key, default):
  """Integer attribute `key`, or `default`."""
  vals = ints(n, key)
  if vals is None:
    return default
  if len(vals) != 1:
    raise n.error(f"attribute '{key}': expected 1 value, got {len(vals)}")
  return vals[0]


def kw(n, key, choices, default):
  """Keyword attribute `key` mapped through `choices`, or `default`."""
  text = n.get(key)
  if text is None:
    return default
  if text not in choices:
    raise n.error(f"attribute '{key}': invalid value '{text}' (expected one of "
                  f"{', '.join(choices)})")
  return choices[text] if isinstance(choices, dict) else text


def vec(n, key, base, lo=None):
  """Attribute `key` over `base`: the given leading values replace base's (MuJoCo's ReadAttr
  with exact=false), or exactly len(base) values when `lo` is None."""
  out = list(base)
  vals = floats(n, key, len(base), len(base) if lo is None else lo)
  if vals is not None:
    out[:len(vals)] = vals
  return out


def child(n, tag):
  """The first child element of `n` with tag `tag`, or None."""
  for c in n.children:
    if c.tag == tag:
      return c
  return None


def default_flex():
  """mjs_defaultFlex."""
  return dict(contype=1, conaffinity=1, condim=3, priority=0, friction=[1.0, 0.005, 0.0001],
              solmix=1.0, solref=[0.02, 1.0], solimp=[0.9, 0.95, 0.001, 0.5, 2.0],
              margin=0.0, gap=0.0, selfcollide=4, activelayers=1, passive=0, dim=2,
              radius=0.005, group=0, material="", rgba=[0.5, 0.5, 0.5, 1.0], flatskin=False,
              edgestiffness=0.0, edgedamping=0.0, young=0.0, poisson=0.0, damping=0.0,
              thickness=-1.0, elastic2d=0, cellcount=[1, 1, 1], order=0, vertbody=[],
              vert=[], elem=[], texcoord=[], elemtexcoord=[], nodebody=[], nodecoord=[],
              equality=0, eq_solref=None, eq_solimp=None, name="")


def read_common(n, f):
  """Attributes a <flex> and a <flexcomp> share, and their contact/edge/elasticity children."""
  f["name"] = n.get("name", "")
  f["group"] = integer(n, "group", f["group"])
  f["dim"] = integer(n, "dim", f["dim"])
  f["radius"] = num(n, "radius", f["radius"])
  f["material"] = n.get("material", "")
  f["rgba"] = vec(n, "rgba", f["rgba"])
  f["flatskin"] = bool(kw(n, "flatskin", BOOL, int(f["flatskin"])))
  cont = child(n, "contact")
  if cont is not None:
    for k in ("contype", "conaffinity", "condim", "priority", "activelayers"):
      f[k] = integer(cont, k, f[k])
    for k in ("solmix", "margin", "gap"):
      f[k] = num(cont, k, f[k])
    for k in ("friction", "solref", "solimp"):
      f[k] = vec(cont, k, f[k], 1)
    f["selfcollide"] = kw(cont, "selfcollide", SELF, f["selfcollide"])
    f["passive"] = kw(cont, "passive", BOOL, f["passive"])
  edge = child(n, "edge")
  if edge is not None:
    f["edgestiffness"] = num(edge, "stiffness", f["edgestiffness"])
    f["edgedamping"] = num(edge, "damping", f["edgedamping"])
  el = child(n, "elasticity")
  if el is not None:
    for k in ("young", "poisson", "damping", "thickness"):
      f[k] = num(el, k, f[k])
    f["elastic2d"] = kw(el, "elastic2d", ELASTIC2D, f["elastic2d"])
  return edge
