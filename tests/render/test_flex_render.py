"""Flexes drawn as MuJoCo 4.0's renderer draws them: MuJoCo's flex models stepped a few hundred
steps in MuJoCo (so the flex is deformed), drawn by mujoco.Renderer and by ours from the same
free camera, under each flex visualisation flag (skin, edges, element faces, vertices) and
flex groups.

Until the flex physics exists, our snapshot is filled from MuJoCo's MjData after mj_forward at
the stepped state (its Data fields carry our names; `flexvert_xpos` included): these tests
check drawing, not simulation. Our model is compiled by tests.models.load_flex_model.
"""
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from tests.models import model_xml                                          # noqa: E402
from tests.render.mujoco_ref import mujoco_stepped, our_camera, save_pair  # noqa: E402

W, H = 320, 240
ROOT = "tests/assets/mujoco_models/model/flex/"
# MuJoCo's shadows and floor reflection off (the reflection we do not draw; shadows have their
# own test): a flex's pixels are then what its flags add to the picture
_RND = {"mjRND_SHADOW": 0, "mjRND_REFLECTION": 0}

# name: (MuJoCo's vis flags, our VisOptions), defaults: skin and edges on (edges hidden by the
# skin of a 2D/3D flex; a 1D flex shows its edges)
VARIANTS = {
    "default": ({}, {}),
    "none": ({"mjVIS_FLEXEDGE": 0, "mjVIS_FLEXSKIN": 0}, dict(flex_edges=False, flex_skin=False)),
    "edges": ({"mjVIS_FLEXSKIN": 0}, dict(flex_skin=False)),
    "faces": ({"mjVIS_FLEXSKIN": 0, "mjVIS_FLEXEDGE": 0, "mjVIS_FLEXFACE": 1},
              dict(flex_skin=False, flex_edges=False, flex_faces=True)),
    "vertices": ({"mjVIS_FLEXSKIN": 0, "mjVIS_FLEXEDGE": 0, "mjVIS_FLEXVERT": 1},
                 dict(flex_skin=False, flex_edges=False, flex_vertices=True)),
    "group0_off": ({"flexgroup": [0, 1, 1, 0, 0, 0]},
                   dict(flex_groups=[False, True, True, False, False, False])),
}

# model: (steps, camera lookat, distance, azimuth, elevation)
MODELS = {
    "flag": (300, [-0.34, -0.59, 0.9], 1.6, 30, -10),       # 2D, radius 0.001
    "trampoline": (300, [0.0, 0.0, 0.78], 2.6, 60, -30),    # 2D grid
    "jelly": (300, [0.0, 0.0, 0.56], 1.5, 60, -25),        # 3D, flatskin
    "basket": (300, [0.0, 0.0, 0.57], 2.2, 60, -30),       # 2D box, flatskin, rgba
    "pulley": (300, [0.0, 0.0, 1.0], 2.8, 60, -35),        # 1D cable: edges only
    "floppy": (500, [0.1, 0.0, 0.8], 2.6, 70, -15),         # 3D, radius 0: no edges
}


class MjDataView:
  """MuJoCo's MjData under our Data's names (contact_pos for contact.pos ...), for Snapshot."""

  def __init__(self, d):
    self._d = d

  def __getattr__(self, name):
    if name.startswith("contact_"):
      return getattr(self._d.contact, name[len("contact_"):])
    return getattr(self._d, name)


def mujoco_data(path, state):
  """MuJoCo's MjData of the file at `state` (qpos, qvel, act, time), after mj_forward."""
  m = mujoco.MjModel.from_xml_path(str(path))
  d = mujoco.MjData(m)
  d.qpos[:], d.qvel[:], d.act[:] = state["qpos"], state["qvel"], state["act"]
  d.time = float(state["time"])
  mujoco.mj_forward(m, d)
  return d


def our_pictures(path, state, cam, variants, **renderer_attrs):
  """Our pictures of the file at MuJoCo's `state`, one per VisOptions keyword dict."""
  from tests.models import load_flex_model
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.renderer import VisOptions
  from numjoco.render.snapshot import Snapshot
  m = load_flex_model(str(path))
  snap = Snapshot(m, MjDataView(mujoco_data(path, state)))
  hr = HeadlessRenderer(m, W, H)
  for k, v in renderer_attrs.items():
    setattr(hr.renderer, k, v)
  try:
    c = our_camera(m, cam)
    return [hr.render(snap, c, VisOptions(**{"shadows": False, **kw})) for kw in variants]
  finally:
    hr.release()


def _mask(img, base):
  """Pixels where `img` differs from `base` (any channel by more than 24 of 255)."""
  return np.abs(img.astype(int) - base.astype(int)).max(-1) > 24


def _iou(a, b):
  return (a & b).sum() / max((a | b).sum(), 1)


_CACHE = {}


def _pictures(model):
  """MuJoCo's and our pictures of `model` under every variant (made once per model)."""
  if model not in _CACHE:
    nstep, lookat, distance, azimuth, elevation = MODELS[model]
    path = ROOT + model + ".xml"
    cam = dict(lookat=lookat, distance=distance, azimuth=azimuth, elevation=elevation)
    names = list(VARIANTS)
    refs, state = mujoco_stepped(path, nstep, cam, W, H, [VARIANTS[n][0] for n in names], _RND)
    ours = our_pictures(path, state, cam, [VARIANTS[n][1] for n in names])
    _CACHE[model] = {n: (r, o) for n, r, o in zip(names, refs, ours)}
  return _CACHE[model]


def _dilate(a):
  """Mask `a` grown by one pixel (3 x 3)."""
  p = np.pad(a, 1)
  out = np.zeros_like(a)
  for dy in range(3):
    for dx in range(3):
      out |= p[dy:dy + a.shape[0], dx:dx + a.shape[1]]
  return out


CASES = [(m, v) for m in MODELS for v in ("default", "edges", "faces", "vertices")]


@pytest.mark.parametrize("model,variant", CASES)
def test_flex_as_mujoco_draws_it(model, variant):
  """The flex covers the pixels MuJoCo's gives it (a flex mask: where the picture differs from
  the one with every flex flag off), in its lit colour.
  Surfaces (skin, element faces): IoU > 0.9 and mean colour difference under 12 of 255 where
  both draw (measured: IoU 0.93-0.995, differences under 1.6).
  Edges and vertices (thin cylinders and small spheres; the pulley's cable): MuJoCo's
  renderer antialiases them (multisampling), ours does not, so masks are compared within one
  pixel: over 85% of ours near MuJoCo's and over 65% of MuJoCo's near ours (measured 0.91-1.0
  and 0.70-1.0: the lower ones for the 0.001-radius edges of flag and trampoline, a tenth of
  a pixel wide, which MuJoCo shows as faint blended pixels); where they are resolved (over 95%
  matched) the mean colours of the two masks agree within 30 of 255 (blending at their
  borders: measured up to 16). Under 150 MuJoCo pixels (flag and trampoline vertices), ours
  must be as few."""
  pics = _pictures(model)
  ref, img = pics[variant]
  ref_none, img_none = pics["none"]
  save_pair(f"flex_{model}_{variant}.png", ref, img)
  theirs, ours = _mask(ref, ref_none), _mask(img, img_none)
  if theirs.sum() < 150:
    assert ours.sum() < 150 + 2 * theirs.sum(), (
        f"MuJoCo draws {theirs.sum()} flex pixels, we draw {ours.sum()}")
    return
  if variant in ("edges", "vertices") or model == "pulley":
    near_ours = (ours & _dilate(theirs)).sum() / max(ours.sum(), 1)
    near_theirs = (theirs & _dilate(ours)).sum() / theirs.sum()
    assert near_ours > 0.85 and near_theirs > 0.65, (near_ours, near_theirs)
    if near_theirs > 0.95:
      diff = np.abs(ref[theirs].mean(0) - img[ours].mean(0))
      assert (diff < 30).all(), f"mean colour difference {diff}"
    return
  iou = _iou(theirs, ours)
  assert iou > 0.9, f"flex IoU {iou:.3f}"
  both = theirs & ours
  diff = np.abs(ref[both].astype(float) - img[both].astype(float)).mean(0)
  assert (diff < 12).all(), f"mean colour difference {diff}"


@pytest.mark.parametrize("model", ["basket", "jelly", "pulley"])
def test_each_flex_flag_changes_the_picture_as_mujoco(model):
  """Turning each flex flag on or off changes our picture where it changes MuJoCo's: the skin
  (default vs edges only), the edges (vs none), the element faces and the vertices (vs none),
  flex group 0 off (vs default: the flex disappears). Each change covers over 300 pixels in
  both (for the pulley's 1D cable only the edge flag and the group change anything, as in
  MuJoCo) and over 90% of each picture's changed pixels lie within one pixel of the other's
  (measured: 0.99-1.0)."""
  pics = _pictures(model)
  pairs = {"skin": ("default", "edges"), "edges": ("edges", "none"),
           "faces": ("faces", "none"), "vertices": ("vertices", "none"),
           "group": ("default", "group0_off")}
  for flag, (a, b) in pairs.items():
    theirs = _mask(pics[a][0], pics[b][0])
    ours = _mask(pics[a][1], pics[b][1])
    if model == "pulley" and flag in ("faces", "skin"):     # 1D: no faces, edges shown
      assert theirs.sum() < 50 and ours.sum() < 50, (flag, theirs.sum(), ours.sum())
      continue
    assert theirs.sum() > 300, (flag, theirs.sum())
    assert ours.sum() > 300, (flag, ours.sum())
    near_ours = (ours & _dilate(theirs)).sum() / ours.sum()
    near_theirs = (theirs & _dilate(ours)).sum() / theirs.sum()
    assert min(near_ours, near_theirs) > 0.9, (flag, near_ours, near_theirs)


_CLOTHS = model_xml("render/flex_render/cloths")
_BLACK = (0.0, 0.0, 0.0)


def test_textured_and_transparent_flexes_as_mujoco(tmp_path):
  """A textured cloth and a half-transparent one (also with MuJoCo's transparency flag, alpha
  times map.alpha), stepped 400 steps in MuJoCo: IoU > 0.9 of the flex masks and mean colour
  difference under 12 of 255 where both draw (measured: IoU 0.96 and 0.98, differences
  2.6-5.8)."""
  path = tmp_path / "cloths.xml"
  path.write_text(_CLOTHS)
  cam = dict(lookat=[0.0, 0.0, 0.3], distance=2.6, azimuth=80, elevation=-35)
  names = ["plain", "none", "transparent", "transparent_none"]
  mj = [{}, {"mjVIS_FLEXSKIN": 0, "mjVIS_FLEXEDGE": 0}, {"mjVIS_TRANSPARENT": 1},
        {"mjVIS_TRANSPARENT": 1, "mjVIS_FLEXSKIN": 0, "mjVIS_FLEXEDGE": 0}]
  ours_kw = [{}, dict(flex_skin=False, flex_edges=False), dict(transparency=True),
             dict(transparency=True, flex_skin=False, flex_edges=False)]
  refs, state = mujoco_stepped(path, 400, cam, W, H, mj, _RND)
  ours = our_pictures(path, state, cam, [dict(kw, background=_BLACK) for kw in ours_kw])
  pics = dict(zip(names, zip(refs, ours)))
  for name, base in (("plain", "none"), ("transparent", "transparent_none")):
    ref, img = pics[name]
    save_pair(f"flex_cloths_{name}.png", ref, img)
    theirs, mine = _mask(ref, pics[base][0]), _mask(img, pics[base][1])
    assert theirs.sum() > 3000, theirs.sum()
    iou = _iou(theirs, mine)
    assert iou > 0.9, f"{name}: IoU {iou:.3f}"
    both = theirs & mine
    diff = np.abs(ref[both].astype(float) - img[both].astype(float)).mean(0)
    assert (diff < 12).all(), f"{name}: mean colour difference {diff}"


def test_flexes_cast_shadows_as_mujoco(tmp_path):
  """The two cloths' shadows on the floor (grey floor pixels darker than the lit floor) cover
  MuJoCo's (IoU > 0.8), the half-transparent one's too (MuJoCo's shadow pass draws every geom
  but decorations). Measured: IoU 0.97."""
  path = tmp_path / "cloths.xml"
  path.write_text(_CLOTHS)
  cam = dict(lookat=[0.0, 0.0, 0.3], distance=2.6, azimuth=80, elevation=-35)
  refs, state = mujoco_stepped(path, 400, cam, W, H, [{}], {"mjRND_REFLECTION": 0})
  img = our_pictures(path, state, cam, [dict(shadows=True, background=_BLACK)])[0]
  ref = refs[0]
  save_pair("flex_shadows.png", ref, img)

  def shadow(x):
    x = x.astype(int)
    grey = x.max(-1) - x.min(-1) < 6
    return grey & (x.max(-1) > 40) & (x.max(-1) < 150)
  # MuJoCo's shadow acne speckles the floor: shadows are where a whole 3 x 3 block is shadow
  theirs, ours = ~_dilate(~shadow(ref)), ~_dilate(~shadow(img))
  assert theirs.sum() > 1000, theirs.sum()
  iou = _iou(theirs, ours)
  assert iou > 0.8, f"shadow IoU {iou:.3f}"


@pytest.mark.parametrize("model", ["trampoline", "jelly", "pulley"])
def test_snapshot_flex_vertices_without_data_field(model):
  """A Data without flexvert_xpos (ours, until the flex physics fills it): the snapshot takes
  the vertex positions from the body poses, as MuJoCo's kinematics does (body position plus
  the rotated local vertex), equal to MuJoCo's flexvert_xpos after 200 steps."""
  from tests.models import load_flex_model
  from numjoco.render.snapshot import Snapshot
  path = ROOT + model + ".xml"
  mm = mujoco.MjModel.from_xml_path(path)
  md = mujoco.MjData(mm)
  mujoco.mj_step(mm, md, 200)
  mujoco.mj_forward(mm, md)

  class NoFlex(MjDataView):
    def __getattr__(self, name):
      if name == "flexvert_xpos":
        raise AttributeError(name)
      return super().__getattr__(name)
  snap = Snapshot(load_flex_model(path), NoFlex(md))
  assert np.abs(md.flexvert_xpos).max() > 0.1
  np.testing.assert_allclose(snap.flexvert_xpos, md.flexvert_xpos, atol=1e-12)
