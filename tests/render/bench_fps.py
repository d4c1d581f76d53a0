"""Headless frame rate of the renderer at 1280x720 (EGL, llvmpipe here): demo, humanoid, pile64.

Wall-clock FPS depends on what else runs on the machine; CPU-ms/frame (all of this process's
threads, llvmpipe's included) is the steadier figure. "draw" redraws the shadow map every frame
(a moving scene); "still scene" repeats one snapshot, so the renderer reuses its shadow map.

Not a test: `PYTHONPATH=. python tests/render/bench_fps.py [--frames N] [--samples S]`.
"""
import argparse
import time


def _models():
  import engine
  from assets import DEMO_MODEL
  from tests.models import suite_source
  out = [("demo", engine.load_model(str(DEMO_MODEL)))]
  src, _ = suite_source("humanoid")
  out.append(("humanoid", engine.load_model(src)))
  import os
  out.append(("pile64", engine.load_model(os.path.join(os.path.dirname(DEMO_MODEL),
                                                       "pile64.xml"))))
  return out


def main():
  """Print frames per second per model, with and without shadows and decorations."""
  p = argparse.ArgumentParser()
  p.add_argument("--frames", type=int, default=40)
  p.add_argument("--samples", type=int, default=0)
  p.add_argument("--size", default="1280x720")
  a = p.parse_args()
  w, h = (int(x) for x in a.size.split("x"))
  import engine
  from render.camera import Camera
  from render.headless import HeadlessRenderer, create_context
  from render.renderer import VisOptions
  from render.snapshot import Snapshot
  ctx = create_context()
  print(f"{ctx.info['GL_RENDERER']}, {w}x{h}, samples={a.samples}")
  for name, m in _models():
    d = engine.make_data(m)
    engine.step(m, d, 200)
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
