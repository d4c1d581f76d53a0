"""The viewer's key bindings, one table for the key handler (Viewer.on_key_press dispatches a
key to its command) and the help panel (F1 lists the rows with a label), and the mouse
bindings the help panel lists after them (handled by the mouse handlers in app/viewer.py).

A binding: pyglet key names (pyglet.window.key.<name>), the modifiers it needs, the command the
viewer executes (Viewer.execute: the viewer's own, or the simulation worker's) with one
argument tuple per key, and the help panel's row (label None: covered by the row above)."""
import dataclasses

# modifiers: "" any, "ctrl" Ctrl held, "ctrl+shift" Ctrl and Shift held, "noctrl" Ctrl not held
MODS = ("", "ctrl", "ctrl+shift", "noctrl")


@dataclasses.dataclass(frozen=True)
class Binding:
  keys: tuple          # pyglet.window.key names
  mods: str            # one of MODS
  command: str         # the command Viewer.execute runs
  args: tuple          # its arguments, one tuple per key
  label: object        # the help panel's key column, or None (not listed)
  help: str            # the help panel's text


BINDINGS = (
    Binding(("SPACE",), "", "toggle_pause", ((),), "Space", "pause / run"),
    Binding(("RIGHT",), "", "step_paused", ((),), "Right arrow",
            "step once (paused); forward through the history after going back"),
    Binding(("LEFT",), "", "history_back", ((),), "Left arrow",
            "one step back in the history (paused)"),
    Binding(("BACKSPACE",), "", "reset_to_key", ((),), "Backspace",
            "reset (to the selected keyframe, if any)"),
    Binding(("L",), "ctrl", "reload", ((),), "Ctrl+L", "reload from disk"),
    Binding(("MINUS", "EQUAL"), "", "speed_step", ((-1,), (1,)), "- / =", "slower / faster"),
    Binding(("BRACKETLEFT", "BRACKETRIGHT"), "", "camera_step", ((-1,), (1,)), "[ / ]",
            "previous / next model camera"),
    Binding(("ESCAPE",), "", "free_camera", ((),), "Esc", "free camera"),
    Binding(("TAB",), "", "toggle_panels", ((),), "Tab", "hide / show the panels"),
    Binding(("F1",), "", "toggle_help", ((),), "F1", "this help"),
    Binding(("P",), "ctrl+shift", "screenshot", ((True,),), None, "screenshot with the panels"),
    Binding(("P",), "ctrl", "screenshot", ((False,),), "Ctrl+P",
            "screenshot of the 3D view (PNG; Shift: with the panels)"),
    Binding(("R",), "ctrl", "toggle_recording", ((),), "Ctrl+R", "start / stop recording a video"),
    Binding(("F6",), "", "cycle_frames", ((),), "F6 / F7", "cycle frames / labels"),
    Binding(("F7",), "", "cycle_labels", ((),), None, "cycle labels"),
    Binding(("C", "F"), "noctrl", "toggle_option", (("contact_points",), ("contact_forces",)),
            "C / F", "contact points / forces"),
    Binding(("J", "E"), "noctrl", "toggle_option", (("joints",), ("constraints",)), "J / E",
            "joints / equality anchors"),
    Binding(("I", "M"), "noctrl", "toggle_option", (("inertia",), ("com",)), "I / M",
            "inertia boxes / centres of mass"),
    Binding(("T", "W", "S"), "noctrl", "toggle_option",
            (("transparency",), ("wireframe",), ("shadows",)), "T / W / S",
            "transparency / wireframe / shadows"),
    Binding(("V", "Y"), "noctrl", "toggle_option", (("tendons",), ("rangefinder",)), "V / Y",
            "tendons / rangefinder rays"),
    Binding(("SEMICOLON",), "noctrl", "toggle_option", (("skins",),), ";", "skins"),  # mjVIS_SKIN
    Binding(("_0", "_1", "_2", "_3", "_4", "_5"), "noctrl", "toggle_geom_group",
            tuple((g,) for g in range(6)), "0-5", "geom group 0-5"),
)

MOUSE = (
    ("Left drag", "rotate view"),
    ("Right drag", "move view (Shift: horizontal plane)"),
    ("Middle drag / scroll", "zoom"), ("Double-click", "select a body"),
    ("Click a contact point", "inspect it (Constraints section; C shows the points)"),
    ("Ctrl + right drag", "pull the selected body (Shift: horizontal plane)"),
    ("Ctrl + left drag", "twist the selected body"),
    ("Drop a file", "open that model"),
)

# the help panel's rows: the labelled bindings, then the mouse
HELP = tuple((b.label, b.help) for b in BINDINGS if b.label is not None) + MOUSE


def _mods_match(mods, ctrl, shift):
  return (mods == "" or (mods == "ctrl" and ctrl) or (mods == "ctrl+shift" and ctrl and shift)
          or (mods == "noctrl" and not ctrl))


def find(name, ctrl=False, shift=False):
  """(command, args) of key `name` (a pyglet.window.key name) with those modifiers held: the
  first binding in the table that matches, or None."""
  for b in BINDINGS:
    if name in b.keys and _mods_match(b.mods, ctrl, shift):
      return b.command, b.args[b.keys.index(name)]
  return None


# GLFW's key codes (what mujoco.viewer's key_callback receives) of pyglet's non-character keys
_GLFW_SPECIAL = {
    "ESCAPE": 256, "ENTER": 257, "RETURN": 257, "TAB": 258, "BACKSPACE": 259, "INSERT": 260,
    "DELETE": 261, "RIGHT": 262, "LEFT": 263, "DOWN": 264, "UP": 265, "PAGEUP": 266,
    "PAGEDOWN": 267, "HOME": 268, "END": 269, "CAPSLOCK": 280, "SCROLLLOCK": 281,
    "NUMLOCK": 282, "PRINT": 283, "PAUSE": 284, "LSHIFT": 340, "LCTRL": 341, "LALT": 342,
    "RSHIFT": 344, "RCTRL": 345, "RALT": 346, "MENU": 348,
    **{f"F{k}": 289 + k for k in range(1, 26)}}


def glfw_code(symbol):
  """GLFW's key code of pyglet key `symbol` (printable keys: their ASCII code, letters upper
  case, as GLFW_KEY_A = 65), or None for a key GLFW has no code for."""
  if 32 <= symbol < 127:
    return ord(chr(symbol).upper())
  from pyglet.window import key
  return _GLFW_SPECIAL.get(key.symbol_string(symbol))
