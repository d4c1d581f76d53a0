"""MJCF <skin>: compiled skin_* fields equal MuJoCo 4.0's, bad skins are errors naming the
element, and the per-frame vertices and normals (render/skin.py) equal mjv_updateSkin's."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import MjcfError, compile_model                         # noqa: E402
from numjoco.engine.mjcf._skin import FIELDS, SIZES                             # noqa: E402


def _dm_path(*parts):
  dm = pytest.importorskip("dm_control")
  return os.path.join(os.path.dirname(dm.__file__), *parts)


DOG = ("suite", "dog.xml")
RODENT = ("locomotion", "walkers", "assets", "rodent.xml")
DOG_V2 = ("locomotion", "walkers", "assets", "dog_v2", "dog.xml")
CUBE = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models", "test", "user",
                    "testdata", "cube_skin.xml")


def write_skn(path, vert, tex, face, bones, extra=b""):
  """An SKN file as MuJoCo's doc lays it out (bones: name, bindpos, bindquat, vertid,
  vertweight)."""
  out = [np.array([len(vert) // 3, len(tex) // 2, len(face) // 3, len(bones)], "<i4").tobytes(),
         np.array(vert, "<f4").tobytes(), np.array(tex, "<f4").tobytes(),
         np.array(face, "<i4").tobytes()]
  for name, pos, quat, vid, vw in bones:
    out.append(name.encode().ljust(40, b"\0"))
    out.append(np.array(list(pos) + list(quat), "<f4").tobytes())
    out.append(np.array([len(vid)], "<i4").tobytes() + np.array(vid, "<i4").tobytes()
               + np.array(vw, "<f4").tobytes())
  with open(path, "wb") as f:
    f.write(b"".join(out) + extra)


def assert_skins_equal(ours, mjm):
  """Every skin size and field of compile_model's output equal (value and dtype) to mjm's."""
  sizes, A, names = ours
  for k in SIZES:
    assert A[k] == getattr(mjm, k), k
  for k in FIELDS:
    a, b = np.asarray(A[k]), np.asarray(getattr(mjm, k))
    assert a.dtype == b.dtype, (k, a.dtype, b.dtype)
    np.testing.assert_array_equal(a.reshape(b.shape), b, err_msg=k)
  want = [mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_SKIN, i) or "" for i in range(mjm.nskin)]
  assert names[11] == want     # mjtObj.SKIN


@pytest.mark.parametrize("parts", [DOG, RODENT, DOG_V2, (CUBE,)],
                         ids=["dog", "rodent", "dog_v2", "cube_skin"])
def test_skins_compile_as_mujoco(parts):
  """dm_control's dogs' (24065 vertices, 57 bones, textured) and rodent's skins and MuJoCo's
  cube_skin test model, from their SKN files: every skin_* field bit for bit 4.0's (weights
  normalised in float32, bindquat in double)."""
  path = parts[0] if parts == (CUBE,) else _dm_path(*parts)
  with warnings.catch_warnings():
    warnings.simplefilter("error")       # no "not supported" warning any more
    ours = compile_model(path)
  assert_skins_equal(ours, mujoco.MjModel.from_xml_path(path))


_INLINE = """<mujoco>
  <compiler {compiler}/>
  <asset>
    <material name="m" rgba="1 0 0 1" specular="0.3"/>
    <skin name="a" material="m" rgba="0.2 0.3 0.4 1" inflate="0.01" group="2"
          vertex="0 0 0 1 0 0 0 1 0 0 0 1" texcoord="0 0 1 0 0 1 1 1"
          face="0 1 2 0 2 3 0 3 1 1 3 2">
      <bone body="b1" bindpos="0 0 0" bindquat="2 0 0 0" vertid="0 1 2 3" vertweight="1 2 1 1"/>
      <bone body="b2" bindpos="0.1 0 0" bindquat="1 0 0.1 0" vertid="1 3" vertweight="1 0.5"/>
    </skin>
  </asset>
  <deformable>
    <skin name="d" file="s.skn" material="m"/>
  </deformable>
  <worldbody>
    <body name="b1"><geom size=".1"/>
      <body name="b2" pos=".1 0 0"><geom size=".1"/></body>
    </body>
  </worldbody>
</mujoco>
"""


def _skn_bones():
  return [("b2", (0.1, 0, 0), (1, 0, 0, 0), [0, 1, 2], [1, 1, 1]),
          ("b1", (0, 0, 0), (0.5, 0.5, 0.5, 0.5), [2], [3])]


@pytest.mark.parametrize("compiler", ["", 'discardvisual="true"', 'fusestatic="true"'])
def test_inline_and_file_skins_compile_as_mujoco(tmp_path, compiler):
  """An <asset> skin with inline data (texcoords, material and rgba, inflate, group,
  unnormalised weights and bindquat) and a <deformable> skin from an SKN file: equal to 4.0's,
  also with discardvisual (no materials: skin_matid -1) and fusestatic (bone bodies kept,
  those named in the SKN file too)."""
  write_skn(tmp_path / "s.skn", [0, 0, 0, 1, 0, 0, 0, 1, 0], [], [0, 1, 2], _skn_bones())
  path = tmp_path / "model.xml"
  path.write_text(_INLINE.format(compiler=compiler))
  ours = compile_model(str(path))
  mjm = mujoco.MjModel.from_xml_path(str(path))
  assert mjm.nskin == 2
  assert_skins_equal(ours, mjm)


def _bad(tmp_path, skin, files=()):
  """(our error, whether MuJoCo 4.0 refuses the model too) for a model with <skin> `skin`."""
  for name, data in files:
    (tmp_path / name).write_bytes(data)
  path = tmp_path / "model.xml"
  path.write_text('<mujoco>\n<asset>\n' + skin + '\n</asset>\n<worldbody>\n<body name="b1">'
                  '<geom size=".1"/></body>\n</worldbody>\n</mujoco>\n')
  with pytest.raises(MjcfError) as e:
    compile_model(str(path))
  try:
    mujoco.MjModel.from_xml_path(str(path))
    refused = False
  except ValueError:
    refused = True
  return str(e.value), refused


def _skn_bytes(tmp_path, **kw):
  args = dict(vert=[0, 0, 0, 1, 0, 0, 0, 1, 0], tex=[], face=[0, 1, 2],
              bones=[("b1", (0, 0, 0), (1, 0, 0, 0), [0, 1, 2], [1, 1, 1])])
  args.update(kw)
  write_skn(tmp_path / "tmp.skn", **args)
  return (tmp_path / "tmp.skn").read_bytes()


def test_bad_skins_are_errors_naming_file_line_and_element(tmp_path):
  """Each bad skin is refused by MuJoCo 4.0 too; ours names the file, line and element (the
  <bone> for a bad bone) and says what is wrong."""
  inline = ('<skin name="s" vertex="0 0 0 1 0 0 0 1 0" face="0 1 2">\n'
            '<bone body="{body}" bindpos="0 0 0" bindquat="1 0 0 0" vertid="{vid}" '
            'vertweight="1 1 1"/>\n</skin>')
  good = _skn_bytes(tmp_path)
  cases = [
      ('<skin name="s" file="missing.skn"/>', (), 'model.xml:3: <skin name="s">: skin file '
       "'missing.skn' not found"),
      (inline.format(body="nobody", vid="0 1 2"), (),
       "model.xml:4: <bone>: unknown body 'nobody' in skin"),
      (inline.format(body="b1", vid="0 1 3"), (),
       "model.xml:4: <bone>: vertid 3 out of range in skin"),
      (inline.format(body="b1", vid="0 1"), (),
       "model.xml:4: <bone>: vertid and vertweight must have the same non-zero size"),
      ('<skin name="s" file="s.skn"/>', (("s.skn", good[:-4]),),
       "model.xml:3: <skin name=\"s\">: insufficient vertex data in SKN file 's.skn', bone 0"),
      ('<skin name="s" file="s.skn"/>', (("s.skn", good + b"\0\0\0\0"),),
       "model.xml:3: <skin name=\"s\">: unexpected size of SKN file 's.skn'"),
      ('<skin name="s" file="s.skn"/>', (("s.skn", good[:10]),),
       "model.xml:3: <skin name=\"s\">: missing header in SKN file 's.skn'"),
      ('<skin name="s" file="s.skn"/>',
       (("s.skn", _skn_bytes(tmp_path, bones=[("nobody", (0, 0, 0), (1, 0, 0, 0), [0, 1, 2],
                                                [1, 1, 1])])),),
       "model.xml:3: <skin name=\"s\">: unknown body 'nobody' in skin"),
      ('<skin name="s" file="s.skn"/>',
       (("s.skn", _skn_bytes(tmp_path, bones=[("b1", (0, 0, 0), (1, 0, 0, 0), [0, 1],
                                                [1, 1])])),),
       "model.xml:3: <skin name=\"s\">: vertex 2 must have positive total weight in skin"),
      ('<skin name="s" file="s.skn" vertex="0 0 0"/>', (("s.skn", good),),
       "model.xml:3: <skin name=\"s\">: both skin data and file were specified"),
      ('<skin name="s" file="s.stl"/>', (("s.stl", good),),
       "model.xml:3: <skin name=\"s\">: unknown skin file type"),
      ('<skin name="s" vertex="0 0 0 1 0 0 0 1 0" face="0 1 2"/>', (),
       "model.xml:3: <skin name=\"s\">: missing data in skin"),
      ('<skin name="s" file="s.skn" group="6"/>', (("s.skn", good),),
       "model.xml:3: <skin name=\"s\">: skin group must be between 0 and 5"),
      ('<skin name="s" file="s.skn" material="nomat"/>', (("s.skn", good),),
       "model.xml:3: <skin name=\"s\">: unknown material 'nomat' in skin"),
      ('<skin name="s" file="s.skn" colour="1 0 0 1"/>', (("s.skn", good),),
       "model.xml:3: <skin name=\"s\">: unknown attribute 'colour'"),
  ]
  for skin, files, want in cases:
    msg, refused = _bad(tmp_path, skin, files)
    assert msg.startswith(want), (msg, want)
    assert refused, f"MuJoCo 4.0 loads the model we refuse: {skin}"


def _our_kinematics(m, qpos):
  import numjoco
  d = numjoco.make_data(m)
  d.qpos[:] = qpos
  numjoco.forward(m, d)
  return d


@pytest.mark.parametrize("parts", [DOG, RODENT], ids=["dog", "rodent"])
def test_skin_vertices_and_normals_equal_mjv_update_skin(parts):
  """render/skin.py's vertices and normals with our kinematics equal MuJoCo 4.0's
  mjv_updateSkin (scn.skinvert, scn.skinnormal, float32) at qpos0 and four random poses, to
  1e-5 (measured: equal bit for bit)."""
  import numjoco
  from numjoco.render.skin import SkinModel
  path = _dm_path(*parts)
  m = numjoco.load_model(path)
  mjm = mujoco.MjModel.from_xml_path(path)
  mjd = mujoco.MjData(mjm)
  scn = mujoco.MjvScene(mjm, 100)
  sk = SkinModel(m)
  rng = np.random.default_rng(3)
  for k in range(5):
    mjd.qpos[:] = mjm.qpos0 + (rng.normal(size=mjm.nq) * 0.4 if k else 0)
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_kinematics(mjm, mjd)
    mujoco.mjv_updateSkin(mjm, mjd, scn)
    d = _our_kinematics(m, mjd.qpos)
    vert, normal = sk.update(d.xpos, d.xquat)
    assert vert.dtype == normal.dtype == np.float32
    np.testing.assert_allclose(vert.ravel(), scn.skinvert, rtol=0, atol=1e-5)
    np.testing.assert_allclose(normal.ravel(), scn.skinnormal, rtol=0, atol=1e-5)
  # a hidden skin group: MuJoCo's mjv_updateActiveSkin leaves its vertices zero
  vert, normal = sk.update(d.xpos, d.xquat, visible=np.zeros(m.nskin, bool))
  assert not vert.any() and not normal.any()


def test_skin_inflate_equals_mujoco(tmp_path):
  """inflate moves each vertex along its normal: the inline skin (inflate 0.01, two bones,
  one rotated bind pose) at random poses equals mjv_updateSkin to 1e-6."""
  import numjoco
  from numjoco.render.skin import SkinModel
  xml = _INLINE.replace("<compiler {compiler}/>", "").replace(
      '<body name="b1">', '<body name="b1"><freejoint/>').replace(
      '<body name="b2" pos=".1 0 0">', '<body name="b2" pos=".1 0 0"><joint type="ball"/>')
  write_skn(tmp_path / "s.skn", [0, 0, 0, 1, 0, 0, 0, 1, 0], [], [0, 1, 2], _skn_bones())
  path = tmp_path / "model.xml"
  path.write_text(xml)
  m = numjoco.load_model(str(path))
  mjm = mujoco.MjModel.from_xml_path(str(path))
  mjd = mujoco.MjData(mjm)
  scn = mujoco.MjvScene(mjm, 100)
  sk = SkinModel(m)
  rng = np.random.default_rng(1)
  for _ in range(3):
    mjd.qpos[:] = rng.normal(size=mjm.nq)
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mujoco.mj_kinematics(mjm, mjd)
    mujoco.mjv_updateSkin(mjm, mjd, scn)
    d = _our_kinematics(m, mjd.qpos)
    vert, normal = sk.update(d.xpos, d.xquat)
    np.testing.assert_allclose(vert.ravel(), scn.skinvert, rtol=0, atol=1e-6)
    np.testing.assert_allclose(normal.ravel(), scn.skinnormal, rtol=0, atol=1e-6)


def test_attached_skins_compile_as_mujoco(tmp_path):
  """<attach> copies a child's skins from <asset> and <deformable>: names (an unnamed one's
  from its file) and bone bodies prefixed, those read from SKN files too; dm_control's rodent
  attached under a body: every skin_* field equal to 4.0's."""
  write_skn(tmp_path / "s.skn", [0, 0, 0, 1, 0, 0, 0, 1, 0], [], [0, 1, 2],
            [("b1", (0, 0, 0), (1, 0, 0, 0), [0, 1, 2], [1, 1, 1])])
  (tmp_path / "child.xml").write_text(
      '<mujoco><asset><skin file="s.skn"/></asset><deformable><skin name="g" file="s.skn"/>'
      '</deformable><worldbody><body name="b1"><geom size=".1"/></body></worldbody></mujoco>')
  rodent = _dm_path(*RODENT)
  for child, where in (("child.xml", '<attach model="c" prefix="p_"/>'),
                       ("child.xml", '<body name="h"><attach model="c" prefix="p_"/></body>'),
                       (rodent, '<body name="h" pos="0 0 .1"><attach model="c" prefix="r/"/>'
                                '</body>')):
    path = tmp_path / "parent.xml"
    path.write_text(f'<mujoco><asset><model name="c" file="{child}"/></asset>'
                    f'<worldbody>{where}</worldbody></mujoco>')
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")    # the rodent's size nconmax: kept from the parent
      ours = compile_model(str(path))
    mjm = mujoco.MjModel.from_xml_path(str(path))
    assert mjm.nskin >= 1
    assert_skins_equal(ours, mjm)
