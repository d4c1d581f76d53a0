"""The viewer from Python, as mujoco.viewer:

    import numjoco, numjoco.viewer
    m = numjoco.load_model("model.xml")
    d = numjoco.make_data(m)
    with numjoco.viewer.launch_passive(m, d) as viewer:
      while viewer.is_running():
        d.ctrl[:] = policy(d)
        numjoco.step(m, d)
        viewer.sync()

- `launch(m=None, d=None)`: the viewer application, stepping on its own; returns when the
  window closes. With `m`, that model (starting from `d`'s state when given); without, the
  bundled demo (or `path`).
- `launch_passive(m, d, key_callback=None, show_left_ui=True, show_right_ui=True)`: a window
  on its own thread that the script feeds with `handle.sync()` (app/passive.py).
- `python -m numjoco.viewer --mjcf=MODEL`: `launch` on a file.
"""
import argparse
import sys
import threading
import time


FPS = 60.0     # frames per second of a passive viewer's window


def launch(m=None, d=None, *, path=None, **viewer_options):
  """Open the viewer and run it until its window closes (blocking, as mujoco.viewer.launch).
  `m`: a Model to show (its state from `d` when given), else the model file `path`, else the
  bundled demo. `viewer_options` go to app.viewer.Viewer (width, height, paused, ...)."""
  import numjoco
  from numjoco.app.viewer import Viewer
  if m is None:
    if d is not None:
      raise ValueError("launch: Data without its Model")
    Viewer(path, **viewer_options).run()
    return
  from numjoco.app.sim import Simulation
  sim = Simulation(m, path=path or "")
  if d is not None:
    from numjoco.engine.state import get_state, set_state
    state = get_state(m, d)
    sim.send("call", lambda mm, dd: (set_state(mm, dd, state), numjoco.forward(mm, dd)))
  sim.start()
  Viewer(path or "numjoco", sim=sim, **viewer_options).run()


def launch_passive(m, d, key_callback=None, show_left_ui=True, show_right_ui=True,
                   **viewer_options):
  """A viewer window on its own thread showing the script's Model `m` and Data `d`
  (mujoco.viewer.launch_passive); returns an app.passive.Handle once the window is up. The
  script steps `d` itself and calls `handle.sync()` to show it; mouse drags and panel edits
  reach `m` and `d` in those calls. `key_callback(keycode)` runs on the window's thread with
  GLFW's key code of each key pressed."""
  from numjoco.app.passive import Handle, PassiveSimulation, ScriptOverlay
  sim = PassiveSimulation(m, d)
  sim.sync_script()
  overlay = ScriptOverlay()
  box, ready, failed = [], threading.Event(), []
  opts = dict(viewer_options, sim=sim, key_callback=key_callback, overlay=overlay,
              show_left_ui=show_left_ui, show_right_ui=show_right_ui)
  handle = None

  def run():
    from numjoco.app.viewer import Viewer
    try:
      v = Viewer("numjoco", **opts)
      v.frame()                # the script's model on screen before launch_passive returns
    except Exception as e:  # noqa: BLE001 - raised on the script's thread below
      failed.append(e)
      ready.set()
      return
    box.append(v)
    ready.set()
    try:
      while not (handle is not None and handle.close_requested) and v.frame():
        wait = v.clock.last + 1 / FPS - time.perf_counter()
        if wait > 0:
          time.sleep(wait)
    finally:
      v.close()

  thread = threading.Thread(target=run, name="numjoco-viewer", daemon=True)
  handle = Handle(sim, overlay, thread, box)
  thread.start()
  ready.wait()
  if failed:
    raise RuntimeError(f"cannot open the viewer window: {failed[0]}") from failed[0]
  return handle


def main(argv=None):
  """`python -m numjoco.viewer [--mjcf=MODEL]`: the viewer on MODEL (default: the demo)."""
  p = argparse.ArgumentParser(prog="python -m numjoco.viewer",
                              description="numjoco's viewer (as python -m mujoco.viewer)")
  p.add_argument("--mjcf", default=None, help="MJCF or URDF model file (default: the demo)")
  args = p.parse_args(argv)
  launch(path=args.mjcf)
  return 0


if __name__ == "__main__":
  sys.exit(main())
