"""File and builtin textures drawn as MuJoCo's renderer draws them: our image of small scenes
against mujoco.Renderer's (EGL, in a subprocess) from the same camera. PNGs are written here with
Pillow, in colours that show orientation; the comparisons are per-pixel colour agreement where
both draw the textured object, so ignoring a texture (or mirroring it) fails."""
import os

import numpy as np
import pytest
from PIL import Image

import numjoco
from numjoco import engine
from numjoco.render.renderer import VisOptions
from tests.render.mujoco_ref import mujoco_image, our_image, save_pair

W, H = 320, 240

QUADRANTS = [(230, 30, 30), (30, 200, 40), (40, 60, 230), (240, 220, 30)]


def _quadrant_png(path, size=(64, 32)):
  """A 2d image of four colours: top-left red, top-right green, bottom-left blue,
  bottom-right yellow (so flips and rotations show)."""
  w, h = size
  img = np.zeros((h, w, 3), np.uint8)
  img[:h // 2, :w // 2] = QUADRANTS[0]
  img[:h // 2, w // 2:] = QUADRANTS[1]
  img[h // 2:, :w // 2] = QUADRANTS[2]
  img[h // 2:, w // 2:] = QUADRANTS[3]
  Image.fromarray(img).save(path)


FACE_COLOURS = [(220, 40, 40), (40, 200, 60), (50, 70, 230), (230, 210, 40), (40, 210, 210),
                (210, 50, 210)]


def _face_pngs(d, n=16):
  """Six square PNGs, one colour each, with a dark corner square (orientation)."""
  names = []
  for i, c in enumerate(FACE_COLOURS):
    img = np.zeros((n, n, 3), np.uint8)
    img[:] = c
    img[:n // 4, :n // 4] = (20, 20, 20)
    name = f"face{i}.png"
    Image.fromarray(img).save(os.path.join(d, name))
    names.append(name)
  return names


def _render_both(tmp_path, xml, az, el, dist, lookat, tag, options=None, path=None):
  """MuJoCo's image and ours of `xml` (or of the model file `path`), both int arrays."""
  if path is None:
    path = tmp_path / "scene.xml"
    path.write_text(xml)
  cam = dict(azimuth=az, elevation=el, distance=dist, lookat=lookat)
  ref = mujoco_image(path, cam, W, H)
  img = our_image(path, cam, W, H, options or VisOptions(shadows=False))
  save_pair(f"textures_{tag}.png", ref, img)
  return ref.astype(int), img.astype(int), numjoco.load_model(str(path))


def _agree(ref, img, mask, tol=40):
  """Fraction of `mask` pixels where the colours agree within `tol` (max channel)."""
  return (np.abs(ref - img).max(2)[mask] <= tol).mean()


def _hue_agree(ref, img, mask, tol=0.25):
  """Fraction of `mask` pixels whose colours agree after scaling to a maximum channel of 1
  (the texture's colour, whatever the shading)."""
  a, b = ref[mask].astype(float), img[mask].astype(float)
  a /= np.maximum(a.max(1, keepdims=True), 1)
  b /= np.maximum(b.max(1, keepdims=True), 1)
  return (np.abs(a - b).max(1) <= tol).mean()


def _colour_share(img, colour, mask, tol=0.2):
  """Fraction of `mask` pixels of the hue of `colour`, whatever their lighting (colours
  compared after scaling each to a maximum channel of 1)."""
  x = img[mask].astype(float)
  x /= np.maximum(x.max(1, keepdims=True), 1)
  c = np.asarray(colour, float) / max(colour)
  return (np.abs(x - c).max(1) <= tol).mean()


def _assert_colour_shares(ref, img, colours, least, count):
  """Over MuJoCo's lit pixels (channel sum over 60): at least `count` of `colours` each take
  more than `least` of them in MuJoCo's picture, and every colour's share in ours is within
  0.05 of MuJoCo's. Returns the mask of lit pixels."""
  mask = ref.sum(2) > 60
  shares = [_colour_share(ref, c, mask) for c in colours]
  assert sum(s > least for s in shares) >= count
  for c, s in zip(colours, shares):
    assert abs(s - _colour_share(img, c, mask)) < 0.05
  return mask


LIGHT = '<light pos="0 0 3" dir="0 0 -1" directional="true" castshadow="false" diffuse=".6 .6 .6"/>'


def test_2d_file_texture_on_a_finite_plane(tmp_path):
  """A PNG on a finite plane (texrepeat 2 1): same quadrant colours in the same places as
  MuJoCo's (its anchor at the plane's corner, u along +x, the image's top row at +y)."""
  _quadrant_png(tmp_path / "quad.png")
  xml = f"""<mujoco><asset>
  <texture name="q" type="2d" file="quad.png"/>
  <material name="q" texture="q" texrepeat="2 1"/></asset>
  <worldbody>{LIGHT}<geom type="plane" size="1 0.5 0.1" material="q"/></worldbody></mujoco>"""
  ref, img, _ = _render_both(tmp_path, xml, 90, -89.9, 2.0, (0, 0, 0), "plane")
  mask = ref.sum(2) > 60
  assert mask.mean() > 0.2
  for c in QUADRANTS:          # each colour is really there (the texture is drawn)
    assert _colour_share(ref, c, mask) > 0.1
    assert abs(_colour_share(ref, c, mask) - _colour_share(img, c, mask)) < 0.05
  assert _agree(ref, img, mask) > 0.9


def test_2d_texture_on_primitives_and_infinite_plane(tmp_path):
  """MuJoCo 4's texture coordinates on a box, a sphere, a cylinder and a capsule, and an
  infinite textured floor anchored at the origin, seen from two sides."""
  _quadrant_png(tmp_path / "quad.png")
  xml = f"""<mujoco><asset>
  <texture name="q" type="2d" file="quad.png"/>
  <material name="q" texture="q"/>
  <material name="floor" texture="q" texrepeat="3 3" texuniform="true"/></asset>
  <worldbody>{LIGHT}
  <geom type="plane" size="0 0 0.1" material="floor" pos="0.1 0.2 0"/>
  <geom type="box" size=".15 .2 .1" pos="0 0 .3" euler="10 20 30" material="q"/>
  <geom type="sphere" size=".15" pos=".45 0 .3" euler="0 0 40" material="q"/>
  <geom type="cylinder" size=".1 .15" pos="-.45 0 .3" euler="60 0 0" material="q"/>
  <geom type="capsule" size=".08 .12" pos="0 .5 .3" euler="0 70 0" material="q"/>
  </worldbody></mujoco>"""
  for az, el in ((60, -35), (200, -50)):
    ref, img, _ = _render_both(tmp_path, xml, az, el, 2.0, (0, 0.1, 0.2), f"prims_{az}")
    mask = ref.sum(2) > 60
    assert _agree(ref, img, mask) > 0.85, (az, el)
    for c in QUADRANTS:
      assert _colour_share(ref, c, mask) > 0.03
      assert abs(_colour_share(ref, c, mask) - _colour_share(img, c, mask)) < 0.05


def test_cube_texture_from_six_files_on_a_box(tmp_path):
  """A cube texture from six PNG files on a box and a sphere: each face's colour where MuJoCo
  draws it."""
  names = _face_pngs(str(tmp_path))
  files = " ".join(f'{k}="{n}"' for k, n in zip(
      ("fileright", "fileleft", "fileup", "filedown", "filefront", "fileback"), names))
  xml = f"""<mujoco><asset>
  <texture name="c" type="cube" {files}/>
  <material name="c" texture="c"/></asset>
  <worldbody>{LIGHT}
  <geom type="box" size=".2 .2 .2" pos="0 0 0" euler="15 25 35" material="c"/>
  <geom type="sphere" size=".15" pos=".5 0 0" material="c"/>
  </worldbody></mujoco>"""
  for az, el in ((45, -30), (225, 30)):
    ref, img, _ = _render_both(tmp_path, xml, az, el, 1.8, (0.2, 0, 0), f"cube_{az}")
    mask = _assert_colour_shares(ref, img, FACE_COLOURS, 0.05, 3)
    assert _agree(ref, img, mask) > 0.85


def test_skybox_from_a_grid_file(tmp_path):
  """A skybox cut from one PNG (gridsize 3 4, gridlayout .U..LFRB.D..): the sky behind an
  empty scene has MuJoCo's colours, looking sideways and up."""
  s = 16
  img = np.zeros((3 * s, 4 * s, 3), np.uint8)
  layout = ".U..LFRB.D.."
  for k, ch in enumerate(layout):
    if ch != ".":
      r, c = divmod(k, 4)
      img[r * s:(r + 1) * s, c * s:(c + 1) * s] = FACE_COLOURS["RLUDFB".index(ch)]
      img[r * s:r * s + 4, c * s:c * s + 4] = 0
  Image.fromarray(img).save(tmp_path / "sky.png")
  xml = f"""<mujoco><asset>
  <texture type="skybox" file="sky.png" gridsize="3 4" gridlayout="{layout}"/></asset>
  <worldbody><geom type="sphere" size=".05" rgba="1 1 1 1"/></worldbody></mujoco>"""
  for az, el in ((90, -10), (0, -20), (135, 60)):
    ref, img, _ = _render_both(tmp_path, xml, az, el, 1.0, (0, 0, 0), f"sky_{az}_{el}")
    mask = np.ones(ref.shape[:2], bool)
    mask[H // 2 - 20:H // 2 + 20, W // 2 - 20:W // 2 + 20] = False   # the sphere
    assert _agree(ref, img, mask) > 0.9, (az, el)


def test_builtin_gradient_skybox_with_stars_and_edge_grid_floor(tmp_path):
  """dm_control's look: a gradient skybox with random marks and a checker floor with edge
  marks (drawn from the texture pixels, not procedurally)."""
  xml = f"""<mujoco><asset>
  <texture type="skybox" builtin="gradient" rgb1=".4 .6 .8" rgb2="0 0 0" width="200"
    height="200" mark="random" markrgb="1 1 1"/>
  <texture name="grid" type="2d" builtin="checker" rgb1=".1 .2 .3" rgb2=".2 .3 .4" width="300"
    height="300" mark="edge" markrgb=".2 .3 .4"/>
  <material name="grid" texture="grid" texrepeat="1 1" texuniform="true"/></asset>
  <worldbody>{LIGHT}<geom type="plane" size="2 2 .1" material="grid"/></worldbody></mujoco>"""
  ref, img, _ = _render_both(tmp_path, xml, 90, -20, 3.0, (0, 0, 0), "dmc")
  sky = np.zeros(ref.shape[:2], bool)
  sky[:H // 4] = True
  assert _agree(ref, img, sky, tol=25) > 0.9
  np.testing.assert_allclose(ref[sky].mean(0), img[sky].mean(0), atol=8)
  floor = np.zeros_like(sky)
  floor[int(0.8 * H):] = True
  np.testing.assert_allclose(ref[floor].mean(0), img[floor].mean(0), atol=10)


def _obj_cube_with_uv(path):
  """A cube OBJ whose opposite faces map to one quadrant of a 2d texture each (x: top-left,
  y: top-right, z: bottom-right), so any view shows several colours."""
  v = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
  lines = [f"v {x * .2} {y * .2} {z * .2}" for x, y, z in v]
  lines += ["vt 0.05 0.55", "vt 0.45 0.55", "vt 0.45 0.95", "vt 0.05 0.95",      # top-left
            "vt 0.55 0.55", "vt 0.95 0.55", "vt 0.95 0.95", "vt 0.55 0.95",      # top-right
            "vt 0.05 0.05", "vt 0.45 0.05", "vt 0.45 0.45", "vt 0.05 0.45",      # bottom-left
            "vt 0.55 0.05", "vt 0.95 0.05", "vt 0.95 0.45", "vt 0.55 0.45"]      # bottom-right
  idx = lambda x, y, z: 1 + 4 * (x > 0) + 2 * (y > 0) + (z > 0)
  faces = [  # (corners counter-clockwise seen from outside, quadrant)
      ([(1, -1, -1), (1, 1, -1), (1, 1, 1), (1, -1, 1)], 0),
      ([(-1, 1, -1), (-1, -1, -1), (-1, -1, 1), (-1, 1, 1)], 0),
      ([(1, 1, -1), (-1, 1, -1), (-1, 1, 1), (1, 1, 1)], 1),
      ([(-1, -1, -1), (1, -1, -1), (1, -1, 1), (-1, -1, 1)], 1),
      ([(-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1)], 3),
      ([(-1, 1, -1), (1, 1, -1), (1, -1, -1), (-1, -1, -1)], 3)]
  for corners, q in faces:
    lines.append("f " + " ".join(f"{idx(*c)}/{4 * q + k + 1}" for k, c in enumerate(corners)))
  path.write_text("\n".join(lines) + "\n")


def test_textured_obj_mesh(tmp_path):
  """An OBJ with vt coordinates: each face shows the texture quadrant its coordinates pick
  (MuJoCo flips v on load), in the same places as MuJoCo's image."""
  _quadrant_png(tmp_path / "quad.png")
  _obj_cube_with_uv(tmp_path / "cube.obj")
  xml = f"""<mujoco><asset>
  <texture name="q" type="2d" file="quad.png"/>
  <material name="q" texture="q"/>
  <mesh name="cube" file="cube.obj"/></asset>
  <worldbody>{LIGHT}
  <geom type="mesh" mesh="cube" material="q" euler="10 20 30"/></worldbody></mujoco>"""
  for az, el in ((45, -30), (225, 40)):
    ref, img, m = _render_both(tmp_path, xml, az, el, 1.5, (0, 0, 0), f"obj_{az}")
    assert m.mesh_texcoordadr[0] == 0 and m.mesh_texcoordnum[0] == 16
    mask = _assert_colour_shares(ref, img, QUADRANTS, 0.1, 2)
    # MuJoCo smooths this cube's vertex normals, we keep its creases: compare hues
    assert _hue_agree(ref, img, mask) > 0.9


def test_missing_texture_file_is_a_clear_error(tmp_path):
  """A texture whose file is missing or not a PNG: an error naming the file, the element and
  its line."""
  (tmp_path / "bad.png").write_bytes(b"not a png")
  for f, what in (("nothere.png", "not found"), ("bad.png", "cannot decode PNG")):
    path = tmp_path / "m.xml"
    path.write_text(f"""<mujoco><asset>
  <texture name="t" type="2d" file="{f}"/></asset><worldbody/></mujoco>""")
    with pytest.raises(ValueError) as e:
      numjoco.load_model(str(path))
    msg = str(e.value)
    assert f in msg and what in msg and "texture" in msg and "m.xml:2" in msg, msg


_KTX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "assets", "mujoco_models", "test",
                    "render", "testdata", "ibl.ktx")


def test_one_channel_and_ktx_textures_are_not_drawn(tmp_path):
  """MuJoCo 4.0 keeps a KTX file's bytes as a 1 x filesize one-channel 2d texture, and its
  OpenGL renderer skips every one-channel texture ("classic renderer can't upload 1-channel
  data"): geoms with such materials keep their colour. A black-and-white grey PNG (nchannel 1)
  and a KTX texture on two boxes: MuJoCo's picture."""
  stripes = np.zeros((32, 32), np.uint8)
  stripes[:, ::8] = 255
  Image.fromarray(stripes, "L").save(tmp_path / "grey.png")
  with open(_KTX, "rb") as f:
    (tmp_path / "ibl.ktx").write_bytes(f.read())
  xml = """<mujoco><asset>
  <texture name="grey" type="2d" file="grey.png" nchannel="1"/>
  <texture name="ibl" type="2d" file="ibl.ktx"/>
  <material name="a" texture="grey" rgba=".2 .6 .9 1"/>
  <material name="b" texture="ibl" rgba=".9 .5 .2 1"/></asset>
  <worldbody><light pos="0 0 3"/>
  <geom type="box" size=".3 .3 .3" pos="-.4 0 0" material="a"/>
  <geom type="box" size=".3 .3 .3" pos=".4 0 0" material="b"/></worldbody></mujoco>"""
  ref, img, m = _render_both(tmp_path, xml, 30, -30, 2.5, (0, 0, 0), "one_channel")
  assert int(m.tex_width[1]) == os.path.getsize(_KTX) and int(m.tex_nchannel[1]) == 1
  boxes = ref.sum(2) > 40
  assert boxes.mean() > 0.1
  assert _agree(ref, img, boxes, tol=24) > 0.97


def test_ktx_texture_fields_and_errors_as_mujoco(tmp_path):
  """The KTX bytes, size and colour space equal 4.0's; a KTX cube or a flipped KTX is refused
  as 4.0 refuses it."""
  import mujoco
  from numjoco.engine.mjcf import MjcfError, compile_model
  from tests.test_mjcf_compile import assert_same
  with open(_KTX, "rb") as f:
    assets = {"ibl.ktx": f.read()}
  for attrs in ('type="2d"', 'type="2d" colorspace="sRGB"', 'type="2d" nchannel="4"',
                'type="2d" content_type="image/ktx"'):
    xml = f'<mujoco><asset><texture name="t" {attrs} file="ibl.ktx"/></asset></mujoco>'
    assert_same(compile_model(xml, assets), mujoco.MjModel.from_xml_string(xml, assets))
  for attrs, msg in (('type="cube"', "3 channels"), ('type="skybox"', "3 channels"),
                     ('type="2d" vflip="true"', "cannot flip KTX")):
    xml = f'<mujoco><asset><texture name="t" {attrs} file="ibl.ktx"/></asset></mujoco>'
    with pytest.raises(ValueError):
      mujoco.MjModel.from_xml_string(xml, assets)
    with pytest.raises(MjcfError, match=msg):
      compile_model(xml, assets)


def test_dm_control_humanoid_looks_like_mujoco(tmp_path):
  """dm_control's humanoid (gradient skybox with stars, checker floor with edge marks, body
  materials): MuJoCo's colours pixel by pixel over most of the image."""
  from tests.models import suite_source
  src, _ = suite_source("humanoid")
  ref, img, m = _render_both(tmp_path, None, 120, -15, 4.0, (0, 0, 1.0), "humanoid",
                             path=src)
  assert m.ntex >= 2 and (m.tex_type == 2).any()
  mask = np.ones(ref.shape[:2], bool)
  assert _agree(ref, img, mask, tol=30) > 0.9
  np.testing.assert_allclose(ref.reshape(-1, 3).mean(0), img.reshape(-1, 3).mean(0), atol=6)


def test_other_mappings_match_mujoco(tmp_path):
  """The remaining mappings against MuJoCo's image: material rgba tinting a texture, an sRGB
  texture, a single-file cube map on a sphere, a six-file cube map with texuniform on a long
  box, object-linear coordinates on a mesh without vt and on a height field, an RGBA texture
  on an opaque geom."""
  _quadrant_png(tmp_path / "quad.png")
  _face_pngs(str(tmp_path))
  a = np.zeros((32, 32, 4), np.uint8)
  a[..., :3], a[..., 3] = (200, 100, 50), 255
  a[8:24, 8:24, 3] = 60
  Image.fromarray(a).save(tmp_path / "alpha.png")
  (tmp_path / "tet.obj").write_text("v -.2 -.2 -.2\nv .2 -.2 -.2\nv 0 .2 -.2\nv 0 0 .2\n"
                                    "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n")
  xml = f"""<mujoco><asset>
  <texture name="q" type="2d" file="quad.png"/>
  <texture name="qs" type="2d" file="quad.png" colorspace="sRGB"/>
  <texture name="one" type="cube" file="face0.png"/>
  <texture name="c6" type="cube" fileright="face0.png" fileleft="face1.png" fileup="face2.png"
    filedown="face3.png" filefront="face4.png" fileback="face5.png"/>
  <texture name="al" type="2d" file="alpha.png" nchannel="4"/>
  <material name="q" texture="q"/>
  <material name="qs" texture="qs"/>
  <material name="tint" texture="q" rgba=".3 1 1 1"/>
  <material name="one" texture="one"/>
  <material name="c6u" texture="c6" texuniform="true"/>
  <material name="al" texture="al"/>
  <mesh name="tet" file="tet.obj"/>
  <hfield name="hf" nrow="3" ncol="3" elevation="0 1 0 1 2 1 0 1 0" size=".3 .3 .1 .05"/>
  </asset>
  <worldbody>{LIGHT}
  <geom type="plane" size=".4 .4 .1" material="qs" pos="-1 0 0"/>
  <geom type="box" size=".2 .2 .2" material="tint" pos="0 0 .2"/>
  <geom type="box" size=".3 .1 .2" material="c6u" pos="0 -.8 .2" euler="0 0 20"/>
  <geom type="sphere" size=".15" material="one" pos=".8 0 .2"/>
  <geom type="mesh" mesh="tet" material="q" pos=".8 .8 .2"/>
  <geom type="hfield" hfield="hf" material="q" pos="0 .9 0"/>
  <geom type="box" size=".15 .15 .15" material="al" pos="-.9 -.9 .2"/>
  </worldbody></mujoco>"""
  for az, el in ((60, -40), (240, -40)):
    ref, img, m = _render_both(tmp_path, xml, az, el, 3.5, (0, 0, 0), f"mixed_{az}")
    assert m.mesh_texcoordadr[0] == -1 and m.tex_colorspace[1] == 2
    mask = ref.sum(2) > 60
    assert _agree(ref, img, mask) > 0.9, az


def test_texture_fields_match_mujoco(tmp_path):
  """The compiled texture fields equal MuJoCo's byte for byte: a flipped 2d PNG, a cube from
  six files (one missing: rgb1), a skybox cut from a grid, builtin checker/gradient/flat with
  edge, cross and random marks (MuJoCo's seeded generator), a texture default class, a material
  <layer>, and OBJ texture coordinates (also under a mirroring scale)."""
  import mujoco
  img = np.zeros((8, 16, 3), np.uint8)
  img[:4], img[4:] = (255, 0, 0), (0, 0, 255)
  img[:, :4, 1] = 200
  Image.fromarray(img).save(tmp_path / "two.png")
  names = _face_pngs(str(tmp_path), 8)
  g = np.zeros((24, 32, 3), np.uint8)
  for k in range(12):
    g[8 * (k // 4):8 * (k // 4 + 1), 8 * (k % 4):8 * (k % 4 + 1)] = 20 * k
  Image.fromarray(g).save(tmp_path / "grid.png")
  _obj_cube_with_uv(tmp_path / "cube.obj")
  xml = f"""<mujoco><compiler texturedir="."/>
  <default><texture builtin="checker" rgb1=".3 .3 .3"/></default>
  <asset>
  <texture name="two" type="2d" file="two.png" hflip="true" vflip="true" builtin="none"/>
  <texture name="six" type="cube" fileright="{names[0]}" fileleft="{names[1]}" builtin="none"
    fileup="{names[2]}" filedown="{names[3]}" filefront="{names[4]}" rgb1="1 .5 0"/>
  <texture name="grid" type="skybox" file="grid.png" gridsize="3 4" gridlayout=".U..LFRB.D.."
    builtin="none"/>
  <texture name="chk" type="2d" width="10" height="6" rgb2=".9 .8 .7" mark="edge"
    markrgb="1 1 1"/>
  <texture name="grad" type="2d" builtin="gradient" width="9" height="7" rgb1=".1 .2 .3"
    rgb2=".9 .8 .7" mark="cross" markrgb="0 1 0"/>
  <texture name="sky" type="skybox" builtin="gradient" width="40" rgb1=".4 .6 .8" rgb2="0 0 0"
    mark="random" markrgb="1 1 1" random="0.05"/>
  <texture name="flat" type="cube" builtin="flat" width="4" rgb1="1 0 0" rgb2="0 1 0"/>
  <material name="m1" texture="two" texrepeat="2 3" texuniform="true"/>
  <material name="m2"><layer texture="six" role="rgb"/></material>
  <mesh name="cube" file="cube.obj"/>
  <mesh name="mirror" file="cube.obj" scale="-1 1 1"/>
  </asset>
  <worldbody><geom type="mesh" mesh="cube" material="m1"/>
  <geom type="mesh" mesh="mirror" material="m2"/></worldbody></mujoco>"""
  path = tmp_path / "fields.xml"
  path.write_text(xml)
  ours, ref = numjoco.load_model(str(path)), mujoco.MjModel.from_xml_path(str(path))
  assert ours.ntex == ref.ntex == 7
  for f in ("tex_type", "tex_height", "tex_width", "tex_nchannel", "tex_adr", "mat_texid",
            "mat_texuniform", "mat_texrepeat", "mesh_texcoordadr", "mesh_texcoordnum",
            "mesh_texcoord", "mesh_facetexcoord", "tex_data"):
    np.testing.assert_array_equal(np.asarray(getattr(ours, f)).reshape(-1),
                                  np.asarray(getattr(ref, f)).reshape(-1), err_msg=f)
  assert ours.names[engine.types.mjtObj.TEXTURE] == [
      mujoco.mj_id2name(ref, mujoco.mjtObj.mjOBJ_TEXTURE, i) for i in range(ref.ntex)]
