"""Physics panel: options, flags, contact override, per-element parameters, export of edits."""
import numpy as np

from numjoco.app.panels.common import rect, vec_input

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast", "discrete")
SOLVERS = ("PGS", "CG", "Newton")
CONES = ("pyramidal", "elliptic")

# element kind -> (mjtObj name for names, count attribute, [(label, field, width)])
ELEMENTS = {
    "geom": ("geom", "ngeom", [("solref", "geom_solref", 2), ("solimp", "geom_solimp", 5),
                               ("friction", "geom_friction", 3), ("margin", "geom_margin", 1),
                               ("gap", "geom_gap", 1), ("solmix", "geom_solmix", 1),
                               ("rgba", "geom_rgba", 4), ("adhesion", "geom_adhesion", 1),
                               ("surfacevel", "geom_surfacevel", 6)]),
    "joint": ("joint", "njnt", [("solreflimit", "jnt_solref", 2),
                                ("solimplimit", "jnt_solimp", 5),
                                ("stiffness", "jnt_stiffness", 3),
                                ("springyield", "jnt_springyield", 1)]),
    "dof": ("joint", "nv", [("damping", "dof_damping", 3), ("frictionloss", "dof_frictionloss", 1),
                            ("armature", "dof_armature", 1)]),
    "equality": ("equality", "neq", [("solref", "eq_solref", 2), ("solimp", "eq_solimp", 5)]),
    "body": ("body", "nbody", [("mass", "body_mass", 1), ("gravcomp", "body_gravcomp", 1)]),
    "actuator": ("actuator", "nactuator", [("gear", "actuator_gear", 6),
                                    ("ctrlrange", "actuator_ctrlrange", 2),
                                    ("damping", "actuator_damping", 3)]),
    "tendon": ("tendon", "ntendon", [("stiffness", "tendon_stiffness", 3),
                                     ("damping", "tendon_damping", 3),
                                     ("frictionloss", "tendon_frictionloss", 1),
                                     ("springyield", "tendon_springyield", 1)]),
}
# linear coefficient -> its higher-order terms (MuJoCo 4's polynomial springs and dampers): one
# field "a b c" in the editor, as in the MJCF attribute
POLY = {"jnt_stiffness": "jnt_stiffnesspoly", "dof_damping": "dof_dampingpoly",
        "tendon_stiffness": "tendon_stiffnesspoly", "tendon_damping": "tendon_dampingpoly",
        "actuator_damping": "actuator_dampingpoly"}
_PER_OUTPUT = ("actuator_gear", "actuator_ctrlrange")
# yield fields -> the plastic address field that says whether the element has a plastic state
PLASTIC = {"jnt_springyield": "jnt_plasticadr", "tendon_springyield": "tendon_plasticadr"}


def _opt_float(imgui, cmd, m, name, label=None, fmt="%.6g"):
  v = float(getattr(m.opt, name))
  changed, new = imgui.input_float(label or name, v, 0.0, 0.0, fmt,
                                   imgui.InputTextFlags_.enter_returns_true)
  if changed and new != v:
    cmd.send("opt", name, new)


def _opt_vec(imgui, cmd, m, name):
  new = vec_input(imgui, name, getattr(m.opt, name))
  if new is not None:
    cmd.send("opt", name, new)


def _tree(imgui, ui, name):
  """A tree node; `ui.expand` names nodes to open (keyboard-less scripting, tests)."""
  if name in ui.expand:
    imgui.set_next_item_open(True)
    ui.expand.discard(name)
  return imgui.tree_node(name)


def _poly_input(imgui, ui, cmd, m, lab, field):
  """One "a b c" field for a linear coefficient and its polynomial terms (1 to 3 numbers typed,
  the missing ones 0, as MJCF reads them); sends an edit of each part that changed."""
  i, poly = ui.elem_id, POLY[field]
  cur = np.concatenate(([getattr(m, field)[i]], getattr(m, poly)[i]))
  new = vec_input(imgui, f"{lab}##{field}", cur, pad=True)
  rect(imgui, ui, f"elem_{field}")
  if new is None:
    return
  if new[0] != cur[0]:
    cmd.send("model", field, i, new[0])
  if np.any(new[1:] != cur[1:]):
    cmd.send("model", poly, i, new[1:])


def draw(imgui, ui, cmd):
  """The Physics section: every edit is a command (`cmd.send`) to the worker (applied at the
  next step)."""
  from numjoco.engine.types import mjtDisableBit, mjtEnableBit
  m = ui.m
  _opt_float(imgui, cmd, m, "timestep")
  for name, items in (("integrator", INTEGRATORS), ("solver", SOLVERS), ("cone", CONES)):
    cur = int(getattr(m.opt, name))
    changed, i = imgui.combo(name, cur, list(items))
    if changed:
      cmd.send("opt", name, i)
  changed, it = imgui.input_int("iterations", int(m.opt.iterations))
  if changed and it >= 1:
    cmd.send("opt", "iterations", it)
  for name in ("tolerance", "impratio", "density", "viscosity", "sleep_tolerance"):
    _opt_float(imgui, cmd, m, name)
  for name in ("gravity", "wind"):
    _opt_vec(imgui, cmd, m, name)
  if imgui.tree_node("Disable flags"):
    flags = int(m.opt.disableflags)
    for bit in mjtDisableBit:
      changed, on = imgui.checkbox(bit.name.lower(), bool(flags & bit))
      if changed:
        cmd.send("opt", "disableflags", (flags | bit) if on else (flags & ~bit))
    imgui.tree_pop()
  if imgui.tree_node("Enable flags"):
    flags = int(m.opt.enableflags)
    for bit in mjtEnableBit:
      changed, on = imgui.checkbox(bit.name.lower() + "##en", bool(flags & bit))
      if changed:
        cmd.send("opt", "enableflags", (flags | bit) if on else (flags & ~bit))
    imgui.tree_pop()
  if imgui.tree_node("Contact override"):
    imgui.text_disabled("used when the 'override' enable flag is on")
    _opt_float(imgui, cmd, m, "o_margin")
    _opt_vec(imgui, cmd, m, "o_solref")
    _opt_vec(imgui, cmd, m, "o_solimp")
    imgui.tree_pop()
  if _tree(imgui, ui, "Elements"):
    kinds = list(ELEMENTS)
    _, ui.elem_kind = imgui.combo("kind", ui.elem_kind, kinds)
    kind = kinds[ui.elem_kind]
    objname, count, fields = ELEMENTS[kind]
    n = getattr(m, count)
    if n:
      def label(i):
        if kind == "dof":
          return f"dof {i} ({ui.name('joint', int(m.dof_jntid[i]))})"
        return f"{i}: {ui.name(objname, i)}"
      ui.elem_id = min(ui.elem_id, n - 1)
      _, ui.elem_id = imgui.combo("element", ui.elem_id, [label(i) for i in range(n)])
      if kind == "actuator" and not m.nu == m.nactuator == m.nout:
        # gear is per force output and ctrlrange per control (MuJoCo 4's multi-input
        # actuators): element i is not row i of those fields
        imgui.text_disabled("actuators with several inputs or outputs: edit gear and "
                            "ctrlrange in the XML")
        fields = [f for f in fields if f[1] not in _PER_OUTPUT]
      for k in [k for k in ui.rects if k.startswith("elem_")]:
        del ui.rects[k]   # the fields shown this frame only
      for lab, field, _w in fields:
        if field in PLASTIC:
          if getattr(m, PLASTIC[field])[ui.elem_id] < 0:
            imgui.text_disabled(f"{lab}: elastic (springyield > 0 in the XML makes it plastic)")
            continue
          if field == "jnt_springyield" and int(m.jnt_type[ui.elem_id]) in (1, 3):
            lab += " (rad)"   # the Model's unit; the export writes the XML's
        if field in POLY:
          _poly_input(imgui, ui, cmd, m, lab, field)
          continue
        new = vec_input(imgui, f"{lab}##{field}", getattr(m, field)[ui.elem_id])
        rect(imgui, ui, f"elem_{field}")
        if new is not None:
          cmd.send("model", field, ui.elem_id, new if new.size > 1 else new[0])
    else:
      imgui.text_disabled(f"the model has no {kind}")
    imgui.tree_pop()
  if imgui.tree_node("Export edits"):
    if imgui.button("Copy MJCF diff to clipboard"):
      cmd.send("copy_mjcf_diff")
    _, ui.save_path = imgui.input_text("##save", ui.save_path or "edited.xml")
    imgui.same_line()
    if imgui.button("Save copy"):
      cmd.send("save_copy", ui.save_path)
    imgui.tree_pop()
