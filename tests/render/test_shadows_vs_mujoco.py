"""Shadows against mujoco.Renderer's: dm_control's dog on its textured floor under a spot light
(the shadow-casting light's pass clamped apart from the others, as MuJoCo's), transparent
geoms casting shadows (MuJoCo's shadow pass draws every geom whatever its alpha), and a spot
light's shadows only inside MuJoCo's shadow frustum (cutoff x map.shadowscale)."""
import os

import numpy as np
import pytest

from tests.render.mujoco_ref import (assert_mask_iou, mujoco_image, our_image, save_pair,
                                     skin_pictures)

W, H = 320, 240
_NO_REFLECTION = {"mjRND_REFLECTION": 0}     # we draw no reflections


def _floor_shadow(on, off):
  """Floor pixels (blue: dm_control's grid) that turning the casters on darkens by over 20%."""
  on, off = on.astype(float), off.astype(float)
  blue = (on[..., 2] > on[..., 0] + 10) & (off[..., 2] > off[..., 0] + 10)
  return blue & (on.sum(-1) < 0.8 * off.sum(-1))


@pytest.mark.parametrize("azimuth,elevation", [(120, -35), (30, -60), (200, -25)])
def test_dog_casts_its_shadow_on_the_floor_as_mujoco(azimuth, elevation):
  """dm_control's dog: the skin's shadow on the textured floor (floor pixels darkened by
  turning the skin on) covers MuJoCo's (IoU > 0.75) and darkens as much (mean on/off ratio
  within 0.05 of MuJoCo's); the whole picture agrees (mean difference under 3 of 255).
  The floor's texture is modulated by a lit colour of base 1: lit by the headlight and the spot
  light together it saturated, and neither the spot light nor the shadow showed; MuJoCo clamps
  the shadow-casting light's pass apart. Measured: IoU 0.86-0.91, ratios 0.53-0.61 against
  MuJoCo's 0.53-0.59, mean differences 0.6-1.0."""
  dm = pytest.importorskip("dm_control")
  path = os.path.join(os.path.dirname(dm.__file__), "suite", "dog.xml")
  cam = dict(lookat=[0.2, 0.0, 0.2], distance=2.5, azimuth=azimuth, elevation=elevation)
  ref, ref_off, img, img_off = skin_pictures(path, cam, W, H, rnd=_NO_REFLECTION)
  save_pair(f"dog_shadow_{azimuth}_{elevation}.png", ref, img)
  theirs, ours = _floor_shadow(ref, ref_off), _floor_shadow(img, img_off)
  both = assert_mask_iou(theirs, ours, 400, 0.75, "dog's shadow")
  ratio_theirs = (ref[both].sum(-1) / ref_off[both].sum(-1)).mean()
  ratio_ours = (img[both].sum(-1) / img_off[both].sum(-1)).mean()
  assert abs(ratio_theirs - ratio_ours) < 0.05, (ratio_theirs, ratio_ours)
  assert np.abs(ref.astype(float) - img).mean() < 3


_TRANSPARENT = """<mujoco>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".9 .9 .9" rgb2=".6 .6 .6"
             width="64" height="64"/>
    <material name="glass" texture="grid" rgba="1 1 1 0.5"/>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true" diffuse=".6 .6 .6"/>
    <geom type="plane" size="2 2 .1" rgba=".8 .8 .8 1"/>
    <body pos="-0.4 0 0.5"><freejoint/><geom type="box" size=".2 .15 .1" rgba=".2 .4 .9 .5"/></body>
    <body pos="0.4 0.1 0.4"><freejoint/><geom type="sphere" size=".15" material="glass"/></body>
    <body pos="0 -0.5 0.3"><freejoint/>
      <geom type="capsule" size=".06 .15" rgba=".9 .3 .2 {alpha}"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_transparent_geoms_cast_shadows_as_mujoco(tmp_path, alpha):
  """Half-transparent geoms (a box by rgba, a sphere by its textured material's alpha, the
  capsule also opaque) above a grey floor under a shadow-casting directional light: their
  shadows (grey floor pixels darker than the lit floor) cover MuJoCo's (IoU > 0.85), whose
  shadow pass draws every geom but decorations whatever its alpha. Measured: IoU 0.95-0.97."""
  from numjoco.render.renderer import VisOptions
  path = tmp_path / "transparent.xml"
  path.write_text(_TRANSPARENT.format(alpha=alpha))
  cam = dict(lookat=[0.0, 0.0, 0.0], distance=2.5, azimuth=90, elevation=-60)
  ref = mujoco_image(path, cam, W, H, rnd=_NO_REFLECTION)
  img = our_image(path, cam, W, H, VisOptions(background=(0.0, 0.0, 0.0)))
  save_pair(f"transparent_shadows_{alpha}.png", ref, img)

  def shadow(x):
    x = x.astype(int)
    grey = x.max(-1) - x.min(-1) < 6
    return grey & (x.max(-1) > 30) & (x.max(-1) < 0.8 * np.median(x[grey].max(-1)))
  theirs, ours = shadow(ref), shadow(img)
  assert theirs.sum() > 1500
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.85, f"shadow IoU {iou:.3f}"


_SPOT = """<mujoco>
  <worldbody>
    <light pos="0 0 2" dir="0 0 -1" cutoff="45" exponent="1" diffuse=".7 .7 .7"/>
    <geom type="plane" size="3 3 .1" rgba=".8 .8 .8 1"/>
    <geom type="box" pos="0.3 0 0.5" size=".1 .1 .1" rgba=".9 .3 .2 1"/>
    <geom type="box" pos="0.9 0 0.5" size=".1 .1 .1" rgba=".2 .3 .9 1"/>
    <geom type="box" pos="-1.4 0 0.5" size=".1 .1 .1" rgba=".2 .9 .3 1"/>
  </worldbody>
</mujoco>
"""


def test_spot_light_shadows_only_inside_mujocos_shadow_frustum(tmp_path):
  """A spot light (cutoff 45 degrees) over three boxes whose shadows fall 11, 31 and 43
  degrees off its axis: MuJoCo's shadow frustum is 2 cutoff x map.shadowscale (0.6) wide, so
  only the first box casts one (floor pixels darkened by over 20% when shadows are turned on);
  ours covers the same pixels (IoU > 0.8). Measured: IoU 0.95; 0.27 with shadows over the
  whole cone, as before."""
  from numjoco.render.renderer import VisOptions
  path = tmp_path / "spot.xml"
  path.write_text(_SPOT)
  cam = dict(lookat=[0.0, 0.0, 0.0], distance=4.0, azimuth=90, elevation=-70)
  ref = mujoco_image(path, cam, W, H).astype(float)
  ref_off = mujoco_image(path, cam, W, H, rnd={"mjRND_SHADOW": 0}).astype(float)
  img = our_image(path, cam, W, H).astype(float)
  img_off = our_image(path, cam, W, H, VisOptions(shadows=False)).astype(float)
  save_pair("spot_shadow_frustum.png", ref.astype(np.uint8), img.astype(np.uint8))
  theirs = ref.sum(-1) < 0.8 * ref_off.sum(-1)
  ours = img.sum(-1) < 0.8 * img_off.sum(-1)
  assert theirs.sum() > 200
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.8, f"shadow IoU {iou:.3f}"
