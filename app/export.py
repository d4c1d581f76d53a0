"""Edits made in the viewer's Physics panel, written back as MJCF: a diff or a saved copy.

The Model keeps only the path of its source file (`m.source`), so a saved copy re-reads that file
with lxml and finds each edited element the way MuJoCo's compiler numbers them: bodies in
depth-first order, each body's own geoms and joints in document order (`<frame>` is transparent),
equalities in order.
"""
import numpy as np

from engine.types import mjtCone, mjtDisableBit, mjtEnableBit, mjtIntegrator, mjtSolver

# Model field -> (MJCF element, attribute)
ATTR = {
    "geom_solref": ("geom", "solref"), "geom_solimp": ("geom", "solimp"),
    "geom_friction": ("geom", "friction"), "geom_margin": ("geom", "margin"),
    "geom_gap": ("geom", "gap"), "geom_solmix": ("geom", "solmix"),
    "geom_rgba": ("geom", "rgba"),
    "jnt_solref": ("joint", "solreflimit"), "jnt_solimp": ("joint", "solimplimit"),
    "jnt_stiffness": ("joint", "stiffness"),
    "eq_solref": ("equality", "solref"), "eq_solimp": ("equality", "solimp"),
    "dof_damping": ("joint", "damping"), "dof_frictionloss": ("joint", "frictionloss"),
    "dof_armature": ("joint", "armature"),
    "body_mass": ("body", "mass"), "body_gravcomp": ("body", "gravcomp"),
    "actuator_gear": ("actuator", "gear"), "actuator_ctrlrange": ("actuator", "ctrlrange"),
}
_INTEGRATOR = {mjtIntegrator.EULER: "Euler", mjtIntegrator.RK4: "RK4",
               mjtIntegrator.IMPLICIT: "implicit", mjtIntegrator.IMPLICITFAST: "implicitfast"}
_OPT_ATTR = {"timestep": "timestep", "impratio": "impratio", "tolerance": "tolerance",
             "iterations": "iterations", "gravity": "gravity", "wind": "wind",
             "density": "density", "viscosity": "viscosity", "o_margin": "o_margin",
             "o_solref": "o_solref", "o_solimp": "o_solimp", "ls_iterations": "ls_iterations",
             "magnetic": "magnetic"}
_JOINT_TAGS = ("joint", "freejoint")
_ACTUATOR_TAGS = ("motor", "position", "velocity", "general", "damper", "cylinder", "muscle",
                  "adhesion", "intvelocity")
_EQ_TAGS = ("connect", "weld", "joint", "tendon", "flex")


def _fmt(v):
  return " ".join(f"{float(x):.6g}" for x in np.ravel(v))


def option_attrs(opt_edits, opt0=None):
  """{attribute: text} of `<option>` and {flag: 'enable'|'disable'} for the edited options
  (flags only where they differ from `opt0`, the options as loaded)."""
  attrs, flags = {}, {}
  opt0 = opt0 or {}
  for name, v in opt_edits.items():
    if name in _OPT_ATTR:
      attrs[_OPT_ATTR[name]] = _fmt(v)
    elif name == "integrator":
      attrs["integrator"] = _INTEGRATOR[mjtIntegrator(int(v))]
    elif name == "solver":
      attrs["solver"] = {mjtSolver.PGS: "PGS", mjtSolver.CG: "CG",
                         mjtSolver.NEWTON: "Newton"}[mjtSolver(int(v))]
    elif name == "cone":
      attrs["cone"] = mjtCone(int(v)).name.lower()
    elif name == "disableflags":
      changed = int(v) ^ int(opt0.get(name, 0))
      for bit in mjtDisableBit:
        if changed & bit:
          flags[bit.name.lower()] = "disable" if int(v) & bit else "enable"
    elif name == "enableflags":
      changed = int(v) ^ int(opt0.get(name, 0))
      for bit in mjtEnableBit:
        if changed & bit:
          flags[bit.name.lower()] = "enable" if int(v) & bit else "disable"
  return attrs, flags


def _element_of(m, field, index):
  """(kind, element id) of an edited field entry; dofs map to their joint."""
  kind = ATTR[field][0]
  i = int(np.ravel([index])[0]) if not isinstance(index, (int, np.integer)) else int(index)
  if field.startswith("dof_"):
    return "joint", int(m.dof_jntid[i])
  return kind, i


def _value(m, field, index):
  arr = getattr(m, field)
  i = index if isinstance(index, (int, np.integer)) else index[0]
  return arr[i]


def mjcf_diff(m, edits, opt_edits, opt0=None):
  """The edits as MJCF text: an `<option>` line and one line per edited element."""
  from engine.io import id2name
  lines = []
  attrs, flags = option_attrs(opt_edits, opt0)
  if attrs or flags:
    a = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    if flags:
      f = " ".join(f'{k}="{v}"' for k, v in flags.items())
      lines.append(f"<option {a}>\n  <flag {f}/>\n</option>".replace("<option >", "<option>"))
    else:
      lines.append(f"<option {a}/>")
  per = {}
  for (field, index) in edits:
    kind, i = _element_of(m, field, index)
    per.setdefault((kind, i), {})[ATTR[field][1]] = _fmt(_value(m, field, index))
  objtype = {"geom": "geom", "joint": "joint", "equality": "equality", "body": "body",
             "actuator": "actuator"}
  for (kind, i), a in per.items():
    name = id2name(m, objtype[kind], i)
    who = f'name="{name}"' if name else f"<!-- {kind} {i} (unnamed) -->"
    tag = "inertial" if kind == "body" and "mass" in a else kind
    body = " ".join(f'{k}="{v}"' for k, v in a.items())
    lines.append(f"<{tag} {who} {body}/>" if name else f"{who}<{tag} {body}/>")
  return "\n".join(lines)


def _bodies(worldbody):
  """Body elements in MuJoCo's numbering (world first, then depth-first pre-order)."""
  out = [worldbody]

  def walk(node):
    for c in node:
      if not isinstance(c.tag, str):
        continue
      if c.tag == "body":
        out.append(c)
        walk(c)
      elif c.tag == "frame":
        walk(c)
  walk(worldbody)
  return out


def _own(body, tags):
  """Direct children of a body with one of `tags`, looking through <frame> elements."""
  out = []
  for c in body:
    if not isinstance(c.tag, str):
      continue
    if c.tag in tags:
      out.append(c)
    elif c.tag == "frame":
      out.extend(_own(c, tags))
  return out


def save_copy(m, edits, opt_edits, out_path, opt0=None):
  """Write the model's source file with the edits applied to `out_path`; returns the list of
  edits that could not be written (with why)."""
  from lxml import etree
  if not m.source:
    raise ValueError("the model was loaded from a string, not a file: nothing to copy")
  tree = etree.parse(m.source)
  root = tree.getroot()
  if root.find(".//include") is not None or root.find(".//replicate") is not None:
    raise ValueError("the model uses <include> or <replicate>: export the MJCF diff instead")
  wb = root.find("worldbody")
  bodies = _bodies(wb) if wb is not None else []
  elems = {"body": bodies,
           "geom": [g for b in bodies for g in _own(b, ("geom",))],
           "joint": [j for b in bodies for j in _own(b, _JOINT_TAGS)],
           "equality": [e for q in root.findall("equality") for e in q
                        if isinstance(e.tag, str) and e.tag in _EQ_TAGS],
           "actuator": [a for q in root.findall("actuator") for a in q
                        if isinstance(a.tag, str) and a.tag in _ACTUATOR_TAGS]}
  skipped = []
  for (field, index) in edits:
    kind, i = _element_of(m, field, index)
    attr = ATTR[field][1]
    lst = elems[kind]
    if i >= len(lst):
      skipped.append(f"{field}[{i}]: element not found in {m.source}")
      continue
    el = lst[i]
    val = _fmt(_value(m, field, index))
    if kind == "body" and attr == "mass":
      inert = el.find("inertial")
      if inert is None:
        skipped.append(f"body_mass[{i}]: the body has no <inertial> (mass comes from its geoms)")
        continue
      inert.set("mass", val)
    elif kind == "joint" and el.tag == "freejoint" and attr not in ("damping", "armature",
                                                                    "frictionloss"):
      skipped.append(f"{field}[{i}]: not an attribute of <freejoint>")
    else:
      el.set(attr, val)
  attrs, flags = option_attrs(opt_edits, opt0)
  if attrs or flags:
    opt = root.find("option")
    if opt is None:
      opt = etree.Element("option")
      root.insert(0, opt)
    for k, v in attrs.items():
      opt.set(k, v)
    if flags:
      fl = opt.find("flag")
      if fl is None:
        fl = etree.SubElement(opt, "flag")
      for k, v in flags.items():
        fl.set(k, v)
  tree.write(str(out_path), encoding="utf-8", xml_declaration=False)
  return skipped
