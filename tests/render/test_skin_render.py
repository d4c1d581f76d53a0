"""Skins drawn as MuJoCo's renderer draws them: dm_control's dog (a textured skin of 24065
vertices over 57 bones) and rodent (untextured, default colour) against mujoco.Renderer's
picture from the same free camera."""
import os

import numpy as np
import pytest

from tests.render.mujoco_ref import (assert_mask_iou, mujoco_image, our_image, save_pair,
                                     skin_pictures)

W, H = 320, 240
# shadows and MuJoCo's floor reflection off (we draw no reflections): the skin's pixels are
# then what the skin flag adds to the picture, in both renderers
_RND = {"mjRND_SHADOW": 0, "mjRND_REFLECTION": 0}


def _dm(*parts):
  dm = pytest.importorskip("dm_control")
  return os.path.join(os.path.dirname(dm.__file__), *parts)


def _skin_mask(with_skin, without):
  """Pixels the skin changes (any channel by more than 24 of 255)."""
  return np.abs(with_skin.astype(int) - without.astype(int)).max(-1) > 24


_MODELS = {"dog": (("suite", "dog.xml"), [0.0, 0.0, 0.4], 1.6),
           "rodent": (("locomotion", "walkers", "assets", "rodent.xml"), [0.031, 0.0, 0.065],
                      0.35)}


@pytest.mark.parametrize("model,azimuth,elevation", [
    ("dog", 120, -20), ("dog", -30, -45), ("dog", 200, -5), ("rodent", 120, -20),
    ("rodent", 250, -50)])
def test_skin_as_mujoco_draws_it(model, azimuth, elevation):
  """The skin covers the pixels MuJoCo's renderer gives it (IoU > 0.9; a skin mask is where
  turning the skin flag on changes the picture) and its lit (dog: textured) colour agrees
  where both draw it (mean difference under 12 of 255 per channel). Measured: IoU 0.97,
  mean differences 1-3.3 of 255."""
  parts, lookat, distance = _MODELS[model]
  path = _dm(*parts)
  cam = dict(lookat=lookat, distance=distance, azimuth=azimuth, elevation=elevation)
  black = (0.0, 0.0, 0.0)       # MuJoCo's clear colour (the rodent has no skybox)
  ref, ref_off, img, img_off = skin_pictures(path, cam, W, H, rnd=_RND, shadows=False,
                                             background=black)
  save_pair(f"skin_{model}_{azimuth}_{elevation}.png", ref, img)
  theirs, ours = _skin_mask(ref, ref_off), _skin_mask(img, img_off)
  both = assert_mask_iou(theirs, ours, 2000, 0.9, "skin")
  diff = np.abs(ref[both].astype(float) - img[both].astype(float)).mean(0)
  assert (diff < 12).all(), f"mean colour difference {diff}"


# four skins on invisible bodies: rgba with inflate; a 2d texture through texture coordinates
# (texrepeat 2); a material's colour and emission with two bones (group 1); half transparent
_SCENE = """<mujoco>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".9 .2 .2" rgb2=".2 .2 .9"
             width="64" height="64"/>
    <material name="tex" texture="grid" texrepeat="2 2" specular="0.2"/>
    <material name="red" rgba="1 0.2 0.2 1" emission="0.1"/>
    <skin name="a" rgba="0.2 0.8 0.3 1" inflate="0.02" {tet}>
      <bone body="b1" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2 3" vertweight="1 1 1 1"/>
    </skin>
    <skin name="b" material="tex" texcoord="0 0 1 0 0 1 1 1" {tet}>
      <bone body="b2" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2 3" vertweight="1 1 1 1"/>
    </skin>
    <skin name="c" material="red" group="1" {tet}>
      <bone body="b3" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2" vertweight="1 1 1"/>
      <bone body="b4" bindpos="0 0 0" bindquat="1 0 0 0" vertid="3" vertweight="1"/>
    </skin>
    <skin name="d" rgba="0.9 0.9 0.2 0.5" {tet}>
      <bone body="b5" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2 3" vertweight="1 1 1 1"/>
    </skin>
  </asset>
  <worldbody>
    <light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false"
           diffuse=".5 .5 .5"/>
    <body name="b1" pos="-0.6 -0.3 0" euler="10 20 30"><freejoint/>{dot}</body>
    <body name="b2" pos="0.2 -0.4 0" euler="-20 10 50"><freejoint/>{dot}</body>
    <body name="b3" pos="-0.3 0.4 0" euler="30 0 -20"><freejoint/>{dot}
      <body name="b4" pos="0 0 0.2"><joint type="ball"/>{dot}</body>
    </body>
    <body name="b5" pos="0.4 0.3 0.1" euler="0 30 0"><freejoint/>{dot}</body>
  </worldbody>
</mujoco>
""".format(tet='vertex="0 0 0 .4 0 0 0 .4 0 0 0 .4" face="0 2 1 0 1 3 0 3 2 1 2 3"',
           dot='<geom size=".01" rgba="1 1 1 0"/>')


@pytest.mark.parametrize("transparent", [False, True])
def test_inline_skins_as_mujoco_draws_them(tmp_path, transparent):
  """Inline skins (rgba + inflate, texture coordinates, material colour with two bones,
  alpha 0.5; also in transparent mode) cover MuJoCo's pixels (IoU > 0.95) with its colours
  (mean difference under 8 of 255 per channel). Measured: IoU 0.98, differences under 1."""
  from numjoco.render.renderer import VisOptions
  path = tmp_path / "skins.xml"
  path.write_text(_SCENE)
  cam = dict(lookat=[-0.1, 0.0, 0.1], distance=1.7, azimuth=60, elevation=-30)
  ref = mujoco_image(path, cam, W, H, vis={"mjVIS_TRANSPARENT": int(transparent)})
  img = our_image(path, cam, W, H, VisOptions(shadows=False, background=(0.0, 0.0, 0.0),
                                              transparency=transparent))
  save_pair(f"skin_inline_{int(transparent)}.png", ref, img)
  theirs, ours = ref.max(-1) > 12, img.max(-1) > 12     # the skins on a black background
  assert theirs.sum() > 3000
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.95, f"IoU {iou:.3f}"
  both = theirs & ours
  diff = np.abs(ref[both].astype(float) - img[both].astype(float)).mean(0)
  assert (diff < 8).all(), f"mean colour difference {diff}"


def test_skin_groups_and_flag_hide_skins(tmp_path):
  """A skin is drawn only while its group is on (skin "c", group 1, alone with only group 1
  on; gone, the others unchanged, with group 1 off), and the skins flag (MuJoCo's mjVIS_SKIN)
  hides them all."""
  from numjoco.render.renderer import VisOptions
  path = tmp_path / "skins.xml"
  path.write_text(_SCENE)
  cam = dict(lookat=[-0.1, 0.0, 0.1], distance=1.7, azimuth=60, elevation=-30)

  def draw(**kw):
    return our_image(path, cam, W, H, VisOptions(shadows=False, background=(0.0, 0.0, 0.0),
                                                 **kw)).astype(int)
  img = draw()
  only_c = draw(skin_groups=[False, True, False, False, False, False])
  hidden = draw(skin_groups=[True, False, True, False, False, False])
  c = only_c.max(-1) > 12
  assert 500 < c.sum() < 0.5 * (img.max(-1) > 12).sum()
  assert (only_c[c, 0] > 2 * only_c[c, 1]).mean() > 0.95    # red: material "red" only
  assert (hidden[c].max(-1) < 12).mean() > 0.95             # nothing behind it
  assert (np.abs(img[~c] - hidden[~c]).max(-1) < 3).mean() > 0.99
  assert draw(skins=False).max() < 12                       # the black background only


def test_skins_cast_shadows_as_mujoco(tmp_path):
  """The inline skins over a floor, lit by a shadow-casting directional light: their shadows
  (grey floor pixels darker than the lit floor) cover MuJoCo's (IoU > 0.85; measured 0.94),
  the half-transparent skin's too (MuJoCo's shadow pass draws every geom but decorations).
  Only the left 70% of the picture is compared: MuJoCo's shadow acne speckles the rest."""
  from numjoco.render.renderer import VisOptions
  scene = _SCENE.replace('castshadow="false"', "").replace(
      "<worldbody>", '<worldbody><geom type="plane" size="2 2 .1" pos="0 0 -0.3" '
                     'rgba=".8 .8 .8 1"/>')
  path = tmp_path / "skins.xml"
  path.write_text(scene)
  cam = dict(lookat=[-0.1, 0.0, 0.0], distance=2.2, azimuth=60, elevation=-50)
  ref = mujoco_image(path, cam, W, H, rnd={"mjRND_REFLECTION": 0})
  img = our_image(path, cam, W, H, VisOptions(background=(0.0, 0.0, 0.0)))
  save_pair("skin_shadows.png", ref, img)

  def shadow(x):
    x = x[:, :int(0.7 * W)].astype(int)
    grey = x.max(-1) - x.min(-1) < 6
    return grey & (x.max(-1) > 40) & (x.max(-1) < 150)    # the lit floor is 177
  theirs, ours = shadow(ref), shadow(img)
  assert theirs.sum() > 1500
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.85, f"shadow IoU {iou:.3f}"


def test_selected_skin_glows_as_mujoco():
  """Selecting a skin's bone body (double-click picking sets MuJoCo's pert.select to the bone
  and pert.skinselect to the skin, as its studio app does; mjv_updateScene's addSkinGeoms then
  adds vis.global.glow to the skin's emission, addGeomGeoms to the selected body's geoms)
  brightens the dog's skin and its skull's eyes as in MuJoCo's picture: the same total
  brightening over the picture (within 10%; only unsaturated colours change), the pixels
  changed by over 6 of 255 where MuJoCo's change (IoU > 0.7: which pixels saturate differs a
  little, per-vertex clamping in MuJoCo's fixed-function lighting), and the selected colours
  agree (mean difference under 12 of 255 per channel). Measured: totals 128663 against
  128800, IoU 0.81, mean differences 2.6-8.5."""
  dm = pytest.importorskip("dm_control")
  path = os.path.join(os.path.dirname(dm.__file__), "suite", "dog.xml")
  skull = 48      # the bone body that carries the eyes
  cam = dict(lookat=[0.0, 0.0, 0.4], distance=1.6, azimuth=120, elevation=-20)
  from numjoco.render.renderer import VisOptions
  ref = mujoco_image(path, cam, W, H, rnd=_RND)
  ref_sel = mujoco_image(path, cam, W, H, rnd=_RND, pert={"select": skull, "skinselect": 0})
  opts = VisOptions(shadows=False)
  img = our_image(path, cam, W, H, opts)
  img_sel = our_image(path, cam, W, H, opts, highlight_body=skull, highlight_skin=0)
  save_pair("skin_selected.png", ref_sel, img_sel)
  theirs = np.abs(ref_sel.astype(int) - ref).max(-1) > 6
  ours = np.abs(img_sel.astype(int) - img).max(-1) > 6
  assert theirs.sum() > 1000, "MuJoCo's selected skin should glow"
  gain_theirs = (ref_sel.astype(float) - ref).sum()
  gain_ours = (img_sel.astype(float) - img).sum()
  assert abs(gain_ours / gain_theirs - 1) < 0.1, (gain_theirs, gain_ours)
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.7, f"glow IoU {iou:.3f}"
  both = theirs & ours
  diff = np.abs(ref_sel[both].astype(float) - img_sel[both]).mean(0)
  assert (diff < 12).all(), f"mean colour difference {diff}"
