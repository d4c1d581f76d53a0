"""The viewer driven by a script that owns the stepping (numjoco.viewer.launch_passive, as
mujoco.viewer.launch_passive): the window runs on its own thread and draws what the script's
`handle.sync()` last published; the user's mouse drags and panel edits wait in a queue until that
`sync()` applies them to the script's own Model and Data.

- `PassiveSimulation` stands where the viewer's Simulation worker stands, with no thread of its
  own: `sync_script()` (the script's thread) applies the queued commands with the worker's own
  code (Simulation._apply) and publishes a snapshot into the same triple buffer the window reads.
  The commands that would step, pause or replace the model are the script's to give.
- `UserScene` holds the script's extra geoms (mjv_initGeom / mjv_connector into a handle's
  user_scn); `ScriptOverlay` holds it with the script's texts and figures, under the handle's
  lock.
- `Handle` is what launch_passive returns.
"""
import dataclasses
import threading

import numpy as np

from numjoco.app.sim import Simulation

# commands the window may send that belong to the script in passive mode: stepping, pacing,
# replacing the model
SCRIPT_OWNS = ("pause", "step", "speed", "load", "reload", "history")
# mjtGeom codes of the shapes a user scene draws, and MuJoCo's decoration types
SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX = 2, 3, 4, 5, 6
ARROW, ARROW1, ARROW2, LINE = 100, 101, 102, 103
_GEOM_NAMES = {"sphere": SPHERE, "capsule": CAPSULE, "ellipsoid": ELLIPSOID,
               "cylinder": CYLINDER, "box": BOX, "arrow": ARROW, "arrow1": ARROW1,
               "arrow2": ARROW2, "line": LINE}


def geom_code(kind):
  """mjtGeom code of `kind`: an int, an mjtGeom-like enum or a name ('sphere', 'arrow', ...)."""
  if isinstance(kind, str):
    code = _GEOM_NAMES.get(kind.lower().removeprefix("mjgeom_"))
    if code is None:
      raise ValueError(f"user geom type {kind!r}: one of {', '.join(_GEOM_NAMES)}")
    return code
  code = int(kind)
  if code not in _GEOM_NAMES.values():
    raise ValueError(f"user geom type {code}: one of {sorted(_GEOM_NAMES.values())} "
                     f"({', '.join(_GEOM_NAMES)})")
  return code


@dataclasses.dataclass
class UserGeom:
  """One geom of a UserScene, as mjvGeom: mjtGeom `type`, `size` (MuJoCo's: radius, half-length
  ...), `pos`, `mat` (3x3 rotation) and `rgba`; connectors (arrows, lines) keep their end points
  and width."""
  type: int
  size: np.ndarray
  pos: np.ndarray
  mat: np.ndarray
  rgba: np.ndarray
  ends: tuple = None     # (p0, p1) of a connector
  width: float = 0.0


class UserScene:
  """Geoms a script adds to what the viewer draws (mujoco.viewer's handle.user_scn): spheres,
  capsules, ellipsoids, cylinders, boxes, arrows and lines, at most `maxgeom`. Change it inside
  `with handle.lock():`; the window draws it from then on, until `clear()`."""

  def __init__(self, maxgeom=10000):
    self.maxgeom = int(maxgeom)
    self.geoms = []

  @property
  def ngeom(self):
    return len(self.geoms)

  def clear(self):
    """Remove every user geom (MuJoCo: user_scn.ngeom = 0)."""
    self.geoms.clear()

  def _room(self):
    if len(self.geoms) >= self.maxgeom:
      raise ValueError(f"user scene full: maxgeom={self.maxgeom} geoms")

  def add_geom(self, type, size, pos, mat=None, rgba=(0.5, 0.5, 0.5, 1.0)):
    """A geom of mjtGeom `type` (or a name) with MuJoCo's `size`, at `pos`, rotated by `mat`
    (3x3 or 9 values, default identity), coloured `rgba` (mjv_initGeom); returns it."""
    self._room()
    code = geom_code(type)
    if code >= ARROW:
      raise ValueError("arrows and lines join two points: use add_connector")
    size = np.zeros(3) if size is None else np.asarray(size, float).ravel()
    size = np.concatenate([size, np.zeros(3)])[:3]
    mat = np.eye(3) if mat is None else np.asarray(mat, float).reshape(3, 3)
    g = UserGeom(code, size, _vec3(pos), mat, _rgba(rgba))
    self.geoms.append(g)
    return g

  def add_connector(self, type, width, p0, p1, rgba=(0.5, 0.5, 0.5, 1.0)):
    """A capsule, cylinder, box, arrow, arrow1, arrow2 or line of `width` from p0 to p1
    (mjv_connector); returns it."""
    self._room()
    code = geom_code(type)
    if code in (SPHERE, ELLIPSOID):
      raise ValueError("a connector is a capsule, cylinder, box, arrow or line")
    p0, p1 = _vec3(p0), _vec3(p1)
    g = UserGeom(code, np.array([width, width, np.linalg.norm(p1 - p0) / 2]), (p0 + p1) / 2,
                 np.eye(3), _rgba(rgba), (p0, p1), float(width))
    self.geoms.append(g)
    return g


def _vec3(p):
  p = np.asarray(p, float).ravel()
  if p.shape != (3,) or not np.isfinite(p).all():
    raise ValueError(f"a point needs 3 finite numbers, got {p.tolist()}")
  return p


def _rgba(c):
  c = np.asarray(c, float).ravel()
  if c.shape == (3,):
    c = np.append(c, 1.0)
  if c.shape != (4,):
    raise ValueError(f"rgba needs 3 or 4 numbers, got {c.tolist()}")
  return c


GRID = ("topleft", "topright", "bottomleft", "bottomright", "top", "bottom", "left", "right")


class ScriptOverlay:
  """What a script adds to the window, read by the window's thread under `lock`: the user
  scene, texts (gridpos, text1, text2) as mjr_overlay draws them, and figures (title,
  {label: (x, y)}) plotted in their own panel."""

  def __init__(self):
    self.lock = threading.RLock()
    self.user_scn = UserScene()
    self.texts = []
    self.figures = []

  def set_texts(self, texts):
    """Replace the texts: each (gridpos, text1, text2), (text1, text2) or a string; gridpos one
    of GRID (mjtGridPos: topleft ...); text1 and text2 are drawn as two columns, as mjr_overlay."""
    out = []
    for t in ([texts] if isinstance(texts, str) else texts):
      if isinstance(t, str):
        t = ("topleft", t, "")
      elif len(t) == 2:
        t = ("topleft", *t)
      pos = str(t[0]).lower().removeprefix("mjgrid_")
      if pos not in GRID:
        raise ValueError(f"text position {t[0]!r}: one of {', '.join(GRID)}")
      out.append((pos, str(t[1]), str(t[2])))
    with self.lock:
      self.texts = out

  def set_figures(self, figures):
    """Replace the figures: each (title, {label: (x, y)}) or (title, {label: y}) (x then the
    sample index); one plot per figure, one line per label."""
    out = []
    for title, lines in figures:
      series = {}
      for label, v in dict(lines).items():
        if isinstance(v, tuple) and len(v) == 2:
          x, y = np.asarray(v[0], float).ravel(), np.asarray(v[1], float).ravel()
        else:
          y = np.asarray(v, float).ravel()
          x = np.arange(len(y), dtype=float)
        if len(x) != len(y):
          raise ValueError(f"figure {title!r}, line {label!r}: {len(x)} x values, {len(y)} y")
        series[str(label)] = (x, y)
      out.append((str(title), series))
    with self.lock:
      self.figures = out


class PassiveSimulation(Simulation):
  """The viewer's simulation source when a script steps (Model and Data are the script's): the
  window's commands are queued and applied in `sync_script()`, on the script's thread."""

  record_forward = False    # samples draw the script's Data as it is (no forward of its own)
  keep_history = False      # the script steps: its own states are its business

  def __init__(self, m, d, path=""):
    super().__init__(path=path)
    self.script_lock = threading.RLock()
    self.notes = []          # what the last syncs refused (commands the script owns)
    self._rate0 = None       # (wall, sim time) at the start of the rate window
    self._adopt_script(m, d)

  def _adopt_script(self, m, d):
    with self._lock:
      self.m, self.d = m, d
      self._model_ref = m
      self._bufs = self._new_buffers(m, d)
      self._status.model_version += 1
      self._status.physics = True
    self.edits, self.opt_edits = {}, {}
    self.opt0 = {k: np.copy(getattr(m.opt, k))
                 for k in ("disableflags", "enableflags", "disableactuator")}
    self._warn0 = d.warning_number.copy()

  def _rates(self):
    """The script's real-time factor and steps per second, over half-second windows."""
    import time
    now, t = time.perf_counter(), float(self.d.time)
    if self._rate0 is None or t < self._rate0[1]:
      self._rate0 = (now, t)
    elif now - self._rate0[0] > 0.5:
      wall, sim = now - self._rate0[0], t - self._rate0[1]
      self._set(rtf=sim / wall, steps_per_s=sim / self.m.opt.timestep / wall)
      self._rate0 = (now, t)

  def start(self):
    """Nothing runs on its own: the script calls sync_script()."""
    return self

  def stop(self, timeout=5.0):
    self._stop = True

  def sync_script(self):
    """Apply the window's queued commands to the script's Model and Data, take a recording
    sample when one is due, and publish a snapshot for the window (script thread)."""
    import queue
    with self.script_lock:
      while True:
        try:
          name, args = self._cmds.get_nowait()
        except queue.Empty:
          break
        if name in SCRIPT_OWNS:
          self.notes = (self.notes + [f"'{name}' is the script's to do in a passive viewer"])[-5:]
          continue
        try:
          self._apply(name, args)
        except Exception as e:  # noqa: BLE001 - shown in the window; the script goes on
          self._set(error=f"{name}: {e}")
      self._rates()
      if self._rec is not None:
        clock = self._rec["clock"]
        self._record_reanchor()    # the script may have reset or set an earlier state
        while self._rec is not None and self.d.time >= clock.next_time - 1e-12:
          self._record_sample()
      self._publish()


@dataclasses.dataclass
class Perturb:
  """The mouse perturbation the window holds (mjvPerturb's select and active), read-only."""
  select: int
  active: int


class Handle:
  """What launch_passive returns (mujoco.viewer.Handle): the script steps its own Model and
  Data and calls `sync()`; the window draws on its own thread."""

  def __init__(self, sim, overlay, thread, viewer_box):
    self._sim = sim
    self._overlay = overlay
    self._thread = thread
    self._box = viewer_box     # [Viewer] once the window thread has made it
    self._close = threading.Event()

  @property
  def _viewer(self):
    return self._box[0] if self._box else None

  def sync(self, state_only=False):
    """Publish the script's Data to the window and apply the window's pending mouse
    perturbation and panel edits to the script's Model and Data (never waits for a frame)."""
    if not self.is_running():
      return
    self._sim.sync_script()

  def is_running(self):
    """True until the window is closed (by the user or `close()`)."""
    v = self._viewer
    return self._thread.is_alive() and v is not None and not v.closed

  @property
  def close_requested(self):
    """Whether `close()` was called (the window's thread closes it at its next frame)."""
    return self._close.is_set()

  def close(self):
    """Close the window and wait for its thread."""
    self._close.set()
    self._thread.join(30)

  def lock(self):
    """`with handle.lock():` the window reads nothing of the handle's shared state (cam, opt,
    user_scn, texts, figures) meanwhile; the script's Model and Data are not read by the
    window at all (it draws published snapshots)."""
    return self._overlay.lock

  @property
  def cam(self):
    """The window's camera (render.camera.Camera: type, lookat, distance, azimuth, elevation,
    fixedcamid, trackbodyid), edited in place."""
    return self._viewer.camera

  @property
  def opt(self):
    """The window's VisOptions (what is drawn), edited in place."""
    return self._viewer.opts

  @property
  def pert(self):
    """The window's perturbation: the selected body and the active bits (1 translate, 2
    rotate) of a drag under way."""
    v = self._viewer
    return Perturb(int(v.selected), int(v.pert.active) if v.pert is not None else 0)

  def screenshot(self, ui=False, timeout=30.0):
    """The window's 3D view (with the panels when `ui`) as an (h, w, 3) uint8 image, drawn on
    the window's thread from the last sync."""
    return self._viewer.post(lambda v: v.screenshot(ui=ui)).result(timeout)

  @property
  def user_scn(self):
    return self._overlay.user_scn

  @property
  def notes(self):
    """What the window asked that a passive viewer leaves to the script (pause, step, ...)."""
    return list(self._sim.notes)

  def set_texts(self, texts):
    self._overlay.set_texts(texts)

  def set_figures(self, figures):
    self._overlay.set_figures(figures)

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
