"""Small pieces the panels share: colours, number-vector fields, widget rectangles."""
import math
import shutil

import numpy as np

RED = (1.0, 0.35, 0.3, 1.0)
YELLOW = (1.0, 0.8, 0.3, 1.0)
SPEEDS = (1 / 100, 1 / 50, 1 / 20, 1 / 10, 1 / 5, 1 / 2, 1.0, math.inf)   # the speed choices
_DIALOG = []


def has_dialog():
  """Whether portable_file_dialogs can show a dialog here (it needs zenity or kdialog on X)."""
  if not _DIALOG:
    _DIALOG.append(bool(shutil.which("zenity") or shutil.which("kdialog")))
  return _DIALOG[0]


def speed_label(s):
  """A speed factor as the Simulation panel lists it."""
  if math.isinf(s):
    return "as fast as possible"
  if s >= 1 or abs(1 / s - round(1 / s)) > 1e-9:
    return f"{s:.3g}x"
  return f"1/{round(1 / s)}x"


def vec_input(imgui, label, value, pad=False):
  """A text field of space-separated numbers; returns the new array on Enter, else None.
  With `pad`, fewer numbers than shown are accepted and the rest read as 0 (MJCF's optional
  polynomial terms)."""
  v = np.atleast_1d(np.asarray(value, float))
  text = " ".join(f"{x:.6g}" for x in v)
  changed, new = imgui.input_text(label, text, imgui.InputTextFlags_.enter_returns_true)
  if not changed:
    return None
  try:
    out = np.array([float(x) for x in new.replace(",", " ").split()])
  except ValueError:
    return None
  if pad and 0 < out.size < v.size:
    out = np.concatenate((out, np.zeros(v.size - out.size)))
  return out if out.size == v.size else None


def rect(imgui, ui, name):
  """Remember the last widget's screen rectangle under `name` (tests click on it)."""
  a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
  ui.rects[name] = (a.x, a.y, b.x, b.y)
