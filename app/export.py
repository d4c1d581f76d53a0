"""Edits made in the viewer's Physics panel, written back as MJCF: a diff or a saved copy.

The Model keeps only the path of its source file (`m.source`), so a saved copy re-reads that file
with lxml and finds each edited element the way MuJoCo's compiler numbers them: bodies in
depth-first order, each body's own geoms and joints in document order (`<frame>` is transparent),
equalities, tendons and actuators in order. Angles (a hinge's or ball's springyield) are written
in the unit of the source's `<compiler angle>`.
"""
import numpy as np

from numjoco.engine.types import mjtCone, mjtDisableBit, mjtEnableBit, mjtIntegrator, mjtSolver

# Model field -> (MJCF element, attribute)
ATTR = {
    "geom_solref": ("geom", "solref"), "geom_solimp": ("geom", "solimp"),
    "geom_friction": ("geom", "friction"), "geom_margin": ("geom", "margin"),
    "geom_gap": ("geom", "gap"), "geom_solmix": ("geom", "solmix"),
    "geom_rgba": ("geom", "rgba"), "geom_adhesion": ("geom", "adhesion"),
    "geom_surfacevel": ("geom", "surfacevel"),
    "jnt_solref": ("joint", "solreflimit"), "jnt_solimp": ("joint", "solimplimit"),
    "jnt_stiffness": ("joint", "stiffness"), "jnt_springyield": ("joint", "springyield"),
    "eq_solref": ("equality", "solref"), "eq_solimp": ("equality", "solimp"),
    "pair_solref": ("pair", "solref"), "pair_solimp": ("pair", "solimp"),
    "dof_solref": ("joint", "solreffriction"), "dof_solimp": ("joint", "solimpfriction"),
    "tendon_solref_lim": ("tendon", "solreflimit"), "tendon_solimp_lim": ("tendon", "solimplimit"),
    "tendon_solref_fri": ("tendon", "solreffriction"),
    "tendon_solimp_fri": ("tendon", "solimpfriction"),
    "dof_damping": ("joint", "damping"), "dof_frictionloss": ("joint", "frictionloss"),
    "dof_armature": ("joint", "armature"),
    "body_mass": ("body", "mass"), "body_gravcomp": ("body", "gravcomp"),
    "actuator_gear": ("actuator", "gear"), "actuator_ctrlrange": ("actuator", "ctrlrange"),
    "tendon_stiffness": ("tendon", "stiffness"), "tendon_frictionloss": ("tendon", "frictionloss"),
    "tendon_springyield": ("tendon", "springyield"),
    "tendon_damping": ("tendon", "damping"), "actuator_damping": ("actuator", "damping"),
    "jnt_stiffnesspoly": ("joint", "stiffness"), "dof_dampingpoly": ("joint", "damping"),
    "tendon_stiffnesspoly": ("tendon", "stiffness"), "tendon_dampingpoly": ("tendon", "damping"),
    "actuator_dampingpoly": ("actuator", "damping"),
}
# polynomial terms -> their linear coefficient: MJCF writes both as one attribute "a b c"
_POLY = {"jnt_stiffnesspoly": "jnt_stiffness", "dof_dampingpoly": "dof_damping",
         "tendon_stiffnesspoly": "tendon_stiffness", "tendon_dampingpoly": "tendon_damping",
         "actuator_dampingpoly": "actuator_damping"}
_LINEAR = {v: k for k, v in _POLY.items()}
_ANGLE = {"jnt_springyield"}   # in degrees in the MJCF of hinge and ball joints by default
_YIELD = {"jnt_springyield", "tendon_springyield"}
_INTEGRATOR = {mjtIntegrator.EULER: "Euler", mjtIntegrator.RK4: "RK4",
               mjtIntegrator.IMPLICIT: "implicit", mjtIntegrator.IMPLICITFAST: "implicitfast",
               mjtIntegrator.DISCRETE: "discrete"}
_OPT_ATTR = {"timestep": "timestep", "impratio": "impratio", "tolerance": "tolerance",
             "iterations": "iterations", "gravity": "gravity", "wind": "wind",
             "density": "density", "viscosity": "viscosity", "o_margin": "o_margin",
             "o_solref": "o_solref", "o_solimp": "o_solimp", "ls_iterations": "ls_iterations",
             "magnetic": "magnetic", "sleep_tolerance": "sleep_tolerance"}
_JOINT_TAGS = ("joint", "freejoint")
_ACTUATOR_TAGS = ("motor", "position", "velocity", "general", "damper", "cylinder", "muscle",
                  "adhesion", "intvelocity")
_EQ_TAGS = ("connect", "weld", "joint", "tendon", "flex")
_TENDON_TAGS = ("spatial", "fixed")


def _fmt(v, digits=6):
  return " ".join(f"{float(x):.{digits}g}" for x in np.ravel(v))


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
    elif name == "disableactuator":
      if int(v) != int(opt0.get(name, 0)):   # '' (all enabled) is valid MJCF: no group
        attrs["actuatorgroupdisable"] = " ".join(str(g) for g in range(31) if int(v) >> g & 1)
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


def _value(m, field, index, degree=True):
  """The edited entry as the MJCF attribute holds it (degrees for angles when `degree`)."""
  i = index if isinstance(index, (int, np.integer)) else index[0]
  if field in _POLY or field in _LINEAR:   # "a b c", or "a" alone while b = c = 0
    linear = _POLY.get(field, field)
    poly = getattr(m, _LINEAR[linear])[i]
    a = getattr(m, linear)[i]
    return np.concatenate(([a], poly)) if np.any(poly != 0) else np.array([a])
  v = getattr(m, field)[i]
  if field in _ANGLE and degree and int(m.jnt_type[i]) in (1, 3):   # ball, hinge
    v = np.rad2deg(v)
  return v


def _digits(field):
  """Significant digits written: 6 (what was typed), 12 for angles converted to degrees (a
  value typed in radians keeps its precision through the conversion)."""
  return 12 if field in _ANGLE else 6


def _degree_of(root):
  """Whether the MJCF tree's angles are in degrees (its last `<compiler angle>`; MJCF's default
  is degree)."""
  degree = True
  for c in root.iter("compiler"):
    a = c.get("angle")
    if a is not None:
      degree = a.strip() == "degree"
  return degree


def _source_degree(m):
  """`_degree_of` the model's source file; None when unknown (no source, or unreadable)."""
  if not m.source:
    return None
  try:
    from lxml import etree
    return _degree_of(etree.parse(m.source).getroot())
  except Exception:  # noqa: BLE001 - a URDF, a moved file: the unit is unknown, said in the diff
    return None


def _yield_note(m, field, index):
  """Why a springyield edit reads differently once reloaded, or ''."""
  i = int(np.ravel([index])[0])
  if field in _YIELD and float(getattr(m, field)[i]) == 0.0:
    return (f"{field}[{i}]: springyield 0 loads as an elastic element (no plastic state), not "
            "the full plastic slip it gives at run time")
  return ""


def mjcf_diff(m, edits, opt_edits, opt0=None):
  """The edits as MJCF text: an `<option>` line and one line per edited element."""
  from numjoco.engine.io import id2name
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
  degree = _source_degree(m) if any(f in _ANGLE for f, _ in edits) else True
  for (field, index) in edits:
    kind, i = _element_of(m, field, index)
    per.setdefault((kind, i), {})[ATTR[field][1]] = _fmt(
        _value(m, field, index, degree is not False), _digits(field))
  if degree is None:
    lines.append("<!-- angles in degrees (compiler angle=\"degree\", MJCF's default) -->")
  for (kind, i), a in per.items():
    name = id2name(m, kind, i)
    who = f'name="{name}"' if name else f"<!-- {kind} {i} (unnamed) -->"
    if kind == "pair" and not name:   # a pair names its geoms (always named)
      name = who = (f'geom1="{id2name(m, "geom", int(m.pair_geom1[i]))}" '
                    f'geom2="{id2name(m, "geom", int(m.pair_geom2[i]))}"')
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


def _pairs(m, root):
  """The `<pair>` elements in the Model's pair order (the compiler sorts pairs by their bodies):
  pair i is the element that names its two geoms, the k-th such when several do."""
  from numjoco.engine.io import id2name
  elems = [p for q in root.findall("contact") for p in q.findall("pair")]
  out, used = [], set()
  for i in range(int(m.npair)):
    geoms = {id2name(m, "geom", int(m.pair_geom1[i])), id2name(m, "geom", int(m.pair_geom2[i]))}
    hit = [k for k, p in enumerate(elems)
           if k not in used and {p.get("geom1"), p.get("geom2")} == geoms]
    if not hit:
      break
    used.add(hit[0])
    out.append(elems[hit[0]])
  return out


def save_copy(m, edits, opt_edits, out_path, opt0=None):
  """Write the model's source file with the edits applied to `out_path`; returns notes: the
  edits that could not be written (with why), and written ones that read differently once
  reloaded (a springyield of 0)."""
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
                        if isinstance(a.tag, str) and a.tag in _ACTUATOR_TAGS],
           "tendon": [t for q in root.findall("tendon") for t in q
                      if isinstance(t.tag, str) and t.tag in _TENDON_TAGS],
           "pair": _pairs(m, root)}
  degree = _degree_of(root)
  skipped = []
  for (field, index) in edits:
    kind, i = _element_of(m, field, index)
    attr = ATTR[field][1]
    lst = elems[kind]
    if i >= len(lst):
      skipped.append(f"{field}[{i}]: element not found in {m.source}")
      continue
    el = lst[i]
    val = _fmt(_value(m, field, index, degree), _digits(field))
    note = _yield_note(m, field, index)
    if note:
      skipped.append(note)
    if kind == "body" and attr == "mass":
      inert = el.find("inertial")
      if inert is None:
        skipped.append(f"body_mass[{i}]: the body has no <inertial> (mass comes from its geoms)")
        continue
      inert.set("mass", val)
    elif kind == "actuator" and el.tag == "adhesion" and attr == "damping":
      skipped.append(f"{field}[{i}]: not an attribute of <adhesion>")
    elif kind == "joint" and el.tag == "freejoint" and attr not in ("damping", "armature",
                                                                    "frictionloss"):
      skipped.append(f"{field}[{i}]: not an attribute of <freejoint>")
    else:
      el.set(attr, val)
  attrs, flags = option_attrs(opt_edits, opt0)
  if attrs or flags:
    if "actuatorgroupdisable" in attrs:   # one place only: the first <option>
      for o in root.findall("option"):
        o.attrib.pop("actuatorgroupdisable", None)
      if not attrs["actuatorgroupdisable"]:
        del attrs["actuatorgroupdisable"]
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
