"""Image-compare set-up shared by the render tests: MuJoCo's own picture of an MJCF file
(mujoco.Renderer on EGL, in a subprocess so its GL backend is chosen before `mujoco` is
imported) and ours of the same file, from the same free camera."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

# the model after c["nstep"] steps and mj_forward, a renderer and the free camera with c["cam"]'s
# fields (the others mjv_defaultFreeCamera's)
_SETUP = """
import os, sys, json
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
path, out, c = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
if c["nstep"]:
  mujoco.mj_step(m, d, c["nstep"])
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, c["height"], c["width"])
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
for k, v in c["cam"].items():
  if k == "lookat":
    cam.lookat[:] = v
  else:
    setattr(cam, k, v)
"""

_SCRIPT = _SETUP + """
opt = mujoco.MjvOption()
for k, v in c["vis"].items():
  opt.flags[getattr(mujoco.mjtVisFlag, k)] = v
if c["pert"]:       # a selection (mjvPerturb select / skinselect): the scene made directly
  pert = mujoco.MjvPerturb()
  for k, v in c["pert"].items():
    setattr(pert, k, v)
  mujoco.mjv_updateScene(m, d, opt, pert, cam, mujoco.mjtCatBit.mjCAT_ALL, r.scene)
else:
  r.update_scene(d, cam, opt)
for k, v in c["rnd"].items():
  r.scene.flags[getattr(mujoco.mjtRndFlag, k)] = v
np.save(out, r.render())
"""


def _camera(cam):
  """The free camera's fields as JSON values (lookat a list of floats)."""
  return {k: ([float(x) for x in v] if k == "lookat" else float(v)) for k, v in cam.items()}


def mujoco_image(path, cam, width, height, vis=None, rnd=None, pert=None):
  """MuJoCo's picture (height, width, 3) uint8 of the MJCF file `path` after mj_forward, from a
  free camera with the fields of `cam` (some of lookat, distance, azimuth, elevation; the others
  MuJoCo's default free camera's); `vis` and `rnd` set mjtVisFlag and mjtRndFlag entries by
  name (e.g. {"mjRND_HAZE": 0}); `pert` sets mjvPerturb fields by name (e.g. {"select": 3,
  "skinselect": 0}: the selection MuJoCo's scene highlights)."""
  c = dict(cam=_camera(cam), nstep=0, width=width, height=height, vis=vis or {}, rnd=rnd or {},
           pert=pert or {})
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "ref.npy")
    res = subprocess.run([sys.executable, "-c", _SCRIPT, str(path), out, json.dumps(c)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return np.load(out)


def our_camera(m, cam):
  """Our default free camera of model `m` with the fields of `cam` (as `mujoco_image`)."""
  from numjoco.render.camera import Camera
  c = Camera.default_for(m)
  for k, v in cam.items():
    setattr(c, k, np.asarray(v, float) if k == "lookat" else v)
  return c


def our_image(path, cam, width, height, opts=None, **renderer_attrs):
  """Our picture of the same file from the same free camera (`cam`'s fields set on our default
  one), with VisOptions `opts`; `renderer_attrs` set Renderer attributes first (e.g.
  highlight_body=3)."""
  import numjoco
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.renderer import VisOptions
  from numjoco.render.snapshot import Snapshot
  m = numjoco.load_model(str(path))
  hr = HeadlessRenderer(m, width, height)
  for k, v in renderer_attrs.items():
    setattr(hr.renderer, k, v)
  try:
    return hr.render(Snapshot(m), our_camera(m, cam), opts or VisOptions())
  finally:
    hr.release()


def skin_pictures(path, cam, width, height, rnd=None, **opts):
  """(MuJoCo's, MuJoCo's without skins, ours, ours without skins) of one file from one free
  camera: what the skin changes in each engine's picture. `opts` are our VisOptions."""
  from numjoco.render.renderer import VisOptions
  return (mujoco_image(path, cam, width, height, rnd=rnd),
          mujoco_image(path, cam, width, height, vis={"mjVIS_SKIN": 0}, rnd=rnd),
          our_image(path, cam, width, height, VisOptions(**opts)),
          our_image(path, cam, width, height, VisOptions(skins=False, **opts)))


def save_pair(name, ref, img):
  """Save MuJoCo's picture and ours side by side (render-tests/ in the temp dir) to look at."""
  from numjoco.render.headless import save_png
  out = os.path.join(tempfile.gettempdir(), "render-tests")
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, name), np.concatenate([ref, img], 1))


_STEPPED = _SETUP + """
imgs = []
for vis in c["variants"]:
  opt = mujoco.MjvOption()
  for k, v in vis.items():
    if k == "flexgroup":
      opt.flexgroup[:] = v
    elif k == "frame":
      opt.frame = int(getattr(mujoco.mjtFrame, v))
    else:
      opt.flags[getattr(mujoco.mjtVisFlag, k)] = v
  r.update_scene(d, cam, opt)
  for k, v in c["rnd"].items():
    r.scene.flags[getattr(mujoco.mjtRndFlag, k)] = v
  imgs.append(r.render())
np.savez(out, images=np.array(imgs), qpos=d.qpos, qvel=d.qvel, act=d.act, time=d.time,
         sensordata=d.sensordata)
"""


def assert_mask_iou(theirs, ours, least, iou_min, what):
  """MuJoCo's pixel mask `theirs` holds more than `least` pixels and ours overlaps it with an
  IoU over `iou_min` (`what` names the masks in the messages). Returns the pixels both hold."""
  assert theirs.sum() > least, f"MuJoCo's {what} covers only {theirs.sum()} pixels"
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > iou_min, f"{what} IoU {iou:.3f}"
  return theirs & ours


def mujoco_stepped(path, nstep, cam, width, height, variants, rnd=None):
  """MuJoCo's pictures of the MJCF file `path` after `nstep` steps from its initial state,
  one per entry of `variants` (dicts of mjtVisFlag names to values; "flexgroup": the six
  flex group flags; "frame": an mjtFrame name), from the free camera `cam` (as
  `mujoco_image`); and that state: (images (k, h, w, 3), dict(qpos, qvel, act, time,
  sensordata))."""
  c = dict(cam=_camera(cam), width=width, height=height, nstep=int(nstep),
           variants=list(variants), rnd=rnd or {})
  z = _run(_STEPPED, path, c)
  return z["images"], {k: z[k] for k in ("qpos", "qvel", "act", "time", "sensordata")}


def _run(script, path, c):
  """Run a script of this module (argv: the model file, an output .npz, the JSON of `c`) in a
  subprocess; its saved arrays by name."""
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "ref.npz")
    res = subprocess.run([sys.executable, "-c", script, str(path), out, json.dumps(c)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    z = np.load(out)
    return {k: z[k] for k in z.files}


_MODES = _SETUP + """
if c["camera"] is not None:       # a model camera by name, instead of the free camera
  cam = c["camera"]
opt = mujoco.MjvOption()
for k, v in c["vis"].items():
  opt.flags[getattr(mujoco.mjtVisFlag, k)] = v
out_imgs = {}
for mode in ("rgb", "depth", "seg"):
  r.disable_depth_rendering()
  r.disable_segmentation_rendering()
  if mode == "depth":
    r.enable_depth_rendering()
  elif mode == "seg":
    r.enable_segmentation_rendering()
  r.update_scene(d, cam, opt)
  out_imgs[mode] = r.render()
np.savez(out, qpos=d.qpos, act=d.act, **out_imgs)
"""


def mujoco_renderer_images(path, cam, width, height, camera=None, nstep=0, vis=None):
  """mujoco.Renderer's RGB, depth and segmentation images of the MJCF file `path` after `nstep`
  steps and mj_forward, with the default scene option but for the mjtVisFlag entries `vis` sets
  by name, from the free camera with the fields of `cam` (as `mujoco_image`) or, given
  `camera`, from the model camera of that name; and the state drawn: dict(rgb, depth, seg, qpos,
  act)."""
  c = dict(cam=_camera(cam), nstep=int(nstep), width=width, height=height, camera=camera,
           vis=vis or {})
  return _run(_MODES, path, c)
