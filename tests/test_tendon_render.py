"""Headless image (EGL) of spatial tendons: the renderer draws each branch of the path along
d.wrap_xpos (around the wrapping geom) and nothing towards a pulley's placeholder point."""
import os

import numpy as np

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot

W, H = 320, 240
XML = """
<mujoco>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <site name="a" pos="-0.4 0 1.2"/>
    <geom name="drum" type="cylinder" size="0.12 0.1" pos="-0.4 0 0.8" euler="90 0 0"
          rgba=".3 .3 .3 1"/>
    <site name="side" pos="-0.2 0 0.8"/>
    <body pos="-0.4 0 0.4">
      <joint type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05" rgba=".8 .8 .8 1"/>
      <site name="b" pos="0 0 0"/>
    </body>
    <site name="c" pos="0.4 0 1.2"/>
    <site name="d" pos="0.5 0 0.5"/>
  </worldbody>
  <tendon>
    <spatial rgba="0 1 0 1" width="0.01">
      <site site="a"/><geom geom="drum" sidesite="side"/><site site="b"/>
      <pulley divisor="2"/><site site="c"/><site site="d"/>
    </spatial>
  </tendon>
</mujoco>
"""


def _dist_to_segments(p, a, b):
  ab = b - a
  t = np.clip(((p[:, None] - a[None]) * ab[None]).sum(2) / (ab * ab).sum(1)[None], 0, 1)
  q = a[None] + t[..., None] * ab[None]
  return np.linalg.norm(p[:, None] - q, axis=2).min(1)


def test_spatial_tendon_drawn_along_wrap_points(ctx):
  """Green pixels appear only with tendons on, along the projected path segments."""
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  d.qpos[0] = 0.15
  numjoco.forward(m, d)
  assert d.ten_wrapnum[0] == 7 and d.wrap_obj.ravel()[4] == -2   # 4 + pulley + 2 points
  snap = Snapshot(m)
  snap.capture(m, d)
  hr = HeadlessRenderer(m, W, H, ctx=ctx)
  cam = Camera.default_for(m)
  cam.lookat[:] = (0, 0, 0.8)
  cam.distance, cam.azimuth, cam.elevation = 2.2, 90, 0
  on = hr.render(snap, cam, VisOptions(tendons=True))
  off = hr.render(snap, cam, VisOptions(tendons=False))
  os.makedirs("/tmp/render-tests", exist_ok=True)
  save_png("/tmp/render-tests/tendon.png", on)
  diff = np.abs(on.astype(int) - off).sum(2) > 60
  assert diff.sum() > 100
  ys, xs = np.nonzero(diff)
  pix = np.stack([xs, ys], 1).astype(float)
  pts = d.wrap_xpos.reshape(-1, 3)[:7]
  segs = [(0, 1), (1, 2), (2, 3), (5, 6)]
  proj = hr.project(pts, cam)
  a = np.array([proj[i] for i, _ in segs])
  b = np.array([proj[j] for _, j in segs])
  assert np.percentile(_dist_to_segments(pix, a, b), 95) < 3
  # every drawn segment has pixels along its middle, the pulley placeholder (origin) none
  for i, j in segs:
    mid = 0.5 * (proj[i] + proj[j])
    assert np.min(np.linalg.norm(pix - mid, axis=1)) < 3
  far = _dist_to_segments(hr.project(np.zeros((1, 3)), cam), a, b)[0]
  if far > 10:
    o = hr.project(np.zeros((1, 3)), cam)[0]
    assert np.min(np.linalg.norm(pix - o, axis=1)) > 5
  hr.release()
