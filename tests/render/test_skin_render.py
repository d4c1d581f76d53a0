"""Skins drawn as MuJoCo's renderer draws them: dm_control's dog (a textured skin of 24065
vertices over 57 bones) and rodent (untextured, default colour) against mujoco.Renderer's
picture from the same free camera."""
import os

import numpy as np
import pytest

from tests.render.mujoco_ref import mujoco_image, our_image, save_pair

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
  from render.renderer import VisOptions
  parts, lookat, distance = _MODELS[model]
  path = _dm(*parts)
  cam = dict(lookat=lookat, distance=distance, azimuth=azimuth, elevation=elevation)
  ref = mujoco_image(path, cam, W, H, rnd=_RND)
  ref_off = mujoco_image(path, cam, W, H, vis={"mjVIS_SKIN": 0}, rnd=_RND)
  black = (0.0, 0.0, 0.0)       # MuJoCo's clear colour (the rodent has no skybox)
  img = our_image(path, cam, W, H, VisOptions(shadows=False, background=black))
  img_off = our_image(path, cam, W, H,
                      VisOptions(shadows=False, skins=False, background=black))
  save_pair(f"skin_{model}_{azimuth}_{elevation}.png", ref, img)
  theirs, ours = _skin_mask(ref, ref_off), _skin_mask(img, img_off)
  assert theirs.sum() > 2000, "the skin should fill a good part of the picture"
  iou = (theirs & ours).sum() / (theirs | ours).sum()
  assert iou > 0.9, f"skin IoU {iou:.3f}"
  both = theirs & ours
  diff = np.abs(ref[both].astype(float) - img[both].astype(float)).mean(0)
  assert (diff < 12).all(), f"mean colour difference {diff}"
