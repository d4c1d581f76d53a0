"""A plane without a material is drawn in one colour, as MuJoCo draws it (no checker)."""
import numpy as np

from numjoco.render.renderer import VisOptions
from tests.render.mujoco_ref import mujoco_image, our_image, save_pair

W, H = 320, 240
XML = """<mujoco><worldbody><light pos="0 0 3" dir="0 0 -1" castshadow="false"/>
<geom type="plane" size="2 2 .1" rgba=".4 .5 .3 1"/>
<geom type="sphere" size=".2" pos="0 0 .2"/></worldbody></mujoco>"""


def test_plain_plane_is_one_colour_as_mujoco(tmp_path):
  path = tmp_path / "plane.xml"
  path.write_text(XML)
  cam = {"lookat": [0, 0, 0], "distance": 3.0, "azimuth": 90.0, "elevation": -30.0}
  ref = mujoco_image(path, cam, W, H).astype(int)
  img = our_image(path, cam, W, H, VisOptions(shadows=False)).astype(int)
  save_pair("plain_plane.png", ref.astype(np.uint8), img.astype(np.uint8))
  floor = np.zeros((H, W), bool)
  floor[int(0.75 * H):, :] = True                 # below the sphere: floor only
  floor &= ref.sum(2) > 30
  assert floor.mean() > 0.15
  # along each floor row MuJoCo's colour changes smoothly (lighting only): no squares
  assert np.abs(np.diff(ref[floor.any(1)][:, ::8].sum(2), axis=1)).max() < 30
  assert (np.abs(ref - img).max(2)[floor] <= 24).mean() > 0.95
