"""Headless frame rate of the renderer at 1280x720 (EGL, llvmpipe here): demo, humanoid, pile64,
and `rangefinder64` (a 64x64 camera rangefinder with dist, point and normal: 12288 markers).

Wall-clock FPS depends on what else runs on the machine; CPU-ms/frame (all of this process's
threads, llvmpipe's included) is the steadier figure. "draw" redraws the shadow map every frame
(a moving scene); "still scene" repeats one snapshot, so the renderer reuses its shadow map.

Not a test: `PYTHONPATH=. python tests/render/bench_fps.py [--frames N] [--samples S]
[--models demo,humanoid,pile64,rangefinder64]`.
"""
import argparse
import time


RANGEFINDER64 = """<mujoco>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="2 2 .05" rgba=".3 .3 .3 1"/>
    <geom type="box" size=".2 .2 .2" pos="0 0 .2" rgba=".8 .3 .3 1"/>
    <body pos="0 -1 1"><camera name="eye" xyaxes="1 0 0 0 .7 .7" resolution="64 64" fovy="60"/>
    </body>
  </worldbody>
  <sensor><rangefinder camera="eye" data="dist point normal"/></sensor>
</mujoco>"""


def _models(names):
  import os

  import numjoco
  from numjoco.assets import DEMO_MODEL
  from tests.models import suite_source
  for name in names:
    if name == "demo":
      yield name, numjoco.load_model(str(DEMO_MODEL))
    elif name == "humanoid":
      yield name, numjoco.load_model(suite_source("humanoid")[0])
    elif name == "pile64":
      yield name, numjoco.load_model(os.path.join(os.path.dirname(DEMO_MODEL), "pile64.xml"))
    elif name == "rangefinder64":
      yield name, numjoco.load_model(RANGEFINDER64)
    else:
      raise SystemExit(f"unknown model {name!r}")


def main():
  """Print frames per second per model, with and without shadows and decorations."""
  p = argparse.ArgumentParser()
  p.add_argument("--frames", type=int, default=40)
  p.add_argument("--samples", type=int, default=0)
  p.add_argument("--size", default="1280x720")
  p.add_argument("--models", default="demo,humanoid,pile64")
  a = p.parse_args()
  w, h = (int(x) for x in a.size.split("x"))
  import numjoco
  from numjoco.render.camera import Camera
  from numjoco.render.headless import HeadlessRenderer, create_context
  from numjoco.render.renderer import VisOptions
  from numjoco.render.snapshot import Snapshot
  ctx = create_context()
  print(f"{ctx.info['GL_RENDERER']}, {w}x{h}, samples={a.samples}")
  for name, m in _models(a.models.split(",")):
    d = numjoco.make_data(m)
    numjoco.step(m, d, 200)
    snap = Snapshot(m)
    snap.capture(m, d)
    hr = HeadlessRenderer(m, w, h, samples=a.samples, ctx=ctx)
    cam = Camera.default_for(m)
    for label, opts in (("plain", VisOptions(shadows=False)), ("shadows", VisOptions()),
                        ("shadows+contacts", VisOptions(contact_points=True,
                                                        contact_forces=True))):
      hr.render(snap, cam, opts)
      t, c = time.perf_counter(), time.process_time()
      for _ in range(a.frames):
        hr.renderer._shadow_key = None   # as if the scene moved: the shadow pass every frame
        hr.renderer.render(snap, cam, opts, w, h, fbo=hr._ms[0] if hr._ms else hr.fbo)
      ctx.finish()
      dt = (time.perf_counter() - t) / a.frames
      cpu = (time.process_time() - c) / a.frames     # all threads (llvmpipe's too)
      t, c = time.perf_counter(), time.process_time()
      for _ in range(a.frames):    # the same scene again (paused): the shadow map is reused
        hr.renderer.render(snap, cam, opts, w, h, fbo=hr._ms[0] if hr._ms else hr.fbo)
      ctx.finish()
      ds = (time.perf_counter() - t) / a.frames
      cpus = (time.process_time() - c) / a.frames
      tr = time.perf_counter()
      for _ in range(5):
        hr.render(snap, cam, opts)
      dr = (time.perf_counter() - tr) / 5
      print(f"{name:9s} ngeom={m.ngeom:3d} ncon={snap.ncon:3d} {label:17s} "
            f"{1 / dt:6.1f} FPS draw ({cpu * 1e3:5.1f} CPU-ms/frame)  still scene "
            f"{1 / ds:6.1f} FPS ({cpus * 1e3:5.1f} CPU-ms)  {1 / dr:6.1f} FPS draw+readback")
    hr.release()


if __name__ == "__main__":
  main()
