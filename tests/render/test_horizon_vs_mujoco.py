"""What MuJoCo's renderer draws at an infinite plane's horizon and under a plane, against its own
picture (mujoco.Renderer, EGL): the haze band (mjRND_HAZE: with a skybox, the first infinite plane
fades into visual/rgba haze up to eye level) and a plane's see-through back (alpha x 0.3, lit as
its front, no shadow)."""
import numpy as np
import pytest

from numjoco.render.renderer import VisOptions
from tests.models import model_xml
from tests.render.mujoco_ref import mujoco_image, our_image, save_pair

pytest.importorskip("mujoco")

W, H = 320, 240
HAZE = model_xml("render/horizon_vs_mujoco/haze")


@pytest.mark.parametrize("haze,rgb,elevation", [(0.3, "1 1 1", -3), (0.6, "1 .6 .2", -8)])
def test_haze_band_matches_mujoco(tmp_path, haze, rgb, elevation):
  """Near the horizon of an infinite floor under a skybox, our haze band has MuJoCo's place,
  width and colour: in the rows MuJoCo's haze changes, the mean difference from its picture is
  under 6 of 255 (without the haze it is several times that)."""
  path = tmp_path / "haze.xml"
  path.write_text(HAZE.format(haze=haze, rgb=rgb))
  cam = dict(lookat=(0, 0, 0.3), distance=3.0, azimuth=90.0, elevation=float(elevation))
  ref = mujoco_image(path, cam, W, H).astype(int)
  ref_off = mujoco_image(path, cam, W, H, rnd={"mjRND_HAZE": 0}).astype(int)
  img = our_image(path, cam, W, H, VisOptions(shadows=False)).astype(int)
  img_off = our_image(path, cam, W, H, VisOptions(shadows=False, haze=False)).astype(int)
  save_pair(f"haze_{haze}_{elevation}.png", ref.astype(np.uint8), img.astype(np.uint8))
  rows = np.nonzero(np.abs(ref - ref_off).max(axis=(1, 2)) > 10)[0]
  assert len(rows) >= 3        # MuJoCo draws a band here
  band = slice(rows.min() - 2, rows.max() + 3)
  cols = np.r_[0:100, 220:W]   # beside the box
  err = np.abs(img[band, cols] - ref[band, cols]).mean()
  err_off = np.abs(img_off[band, cols] - ref[band, cols]).mean()
  assert err < 6, f"haze band differs from MuJoCo's by {err:.1f} (without haze {err_off:.1f})"
  assert err_off > 3 * err
  # away from the band nothing changed
  assert np.abs(img[:band.start - 5] - img_off[:band.start - 5]).max() == 0


@pytest.mark.parametrize("case", ["no skybox", "from below"])
def test_no_haze_without_skybox_or_from_below(tmp_path, case):
  """MuJoCo draws the haze in its skybox pass only, and not with the eye under the plane:
  there the flag changes neither its picture nor ours."""
  xml = HAZE.format(haze=0.3, rgb="1 1 1")
  cam = dict(lookat=(0, 0, 0.3), distance=3.0, azimuth=90.0, elevation=-3.0)
  if case == "no skybox":
    xml = xml.replace('<texture type="skybox" builtin="gradient" rgb1=".3 .5 .7" rgb2="0 0 0" '
                      'width="64" height="64"/>', "")
  else:
    cam = dict(cam, lookat=(0, 0, -0.5), elevation=3.0)
  path = tmp_path / "scene.xml"
  path.write_text(xml)
  ref = mujoco_image(path, cam, W, H).astype(int)
  assert np.abs(ref - mujoco_image(path, cam, W, H, rnd={"mjRND_HAZE": 0})).max() == 0
  img = our_image(path, cam, W, H, VisOptions(shadows=False)).astype(int)
  assert np.abs(img - our_image(path, cam, W, H, VisOptions(shadows=False, haze=False))
                ).max() == 0


BELOW = model_xml("render/horizon_vs_mujoco/below")


@pytest.mark.parametrize("shadows,builtin", [(False, "checker"), (True, "checker"),
                                              (True, "flat")])
def test_plane_from_below_matches_mujoco(tmp_path, shadows, builtin):
  """Seen from below, a plane is see-through as in MuJoCo (its back at alpha x 0.3, lit as its
  front, receiving no shadow): the box above shows through it, and the pixels of plane and box
  differ from MuJoCo's by under 8 of 255 on average; for the procedural checker floor and for a
  texture drawn from its pixels (render/textures.py)."""
  path = tmp_path / "below.xml"
  path.write_text(BELOW.replace('builtin="checker"', f'builtin="{builtin}"'))
  cam = dict(lookat=(0, 0, 0), distance=3.0, azimuth=60.0, elevation=30.0)
  ref = mujoco_image(path, cam, W, H, rnd={"mjRND_SHADOW": int(shadows)}).astype(int)
  img = our_image(path, cam, W, H, VisOptions(shadows=shadows, background=(0, 0, 0))
                  ).astype(int)
  save_pair(f"below_{int(shadows)}_{builtin}.png", ref.astype(np.uint8), img.astype(np.uint8))
  a, b = ref.sum(2) > 15, img.sum(2) > 15
  assert (a & b).sum() / (a | b).sum() > 0.95
  err = np.abs(img - ref)[a & b].mean()
  assert err < 8, f"mean difference {err:.1f}"
  # the red box shows through the green plane (the plane alone has red 20 of 255)
  box = (ref[..., 0] > 40) & (ref[..., 2] < 60)
  assert box.sum() > 1000 and (box & (img[..., 0] > 40) & (img[..., 2] < 60)).sum() > \
      0.95 * box.sum()
