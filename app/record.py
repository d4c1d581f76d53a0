"""`numjoco record MODEL.xml -o out.mp4`: simulate a model and render it offscreen to a video.

Frames are sampled at fixed *simulation* time intervals: frame k shows the state at
t0 + k / fps (the nearest step), so the video plays at true speed whatever the rendering cost.
Rendering uses numjoco.Renderer through EGL (no X server); encoding runs on render.video's
background thread. The file
is always finalised, also on Ctrl+C (exit status 130) and when the simulation diverges: a step
meets a NaN, inf or huge qpos, qvel or qacc (MuJoCo's checks, warning mjWARN_BADQPOS, BADQVEL or
BADQACC), and the recording stops before that state is drawn, names the warning, the index and
the time, and exits with status 3. `record()` is the reusable part (it raises SimulationDiverged
then).

Batches: several models, keyframes (`--key` repeated) or control vectors (`--ctrl` repeated) on
the command line record every combination, or `--batch RUNS.csv` lists the runs (columns model,
and optionally key, ctrl, seconds, camera, output); `-o` is then a folder. The runs go to worker
processes (`--jobs`, default the cores) or to a Ray cluster (`--ray ADDRESS`) as app/workers.py
runs them; a run that diverges or fails is reported in the summary and the others go on.
"""
import argparse
import dataclasses
import math
import os
import sys
import time

import numpy as np

USAGE_EXAMPLE = ("numjoco record MODEL.xml -o out.mp4 --seconds 5 --fps 30 --size 1280x720 "
                 "[--camera NAME] [--key N|NAME] [--ctrl=0.1,0.2,...] [--png DIR]\n"
                 "       numjoco record A.xml B.xml [--key 0 --key 1] -o OUT_DIR [--jobs N | "
                 "--ray ADDRESS]\n       numjoco record --batch RUNS.csv -o OUT_DIR")


class RecordError(ValueError):
  """A bad argument to `record` (size, camera, ctrl, keyframe): the message names it."""


class SimulationDiverged(RuntimeError):
  """The simulation diverged while recording: `divergence` (numjoco.engine.api.Divergence:
  MuJoCo's warning name, the bad index, the time) and the partial `stats`; the file holds the
  frames before it and is finalised (it plays)."""

  def __init__(self, divergence, stats):
    super().__init__(f"simulation diverged: {divergence}; recording stopped after "
                     f"{stats.frames} frame(s)")
    self.divergence, self.stats = divergence, stats


EXIT_DIVERGED = 3   # `numjoco record`'s exit status when the simulation diverged


@dataclasses.dataclass
class RecordStats:
  """What a recording did and where its wall time went (seconds)."""
  frames: int = 0             # frames rendered (and written)
  steps: int = 0              # physics steps taken
  sim_seconds: float = 0.0    # simulated time covered by the frames, frames / fps
  wall: float = 0.0           # total wall time, from the first frame to the finalised file
  physics: float = 0.0        # numjoco.step + numjoco.forward
  render: float = 0.0         # the scene (Renderer.update_scene), drawing, reading back
  encode: float = 0.0         # the encoder thread's busy time (overlaps the others)
  wait: float = 0.0           # blocked handing frames to the encoder, writing PNGs, finalising
  interrupted: bool = False   # stopped by KeyboardInterrupt (the file is still complete)
  diverged: bool = False      # stopped by a divergence (SimulationDiverged; the file is complete)


def parse_size(text):
  """(width, height) from 'WIDTHxHEIGHT' (e.g. '1280x720'), or a RecordError."""
  try:
    w, h = (int(v) for v in str(text).lower().split("x"))
  except ValueError:
    raise RecordError(f"size {text!r}: expected WIDTHxHEIGHT, e.g. 1280x720") from None
  if not (1 <= w <= 8192 and 1 <= h <= 8192):
    raise RecordError(f"size {text!r}: width and height must be between 1 and 8192")
  return w, h


def parse_ctrl(text, m):
  """The control vector (m.nu values) from '0.1,0.2,...' or a sequence, or a RecordError."""
  if isinstance(text, str):
    try:
      vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
      raise RecordError(f"ctrl {text!r}: expected {m.nu} comma-separated numbers") from None
  else:
    vals = [float(v) for v in np.ravel(text)]
  if len(vals) != m.nu:
    raise RecordError(f"ctrl has {len(vals)} value(s) but the model has {m.nu} control(s)")
  if not np.all(np.isfinite(vals)):
    raise RecordError(f"ctrl {text!r}: values must be finite")
  return np.array(vals)


def make_camera(m, name=None):
  """A render.Camera: the model's default free camera (name None, '' or 'free'), or the model
  camera called `name` or numbered `name` (an int or a string of digits)."""
  import numjoco
  from numjoco.render.camera import Camera, CameraType
  cam = Camera.default_for(m)
  if name is None or str(name) in ("", "free", "-1"):
    return cam
  s = str(name)
  i = int(s) if s.lstrip("-").isdigit() else numjoco.name2id(m, "camera", s)
  if not 0 <= i < m.ncam:
    names = [numjoco.id2name(m, "camera", k) or str(k) for k in range(m.ncam)]
    raise RecordError(f"camera {name!r} is not in the model (cameras: "
                      f"{', '.join(names) if names else 'none'}; or 'free')")
  cam.type, cam.fixedcamid = CameraType.FIXED, i
  return cam


def frame_step(k, fps, timestep):
  """Steps from t0 to frame k: round(k / (fps * timestep)), so frame k shows t0 + k / fps to the
  nearest step and the rounding never accumulates (the viewer's recorder uses this too)."""
  return int(math.floor(k / (float(fps) * float(timestep)) + 0.5))


def frame_steps(nframes, fps, timestep):
  """frame_step of frames 0 .. nframes-1, as an int64 array."""
  return np.floor(np.arange(nframes) / (float(fps) * float(timestep)) + 0.5).astype(np.int64)


class FrameClock:
  """When a recording of a running simulation takes its frames, for a loop that steps in chunks
  (the viewer's physics worker): frame k is due at simulation time t0 + k / fps.

  Per chunk: `n = min(chunk, clock.steps_to_next(d.time, m.opt.timestep))`, step n, and when
  `clock.steps_to_next(...)` is then 0, make the frame (forward, capture) and call `advance()`.
  Works in time, not steps, so a timestep edited mid-recording keeps the video at true speed.
  """

  def __init__(self, fps, t0):
    self.fps, self.t0, self.k = float(fps), float(t0), 0

  @property
  def next_time(self):
    """Simulation time of the next frame."""
    return self.t0 + self.k / self.fps

  def steps_to_next(self, time_now, timestep):
    """Steps from `time_now` to the next frame (to the nearest step; 0: take it now)."""
    return max(0, int(math.floor((self.next_time - time_now) / timestep + 0.5)))

  def advance(self):
    """The next frame was taken."""
    self.k += 1


class Progress:
  """A one-line progress bar on a text stream (redrawn in place on a terminal, one line per
  second otherwise)."""

  def __init__(self, total, stream=None, width=30):
    self.total, self.width = max(1, int(total)), width
    self.stream = stream or sys.stderr
    self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
    self.t0 = None                 # the first call: loading and compiling are not in the rate
    self._last = -math.inf

  def __call__(self, done, sim_time, force=False):
    """Show `done` frames of `total` at simulated time `sim_time`."""
    now = time.perf_counter()
    if self.t0 is None:
      self.t0 = now - 1e-9
      self._first = done
    if not force and now - self._last < (0.1 if self.tty else 1.0):
      return
    self._last = now
    wall = now - self.t0
    fill = int(self.width * done / self.total)
    rate = (done - self._first) / wall
    line = (f"[{'#' * fill}{'.' * (self.width - fill)}] {done}/{self.total} frames  "
            f"t={sim_time:.3f} s  {rate:.1f} frames/s")
    self.stream.write(("\r" + line) if self.tty else line + "\n")
    self.stream.flush()

  def end(self):
    """Finish the line."""
    if self.tty:
      self.stream.write("\n")
      self.stream.flush()


def _fresh_data(m, key):
  """New Data of `m` reset to keyframe `key` (None: the model's defaults)."""
  import numjoco
  d = numjoco.make_data(m)
  try:
    numjoco.reset_data(m, d, key)
  except ValueError as e:
    raise RecordError(str(e)) from None
  return d


def record(m, path, seconds=5.0, fps=30, size=(1280, 720), camera=None, *, d=None, key=None,
           ctrl=None, opts=None, samples=None, png_dir=None, progress=None, on_frame=None,
           writer_options=None, controller=None):
  """Simulate model `m` for `seconds` and write `round(seconds * fps)` frames to `path`.

  Args:
    m: the Model.
    path: video file (.mp4, .mkv ...; H.264 yuv420p), or None to write only PNGs.
    seconds, fps: simulated duration and frames per simulated second.
    size: (width, height) in pixels, or 'WIDTHxHEIGHT'.
    camera: a render.Camera, a model camera's name or id, or None for the free camera.
    d: Data to run from (stepped in place); default: fresh Data reset to `key`.
    key: keyframe index or name to reset to (only when `d` is None).
    ctrl: controls held for the whole recording ('0.1,0.2' or m.nu numbers).
    opts: render.VisOptions.
    samples: multisample anti-aliasing (0 or 1: off); default: the model's
      <visual><quality offsamples> (MuJoCo's offscreen default, 4).
    png_dir: also save every frame as png_dir/frame_00000.png, ...
    progress: callable(frames_done, sim_time) (e.g. a Progress), or None.
    on_frame: callable(k, d, image) after frame k is rendered (d is at the frame's time).
    writer_options: extra keyword arguments for render.video.VideoWriter (crf, preset ...).
    controller: callable(m, d) before each step (sets d.ctrl ...); the steps then run one by one.

  Returns:
    RecordStats. A KeyboardInterrupt stops the recording, finalises the file and re-raises
    (the partial stats are on the exception as `.stats`). A divergence (a step meets a bad
    qpos, qvel or qacc; see numjoco.engine.api.Divergence) stops it before the bad or reset
    state is drawn, finalises the file and raises SimulationDiverged (with `.stats`).
  """
  import numjoco
  from numjoco.engine import api
  from numjoco.render.camera import Camera
  from numjoco.render.headless import save_png
  from numjoco.render.video import VideoWriter

  if isinstance(size, str):
    size = parse_size(size)
  w, h = (int(v) for v in size)
  if not (w >= 1 and h >= 1):
    raise RecordError(f"size {w}x{h}: width and height must be positive")
  if not (isinstance(fps, (int, float, np.number)) and math.isfinite(fps) and fps > 0):
    raise RecordError(f"fps must be a positive number, got {fps!r}")
  if not (math.isfinite(seconds) and seconds > 0):
    raise RecordError(f"seconds must be a positive number, got {seconds!r}")
  if path is None and png_dir is None:
    raise RecordError("nothing to write: give a video path, a PNG folder, or both")
  nframes = max(1, int(round(seconds * fps)))
  if d is None:
    d = _fresh_data(m, key)
  if ctrl is not None:
    d.ctrl[:] = parse_ctrl(ctrl, m)
  cam = camera if isinstance(camera, Camera) else make_camera(m, camera)
  if png_dir is not None:
    os.makedirs(png_dir, exist_ok=True)

  stats = RecordStats()
  targets = frame_steps(nframes, fps, m.opt.timestep)
  t_start = time.perf_counter()
  numjoco.forward(m, d)
  renderer = numjoco.Renderer(m, h, w, samples=samples, check_size=False)
  writer = None
  try:
    if path is not None:
      writer = VideoWriter(path, w, h, fps, **(writer_options or {}))
    done = 0
    for k in range(nframes):
      t = time.perf_counter()
      if targets[k] > done:
        if controller is None:
          n, div = api.step_checked(m, d, int(targets[k] - done))
        else:
          n, div = 0, None
          while div is None and n < targets[k] - done:
            controller(m, d)
            n1, div = api.step_checked(m, d, 1)
            n += n1
        if div is None and api.state_is_bad(d):
          n1, div = api.step_checked(m, d, 1)   # the next step's check, now: never draw it
          n += n1
        stats.steps += n
        if div is not None:
          raise SimulationDiverged(div, stats)
        done = int(targets[k])
        numjoco.forward(m, d)     # after a step, Data's kinematics lag qpos by one step
      t1 = time.perf_counter()
      renderer.update_scene(d, cam, opts)
      image = renderer.render()
      t2 = time.perf_counter()
      if writer is not None:
        writer.write(image)
      if png_dir is not None:
        save_png(os.path.join(png_dir, f"frame_{k:05d}.png"), image)
      t3 = time.perf_counter()
      stats.physics += t1 - t
      stats.render += t2 - t1
      stats.wait += t3 - t2
      stats.frames = k + 1
      if on_frame is not None:
        on_frame(k, d, image)
      if progress is not None:
        progress(k + 1, float(d.time))
  except KeyboardInterrupt as e:
    stats.interrupted = True
    e.stats = stats
    raise
  except SimulationDiverged:
    stats.diverged = True
    raise
  finally:
    renderer.close()
    if writer is not None:
      t = time.perf_counter()
      writer.close()           # also on errors and Ctrl+C: the file is always playable
      stats.wait += time.perf_counter() - t
      stats.encode = writer.encode_seconds
    stats.sim_seconds = stats.frames / fps
    stats.wall = time.perf_counter() - t_start
  return stats


def screenshot(m, path, size=(1280, 720), camera=None, *, d=None, key=None, opts=None,
               samples=None):
  """Render the state of `d` (default: fresh Data at `key`) to the PNG file `path`; returns the
  (height, width, 3) image. Nothing is stepped."""
  import numjoco
  from numjoco.render.camera import Camera
  from numjoco.render.headless import save_png
  w, h = parse_size(size) if isinstance(size, str) else (int(v) for v in size)
  if d is None:
    d = _fresh_data(m, key)
  numjoco.forward(m, d)
  cam = camera if isinstance(camera, Camera) else make_camera(m, camera)
  with numjoco.Renderer(m, h, w, samples=samples, check_size=False) as renderer:
    renderer.update_scene(d, cam, opts)
    image = renderer.render()
  save_png(path, image)
  return image


def _parse(argv):
  p = argparse.ArgumentParser(
      prog="numjoco record", description=__doc__.splitlines()[0], usage=USAGE_EXAMPLE,
      epilog="exit status: 0 done; 1 no EGL or the encoder failed; 2 bad input; 3 the simulation "
             "diverged (a NaN, inf or huge qpos, qvel or qacc: the message names MuJoCo's warning, "
             "the index and the time; the file holds the frames before it and plays); "
             "130 Ctrl+C (the file plays)")
  p.add_argument("model", nargs="*", help="MJCF file (several: a batch)")
  p.add_argument("-o", "--output", help="video file to write (.mp4, .mkv ...); a folder for a batch")
  p.add_argument("--batch", default=None, metavar="RUNS.csv",
                 help="a batch: one run per row (columns model, key, ctrl, seconds, camera, output)")
  p.add_argument("--jobs", type=int, default=None, help="batch: worker processes (default: cores)")
  p.add_argument("--ray", default=None, metavar="ADDRESS",
                 help="batch: run on a Ray cluster ('local': start one here)")
  p.add_argument("--retries", type=int, default=3, help="batch: reruns of a run whose worker died")
  p.add_argument("--seconds", type=float, default=5.0, help="simulated time to record")
  p.add_argument("--fps", type=float, default=30.0, help="frames per simulated second")
  p.add_argument("--size", default="1280x720", help="image size WIDTHxHEIGHT")
  p.add_argument("--camera", default=None, help="model camera (name or id); default: free camera")
  p.add_argument("--key", action="append", default=None,
                 help="keyframe to start from (index or name); repeated: a batch")
  p.add_argument("--ctrl", action="append", default=None,
                 help="controls held constant, comma-separated (write --ctrl=-1,0.5 for a "
                      "negative first value); repeated: a batch")
  p.add_argument("--png", default=None, metavar="DIR", help="also save every frame as a PNG")
  p.add_argument("--samples", type=int, default=None,
                 help="multisample anti-aliasing (0: off; default: the model's offsamples)")
  p.add_argument("--crf", type=int, default=20, help="H.264 quality (0 best .. 51 worst)")
  p.add_argument("--quiet", action="store_true", help="no progress bar")
  return p.parse_args(argv)


def _fail(msg):
  print(f"numjoco record: {msg}", file=sys.stderr)
  return 2


def main(argv=None):
  """Entry point of `numjoco record`; returns the exit status (1: no EGL or the encoder failed,
  2: bad input, 3: the simulation diverged, 130: Ctrl+C)."""
  args = _parse(sys.argv[1:] if argv is None else argv)
  if args.batch or len(args.model) > 1 or len(args.key or ()) > 1 or len(args.ctrl or ()) > 1:
    return batch_main(args)
  if len(args.model) != 1:
    return _fail("give a model file (or several, or --batch RUNS.csv)")
  args.model = args.model[0]
  args.key = args.key[0] if args.key else None
  args.ctrl = args.ctrl[0] if args.ctrl else None
  if args.output is None and args.png is None:
    return _fail("give an output file with -o OUT.mp4 (or --png DIR)")
  try:
    size = parse_size(args.size)
  except RecordError as e:
    return _fail(str(e))
  if not (math.isfinite(args.fps) and args.fps > 0):
    return _fail(f"--fps must be positive, got {args.fps}")
  if not (math.isfinite(args.seconds) and args.seconds > 0):
    return _fail(f"--seconds must be positive, got {args.seconds}")
  if args.output is not None:
    parent = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(parent):
      return _fail(f"cannot write {args.output!r}: no folder {parent!r}")

  import numjoco
  from numjoco.engine.mjcf import MjcfError
  if not os.path.isfile(args.model):
    return _fail(f"cannot open model: no file {args.model!r}")
  try:
    from numjoco.engine import build
    m = numjoco.load_model(args.model, prepare=build.compile_missing)
  except (MjcfError, OSError) as e:
    return _fail(f"cannot load model: {e}")
  key = None if args.key is None else int(args.key) if args.key.lstrip("-").isdigit() else args.key
  try:
    camera = make_camera(m, args.camera)
    ctrl = None if args.ctrl is None else parse_ctrl(args.ctrl, m)
  except RecordError as e:
    return _fail(str(e))
  if size[0] % 2 or size[1] % 2:
    print(f"numjoco record: note: H.264 yuv420p needs even sizes; the video is padded to "
          f"{size[0] + size[0] % 2}x{size[1] + size[1] % 2}", file=sys.stderr)
  nframes = max(1, int(round(args.seconds * args.fps)))
  bar = None if args.quiet else Progress(nframes)
  try:
    stats = record(m, args.output, args.seconds, args.fps, size, camera, key=key, ctrl=ctrl,
                   samples=args.samples, png_dir=args.png, progress=bar,
                   writer_options={"crf": args.crf})
  except (RecordError, ValueError) as e:    # bad arguments, or a container without H.264
    return _fail(str(e))
  except SimulationDiverged as e:
    if bar is not None:
      bar.end()
    n = e.stats.frames
    print(f"numjoco record: the simulation diverged: {e.divergence}. Stopped after {n} frames "
          f"({n / args.fps:.3f} s), written to {args.output or args.png}", file=sys.stderr)
    return EXIT_DIVERGED
  except RuntimeError as e:     # no EGL, or the encoder failed
    print(f"numjoco record: {e}", file=sys.stderr)
    return 1
  except OSError as e:
    return _fail(str(e))
  except KeyboardInterrupt as e:
    stats = getattr(e, "stats", None)
    if bar is not None:
      bar.end()
    n = stats.frames if stats else 0
    print(f"numjoco record: interrupted; wrote {n} frames ({n / args.fps:.3f} s) to "
          f"{args.output or args.png}", file=sys.stderr)
    return 130
  if bar is not None:
    bar(stats.frames, stats.frames / args.fps, force=True)
    bar.end()
  out = " and ".join(x for x in (args.output, args.png and f"{args.png}/") if x)
  print(f"wrote {stats.frames} frames ({stats.sim_seconds:.3f} s at {args.fps:g} fps, "
        f"{size[0]}x{size[1]}) to {out} in {stats.wall:.1f} s wall "
        f"(physics {stats.physics:.1f} s, render {stats.render:.1f} s, "
        f"encode {stats.encode:.1f} s on its own thread)", file=sys.stderr)
  return 0



# ------------------------------------------------------------------ batches

@dataclasses.dataclass
class RecordJob:
  """One video of a batch (picklable: sent to worker processes and Ray tasks)."""
  model: str
  output: str
  seconds: float = 5.0
  fps: float = 30.0
  size: tuple = (1280, 720)
  camera: object = None
  key: object = None
  ctrl: object = None
  samples: object = None
  crf: int = 20


def record_job(job):
  """Record one batch video; returns {output, frames, status} (status 'ok', 'diverged: ...' or
  'error: ...': one run's failure does not stop the batch)."""
  import numjoco
  from numjoco import MjcfError
  from numjoco.engine import build
  out = {"output": job.output, "frames": 0}
  try:
    m = numjoco.load_model(job.model, prepare=build.compile_missing)
    cam = make_camera(m, job.camera)
    ctrl = None if job.ctrl is None else parse_ctrl(job.ctrl, m)
    stats = record(m, job.output, job.seconds, job.fps, job.size, cam, key=job.key, ctrl=ctrl,
                   samples=job.samples, writer_options={"crf": job.crf})
    out.update(frames=stats.frames, status="ok")
  except SimulationDiverged as e:
    out.update(frames=e.stats.frames, status=f"diverged: {e.divergence}")
  except (RecordError, MjcfError, OSError, ValueError, RuntimeError) as e:
    out.update(status=f"error: {e}")
  return out


def batch_jobs(args):
  """The RecordJobs of a batch command line (the --batch file's rows, or every combination of
  the models, keys and controls given), or a RecordError."""
  import csv
  import itertools
  if not args.output:
    raise RecordError("a batch needs -o OUT_DIR, the folder the videos go to")
  size = parse_size(args.size)
  common = dict(seconds=args.seconds, fps=args.fps, size=size, camera=args.camera,
                samples=args.samples, crf=args.crf)
  rows = []
  if args.batch:
    if args.model or args.key or args.ctrl:
      raise RecordError("give the runs either in --batch or on the command line, not both")
    base = os.path.dirname(os.path.abspath(args.batch))
    try:
      with open(args.batch, newline="") as f:
        table = list(csv.DictReader(f))
    except OSError as e:
      raise RecordError(f"cannot read {args.batch!r}: {e}") from None
    for line, r in enumerate(table, start=2):
      if not r.get("model"):
        raise RecordError(f"{args.batch}:{line}: no model")
      rows.append((line, os.path.join(base, r["model"]), r.get("key") or None,
                   r.get("ctrl") or None, r))
  else:
    for k, (model, key, ctrl) in enumerate(itertools.product(
        args.model, args.key or [None], args.ctrl or [None])):
      rows.append((k, model, key, ctrl, {}))
  jobs, names = [], set()
  for line, model, key, ctrl, r in rows:
    where = f"{args.batch}:{line}: " if args.batch else ""
    if not os.path.isfile(model):
      raise RecordError(f"{where}no model file {model!r}")
    if key is not None and str(key).lstrip("-").isdigit():
      key = int(key)
    name = r.get("output") or "_".join(
        [os.path.splitext(os.path.basename(model))[0]] +
        ([f"key{key}"] if key is not None else []) +
        ([f"ctrl{(args.ctrl or []).index(ctrl)}"] if ctrl is not None and not args.batch else []))
    name = name if os.path.splitext(name)[1] else name + ".mp4"
    if name in names:
      raise RecordError(f"{where}two runs write {name!r}: name them (an output column)")
    names.add(name)
    kw = dict(common)
    try:
      if r.get("seconds"):
        kw["seconds"] = float(r["seconds"])
    except ValueError:
      raise RecordError(f"{where}seconds {r['seconds']!r} is not a number") from None
    if r.get("camera"):
      kw["camera"] = r["camera"]
    jobs.append(RecordJob(model=os.path.abspath(model),
                          output=os.path.join(os.path.abspath(args.output), name),
                          key=key, ctrl=ctrl, **kw))
  if not jobs:
    raise RecordError(f"{args.batch}: no runs")
  return jobs


def batch_main(args):
  """`numjoco record` over several runs; exit status 0 all done, 3 one diverged, 1 one failed,
  2 bad input."""
  from numjoco.app.workers import run_jobs
  if args.png:
    return _fail("--png is for one video, not a batch")
  try:
    jobs = batch_jobs(args)
  except RecordError as e:
    return _fail(str(e))
  os.makedirs(args.output, exist_ok=True)
  t0 = time.perf_counter()

  def progress(done, total):
    if not args.quiet:
      print(f"{done}/{total} videos", file=sys.stderr, flush=True)
  try:
    results = run_jobs(record_job, jobs, args.jobs, args.ray, args.retries, progress)
  except RuntimeError as e:
    print(f"numjoco record: {e}", file=sys.stderr)
    return 1
  for r in results:
    print(f"{r['status']:>8s}  {r['frames']:5d} frames  {r['output']}")
  print(f"{len(results)} videos in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
  if any(r["status"].startswith("error") for r in results):
    return 1
  return EXIT_DIVERGED if any(r["status"] != "ok" for r in results) else 0


if __name__ == "__main__":
  sys.exit(main())
