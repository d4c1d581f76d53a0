"""MJCF flex (<flexcomp>, <deformable><flex>): compiled flex_* fields and the generated bodies,
joints and dofs equal MuJoCo 4.0's; malformed flex elements are errors naming the element.

`tests.models.load_flex_model` compiles them as `numjoco.load_model` does
(compile_model(..., flex=True), set_const and the flex edge constants at qpos0) without
refusing what engine/flex.py does not simulate yet (tests/test_flex.py covers that).

Exact for integers and booleans, rtol 1e-9 for floats (flex_stiffness and flex_bending with
an absolute floor of 1e-12 of their largest entry, see `_atol`).
"""
import os
import re
import shutil

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import MjcfError                                      # noqa: E402
from numjoco.engine.mjcf._flex import FIELDS, SIZES           # noqa: E402
from tests.models import load_flex_model, models_of        # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")

# MuJoCo's flex models that 4.0 loads as they are
MODELS = [
    "model/flex/flag.xml", "model/flex/trampoline.xml", "model/flex/floppy.xml",
    "model/flex/pancake.xml", "model/flex/jelly.xml", "model/flex/basket.xml",
    "model/flex/pulley.xml", "model/flex/plate.xml", "model/flex/pinch.xml",
    "test/user/testdata/shark_22_ascii_vol_fTetWild.xml",
    "test/user/testdata/shark_22_binary_vol_fTetWild.xml",
    "test/user/testdata/flex_line_obj.xml", "test/user/testdata/rigid_flex.xml",
    "test/engine/testdata/ray/flex.xml",
    "test/engine/testdata/sleep/flex_nocnstr.xml", "test/engine/testdata/sleep/flex_mocap.xml",
    "test/engine/testdata/sleep/flex_static.xml", "test/engine/testdata/sleep/flex_contact.xml",
] + [f"test/user/testdata/cube_{v}_{enc}_{kind}_gmshApp.xml" for v in ("22", "41")
     for enc in ("ascii", "binary") for kind in ("surf", "vol")] + [
    "test/user/testdata/cube_22_ascii_vol_gmshApp_missing_dim.xml"]

# models 4.0 rejects only for <contact internal="..."> (gone from its schema): compared with
# the attribute removed (a copy in a temporary folder), with the files each one reads
NO_INTERNAL = {
    "model/flex/sphere_radial.xml": ["model/flex/scene.xml"],
    "model/flex/sphere_full.xml": ["model/flex/scene.xml"],
    "model/flex/gripper.xml": ["model/flex/scene.xml", "model/flex/asset/cap.obj"],
    "model/flex/gripper_2d.xml": ["model/flex/scene.xml"],
    "model/flex/trilinear.xml": ["model/flex/scene.xml"],
    "model/flex/quadratic.xml": ["model/flex/scene.xml"],
    "test/testdata/hammock.xml": [],
    "test/engine/testdata/skingroup.xml": [],
}

# models 4.0 refuses: we refuse them too, naming the flexcomp (4.0's words)
REFUSED = {
    "model/flex/press.xml": "flex elasticity is no longer integrated implicitly",
    "model/flex/drape.xml": "passive flex contact requires an integrator",
    "model/flex/poncho.xml": "attribute 'equality': invalid value 'vert'",
    "test/user/testdata/malformed_flex_nofaces.xml": "Vertex and face data required",
    "test/engine/testdata/sleep/flex_edge.xml": "no flex vertices/nodes are pinned to it",
    "test/engine/testdata/sleep/flex_state.xml": "no flex vertices/nodes are pinned to it",
    **{f"test/user/testdata/malformed_cube_{k}.xml": "GMSH decoder: " + msg for k, msg in (
        ("22_ascii_missing_element", "Error reading Elements"),
        ("22_ascii_missing_node", "Error reading node tags"),
        ("22_ascii_missing_num_elements", "Invalid elements header"),
        ("22_ascii_missing_num_nodes", "Invalid node header"),
        ("41_ascii_mismatch_between_max_nodes_and_nodes_in_block",
         "Maximum number of nodes must be equal to number of nodes in a block"),
        ("41_ascii_missing_element", "Error reading Elements"),
        ("41_ascii_missing_element_header", "All elements must be in single block"),
        ("41_ascii_missing_node_header", "All nodes must be in single block"),
        ("41_ascii_missing_node_index", "Node tags must be sequential"))},
}

# MuJoCo's other flex models (of model/, test/), not compared, and why (data, not skipped
# tests)
NOT_COMPARED = {
    # interpolated flexes that do not fill their node box: 4.0 weighs node masses and cell
    # stiffness by each cell's content, which we have not derived (a load error here)
    "model/flex/gripper_trilinear.xml": "trilinear mesh; 4.0 refuses it (elasticity under "
                                        "implicitfast)",
    "model/flex/sphere_trilinear.xml": "trilinear ellipsoid (content-weighted nodes)",
    "model/flex/bunny.xml": "trilinear mesh (content-weighted nodes)",
    "model/flex/bunny_multicell.xml": "trilinear mesh with cellcount (content-weighted nodes)",
    "model/flex/bunny_quadratic.xml": "quadratic mesh (content-weighted nodes)",
    "model/flex/bunny_with_uv.xml": "trilinear mesh (content-weighted nodes), 460 kB mesh",
    "model/flex/bunny_shell.xml": "trilinear shell (elastic2d: interpolated bending); 4.0 "
                                  "refuses it (elasticity under implicitfast)",
    "model/flex/strain.xml": "trilinear with strain equalities (stiffness eigenmodes)",
    "model/flex/hollow_vs_solid.xml": "trilinear grids with strain equalities and a shell",
    "test/engine/testdata/sleep/hollow_vs_solid.xml": "as model/flex/hollow_vs_solid.xml",
    "model/flex/softbox.xml": "equal without `internal` (checked by hand), but its sponge.png "
                              "texture is 650 kB (over the 300 kB asset limit)",
    "model/flex/cloth_sdf.xml": "equal without `internal` (checked by hand); reads an SDF "
                                "plugin model kept out of these assets",
    "model/flex/bag.xml": "dof='trilinear', 390 kB",
    "model/flex/poncho_edgeequality.xml": "4.0 refuses it (elasticity under implicitfast); "
                                          "includes the 48 kB poncho mesh data",
    "model/hammock/hammock.xml": "includes a humanoid model kept out of these assets",
    "test/engine/testdata/hammock/hammock.xml": "equal without `internal` (checked by hand); "
                                                "includes humanoid_body.xml",
    "test/user/testdata/textured_torus_flex.xml": "equal without `internal` (checked by hand); "
                                                  "its carpet.png texture is 1 MB",
    "test/render/testdata/shapes.xml": "equal without `internal` (checked by hand); "
                                       "its texture is 1 MB",
    "test/testdata/flex.xml": "4.0 refuses it (elasticity under implicit)",
    "test/xml/testdata/many_dependencies.xml": "equal (checked by hand); reads files of "
                                               "several folders",
}

# generated-tree fields compared besides the flex ones
TREE = ("body_parentid", "body_rootid", "body_weldid", "body_jntnum", "body_jntadr",
        "body_dofnum", "body_dofadr", "body_pos", "body_quat", "body_ipos", "body_iquat",
        "body_mass", "body_subtreemass", "body_inertia", "body_invweight0", "body_simple",
        "jnt_type", "jnt_qposadr", "jnt_dofadr", "jnt_bodyid", "jnt_pos", "jnt_axis",
        "jnt_stiffness", "jnt_range", "dof_bodyid", "dof_jntid", "dof_parentid", "dof_Madr",
        "dof_invweight0", "dof_M0", "dof_damping", "dof_armature", "qpos0", "eq_type",
        "eq_obj1id", "eq_obj2id", "eq_objtype", "eq_active0", "eq_solref", "eq_solimp",
        "eq_data", "tree_sleep_policy")
COUNTS = ("nbody", "njnt", "nq", "nv", "neq")
NOT_EQUAL = set()


def _atol(k, b):
  """1e-12, or for the elasticity coefficients 1e-12 of the largest one: their sums of
  products cancel to ~1e-11 of the element's scale where 4.0 has (near) zero, and the
  rounding differs there (measured: 5e-10 on entries of 1e4)."""
  if k in ("flex_stiffness", "flex_bending") and b.size:
    return 1e-12 * max(1.0, float(np.max(np.abs(b))))
  return 1e-12


def mismatches(m, mj):
  """Every flex size and field, the generated tree's fields and the body and flex names of
  our Model `m` that differ from MjModel `mj` (dtype, shape or value)."""
  bad = []
  for k in COUNTS + SIZES:
    if int(getattr(m, k)) != int(getattr(mj, k)):
      bad.append(f"{k}: {getattr(m, k)} != {getattr(mj, k)}")
  for k in FIELDS + TREE:
    if k in NOT_EQUAL:
      continue
    a, b = np.asarray(getattr(m, k)), np.asarray(getattr(mj, k))
    if k.startswith("flex") and a.dtype != b.dtype:
      bad.append(f"{k}: dtype {a.dtype} != {b.dtype}")
    if a.size != b.size:
      bad.append(f"{k}: shape {a.shape} != {b.shape}")
      continue
    a = a.reshape(b.shape)
    if b.dtype.kind in "biu":
      if not np.array_equal(a, b):
        bad.append(f"{k}: {int(np.sum(a != b))} of {a.size} differ")
    elif not np.allclose(a, b, rtol=1e-9, atol=_atol(k, b)):
      bad.append(f"{k}: max error {np.max(np.abs(a - b)):.3g}")
  for obj, idx in ((mujoco.mjtObj.mjOBJ_BODY, 1), (mujoco.mjtObj.mjOBJ_FLEX, 9)):
    count = mj.nbody if idx == 1 else mj.nflex
    want = [mujoco.mj_id2name(mj, obj, i) or "" for i in range(count)]
    if list(m.names.get(idx, [])) != want:
      bad.append(f"names of {obj.name}")
  return bad


@pytest.mark.parametrize("path", MODELS)
def test_mujoco_flex_models_compile_as_40(path):
  """MuJoCo's flex models: every flex_* field, the vertex bodies and slide joints made by
  flexcomp, their dofs and the flex equalities equal 4.0's."""
  full = os.path.join(ROOT, path)
  assert mismatches(load_flex_model(full), mujoco.MjModel.from_xml_path(full)) == []


@pytest.mark.parametrize("path", sorted(NO_INTERNAL))
def test_flex_models_without_internal_compile_as_40(path, tmp_path):
  """MuJoCo's models with the contact attribute `internal` (removed from 4.0's schema),
  compared with it taken out."""
  for rel in [path] + NO_INTERNAL[path]:
    os.makedirs(os.path.dirname(tmp_path / rel), exist_ok=True)
    shutil.copy(os.path.join(ROOT, rel), tmp_path / rel)
  text = (tmp_path / path).read_text()
  (tmp_path / path).write_text(re.sub(r'\s+internal="[a-z]+"', "", text))
  full = str(tmp_path / path)
  assert mismatches(load_flex_model(full), mujoco.MjModel.from_xml_path(full)) == []


@pytest.mark.parametrize("path", sorted(REFUSED))
def test_models_40_refuses_are_errors(path):
  """The flex models 4.0 refuses are errors here too, naming the flex element."""
  full = os.path.join(ROOT, path)
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_path(full)
  with pytest.raises(MjcfError, match=re.escape(REFUSED[path])) as e:
    load_flex_model(full)
  assert ": <" in str(e.value)   # file:line: <element ...>: message


def test_every_flex_model_is_accounted_for():
  """Each of MuJoCo's flex models is compared, refused as 4.0 refuses it, or listed with the
  reason it is not compared."""
  lists = [MODELS, list(NO_INTERNAL), list(REFUSED), list(NOT_COMPARED)]
  names = [p for lst in lists for p in lst]
  assert len(names) == len(set(names))
  assert len(names) == 70   # every model/ and test/ file with <flexcomp> or <flex>


# ------------------------------------------------------------------------- synthetic snippets

def _wrap(body, world="", option="", asset=""):
  return (f"<mujoco>{option}<asset>{asset}</asset><worldbody>{world}"
          f"<body name='parent' pos='.1 .2 .3' euler='10 20 30'>{body}</body>"
          "</worldbody></mujoco>")


SNIPPETS = {
    "grid1d": _wrap("<flexcomp name='f' type='grid' dim='1' count='5 1 1' spacing='.1 .1 .1' "
                    "radius='.01'><edge stiffness='10' damping='.5'/></flexcomp>"),
    "grid2d": _wrap("<flexcomp name='f' type='grid' dim='2' count='4 3 1' spacing='.1 .12 .1' "
                    "mass='2' pos='.1 0 .2' euler='0 30 10'><edge equality='true'/></flexcomp>"),
    "grid3d": _wrap("<flexcomp name='f' type='grid' dim='3' count='3 3 4' spacing='.1 .1 .1'>"
                    "<elasticity young='1e4' poisson='.3' damping='.01'/>"
                    "<contact activelayers='2' selfcollide='bvh'/></flexcomp>"),
    "box2d": _wrap("<flexcomp name='f' type='box' dim='2' count='4 3 5' spacing='.1 .1 .1' "
                   "radius='.01'><elasticity young='1e5' poisson='.25' thickness='.01' "
                   "elastic2d='both'/></flexcomp>"),
    "box3d": _wrap("<flexcomp name='f' type='box' dim='3' count='4 4 3' spacing='.1 .1 .1'>"
                   "<elasticity young='1e4' poisson='.2'/></flexcomp>"),
    "cylinder2d": _wrap("<flexcomp name='f' type='cylinder' dim='2' count='6 5 4' "
                        "spacing='.1 .1 .1'><elasticity young='1e5' thickness='.01' "
                        "elastic2d='stretch'/></flexcomp>"),
    "cylinder_bend": _wrap("<flexcomp name='f' type='cylinder' dim='2' count='7 6 4' "
                           "spacing='.1 .12 .2' radius='.001'><edge equality='true'/>"
                           "<elasticity young='6e6' poisson='.3' thickness='8e-3' "
                           "elastic2d='bend'/></flexcomp>"),
    "cylinder3d": _wrap("<flexcomp name='f' type='cylinder' dim='3' count='5 5 3' "
                        "spacing='.1 .1 .1'/>"),
    "ellipsoid": _wrap("<flexcomp name='f' type='ellipsoid' dim='3' count='5 6 4' "
                       "spacing='.1 .12 .14' dof='radial'/>"),
    "square": _wrap("<flexcomp name='f' type='square' count='5 4 1' spacing='.1 .1 .1' "
                    "material='m'><pin id='0 3'/></flexcomp>",
                    asset="<material name='m' rgba='1 0 0 1'/>"),
    "disc": _wrap("<flexcomp name='f' type='disc' count='7 7 1' spacing='.1 .1 .1'>"
                  "<elasticity young='1e5' thickness='.01' elastic2d='bend'/></flexcomp>"),
    "circle": _wrap("<flexcomp name='f' type='circle' dim='1' count='12 1 1' spacing='.1 .1 .1'"
                    " rgba='0 1 0 1' group='2'><edge equality='true' solref='.01 1'/>"
                    "</flexcomp>"),
    "direct": _wrap("<flexcomp name='f' type='direct' dim='2' point='0 0 0 1 0 0 0 1 0 1 1 0 "
                    "5 5 5' element='0 1 2 1 3 2' scale='2 1 1'><pin id='0'/></flexcomp>"),
    "pins": _wrap("<flexcomp name='f' type='grid' dim='2' count='5 5 1' spacing='.1 .1 .1'>"
                  "<pin range='0 2'/><pin grid='4 4'/><pin gridrange='1 1 2 2'/></flexcomp>"),
    "pins3d": _wrap("<flexcomp name='f' type='grid' dim='3' count='3 3 3' spacing='.1 .1 .1'>"
                    "<pin gridrange='0 0 0 0 2 2'/></flexcomp>"),
    "dof2d": _wrap("<flexcomp name='f' type='grid' dim='2' count='3 3 1' spacing='.1 .1 .1' "
                   "dof='2d'/>"),
    "rigid": _wrap("<flexcomp name='f' type='grid' dim='2' count='3 3 1' spacing='.1 .1 .1' "
                   "rigid='true'/>"),
    "contact": _wrap("<flexcomp name='f' type='grid' dim='2' count='3 3 1' spacing='.1 .1 .1' "
                     "radius='.02'><contact contype='2' conaffinity='3' condim='4' "
                     "priority='1' friction='.5 .1' solmix='.3' solref='.01 2' solimp='.8' "
                     "margin='.01' gap='.005' selfcollide='narrow'/></flexcomp>"),
    "defaults": ("<mujoco><default><joint stiffness='.3' armature='.01' range='-1 1'/>"
                 "</default><worldbody>"
                 "<flexcomp name='f' type='grid' dim='2' count='3 2 1' spacing='.1 .1 .1'/>"
                 "<body name='b'><joint/><geom size='.1'/></body></worldbody></mujoco>"),
    "flex_on_bodies": (
        "<mujoco><worldbody>"
        "<body name='a' pos='0 0 1'><freejoint/><geom size='.1'/></body>"
        "<body name='b' pos='1 0 1' euler='0 0 90'><freejoint/><geom size='.1'/></body>"
        "<body name='c' pos='0 1 1'><joint type='slide'/><geom size='.1'/></body>"
        "</worldbody><deformable>"
        "<flex name='tri' dim='2' body='a b c' vertex='0 0 .1 .1 0 0 0 .1 0' element='0 1 2' "
        "texcoord='0 0 1 0 0 1' radius='.02'><edge damping='.1'/></flex>"
        "<flex name='line' dim='1' body='a b c' element='0 1 1 2'/>"
        "<flex name='stuck' dim='2' body='world' vertex='0 0 0 1 0 0 0 1 0 1 1 0' "
        "element='0 1 2 1 3 2'/></deformable></mujoco>"),
    "interpolated": (
        "<mujoco><worldbody><flexcomp type='grid' count='5 4 4' spacing='.07 .07 .07' "
        "pos='0 0 1' dim='3' cellcount='2 2 2' radius='.001' mass='5' name='a' "
        "dof='trilinear'><elasticity young='1e4' poisson='.2'/><contact selfcollide='none'/>"
        "</flexcomp><body name='p' euler='0 0 30'><flexcomp type='grid' count='4 3 3' "
        "spacing='.07 .07 .07' pos='1 0 1' dim='3' radius='.001' mass='5' name='b' "
        "dof='quadratic'><elasticity young='1e4' poisson='.2'/><contact selfcollide='none'/>"
        "</flexcomp></body><flexcomp type='box' count='4 4 4' spacing='.07 .07 .07' "
        "pos='2 0 1' dim='3' radius='.001' mass='5' name='c' dof='trilinear'>"
        "<contact selfcollide='none'/><edge damping='1'/></flexcomp></worldbody></mujoco>"),
    "equality_flex": (
        "<mujoco><default><equality solimp='.8 .9'/></default><worldbody><body name='b'>"
        "<flexcomp name='a' type='grid' count='3 3 1' dim='2'/><flexcomp name='c' "
        "type='grid' count='3 1 1' dim='1'><edge equality='true' solref='.05 1'/></flexcomp>"
        "</body></worldbody><equality><connect body1='a_0' anchor='0 0 0'/>"
        "<flex flex='a' solref='.01 1' name='fe'/></equality></mujoco>"),
    "flex_nodes": (
        "<mujoco><worldbody>" + "".join(
            f"<body name='n{i}{j}{k}' pos='{i} {j} {k}'><joint type='slide' axis='1 0 0'/>"
            "<joint type='slide' axis='0 1 0'/><joint type='slide' axis='0 0 1'/>"
            "<geom size='.01' contype='0' conaffinity='0'/></body>"
            for i in (0, 1) for j in (0, 1) for k in (0, 1)) +
        "</worldbody><deformable><flex name='f' dim='3' dof='trilinear' "
        "body='world world world world world' vertex='0 0 0 1 0 0 0 1 0 0 0 1 1 1 1' "
        "element='0 1 2 3 1 2 3 4' node='n000 n001 n010 n011 n100 n101 n110 n111'>"
        "<contact selfcollide='none'/><edge damping='1'/></flex></deformable></mujoco>"),
    "fusestatic": (
        "<mujoco><compiler fusestatic='true'/><worldbody><body name='a' pos='0 0 1'>"
        "<geom size='.1'/><body name='s' pos='.1 0 0' euler='0 0 30'><geom size='.05'/>"
        "<flexcomp name='f' type='grid' dim='2' count='3 3 1' spacing='.1 .1 .1'>"
        "<pin id='0 2'/><edge equality='true'/></flexcomp></body></body><body name='t' "
        "pos='1 0 0'><geom size='.1'/></body></worldbody><deformable><flex name='g' dim='1' "
        "body='t a' vertex='0 0 0 0 0 0' element='0 1'/></deformable></mujoco>"),
    "in_frame": (
        "<mujoco><worldbody><body name='a' pos='0 0 1'><joint/><geom size='.1'/>"
        "<frame pos='.5 0 0' euler='0 0 90'><frame pos='0 .1 0' euler='20 0 0'>"
        "<flexcomp name='f' type='grid' dim='2' count='3 2 1' spacing='.1 .1 .1' "
        "pos='0 0 .1'><pin id='0'/><edge equality='true'/></flexcomp></frame></frame>"
        "</body></worldbody></mujoco>"),
    "replicate": (
        "<mujoco><worldbody><replicate count='2' offset='.5 0 0' sep='-'><replicate count='2' "
        "offset='0 .5 0'><body name='b' pos='0 0 1'><flexcomp name='f' type='grid' dim='1' "
        "count='3 1 1' spacing='.1 .1 .1'><pin id='0'/><edge equality='true'/></flexcomp>"
        "</body></replicate></replicate><replicate count='2' offset='0 0 .5'><body name='c'>"
        "<flexcomp name='g' type='grid' count='2 2 2' dim='3' spacing='.1 .1 .1' "
        "dof='trilinear'><contact selfcollide='none'/><edge damping='1'/></flexcomp></body>"
        "</replicate></worldbody></mujoco>"),
    "pinned_on_jointed_body": (   # edge Jacobians and invweights through a hinge
        "<mujoco><worldbody><body name='b' pos='0 0 1'><joint axis='1 1 0'/><geom size='.1'/>"
        "<flexcomp name='f' type='grid' count='3 3 1' dim='2' spacing='.1 .1 .1'>"
        "<pin id='0 1'/><edge equality='true'/><elasticity young='1e3' thickness='.01' "
        "elastic2d='bend'/></flexcomp></body></worldbody></mujoco>"),
    "two_flexes": (
        "<mujoco><worldbody><flexcomp name='a' type='grid' dim='1' count='3 1 1' "
        "spacing='.1 .1 .1'><edge damping='1'/></flexcomp><body name='x'><flexcomp name='b' "
        "type='grid' dim='2' count='3 3 1' spacing='.1 .1 .1'><edge equality='true'/>"
        "</flexcomp></body></worldbody><deformable><flex name='c' dim='1' body='world world' "
        "vertex='0 0 0 1 0 0' element='0 1'/></deformable>"
        "<equality><connect body1='a_0' anchor='0 0 0'/></equality></mujoco>"),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_flex_snippets_compile_as_40(name):
  """Each flexcomp type and dim, pins, the radial and 2d dofs, rigid flexes, elasticity,
  edge stiffness and equality, contact settings, joint defaults on the generated joints and
  <deformable><flex> on bodies: every field equal to 4.0's."""
  xml = SNIPPETS[name]
  assert mismatches(load_flex_model(xml), mujoco.MjModel.from_xml_string(xml)) == []


def test_flexcomp_mesh_types_compile_as_40(tmp_path):
  """flexcomp type='mesh' in 1, 2 and 3 dimensions (an OBJ cube, tetrahedra from `origin`)."""
  shutil.copy(os.path.join(ROOT, "model/flex/asset/cap.obj"), tmp_path / "cap.obj")
  shutil.copy(os.path.join(ROOT, "test/user/testdata/line.obj"), tmp_path / "line.obj")
  for dim, file, extra in ((2, "cap", ""), (3, "cap", " origin='0 0 .01'"), (1, "line", "")):
    xml = (f"<mujoco><worldbody><body name='b'><flexcomp name='m' type='mesh' file='{file}.obj'"
           f" dim='{dim}' scale='1 2 3' pos='0 0 1' radius='.001'{extra}><edge damping='1'/>"
           "</flexcomp></body></worldbody></mujoco>")
    path = tmp_path / f"mesh{dim}.xml"
    path.write_text(xml)
    assert mismatches(load_flex_model(str(path)), mujoco.MjModel.from_xml_path(str(path))) == []


# ------------------------------------------------------------------------------------ errors

ERRORS = [
    ("<mujoco><deformable>\n<flex name='f' dim='2' element='0 1 2'/></deformable></mujoco>",
     ":2: <flex name=\"f\">: vertbody and nodebody are both empty"),
    ("<mujoco><deformable>\n<flex name='f' dim='2' body='world' vertex='0 0 0 1 0 0 0 1 0' "
     "element='0 1 2 1'/></deformable></mujoco>",
     ":2: <flex name=\"f\">: elem size must be multiple of (dim+1)"),
    ("<mujoco><deformable>\n<flex name='f' dim='2' body='world' vertex='0 0 0 1 0 0 0 1 0' "
     "element='0 1 3'/></deformable></mujoco>",
     ":2: <flex name=\"f\">: elem vertex id out of range"),
    ("<mujoco><deformable>\n<flex name='f' dim='1' body='nobody world' vertex='0 0 0 1 0 0' "
     "element='0 1'/></deformable></mujoco>",
     ":2: <flex name=\"f\">: unknown body 'nobody' in flex"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='grid' count='3 3 1'>"
     "<pin id='9'/></flexcomp></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: pinid out of range"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='grid' count='3 3 1'>"
     "<pin grid='1'/></flexcomp></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: Pin grid number must be multiple of dim"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='blob'/></body></worldbody>"
     "</mujoco>", ":2: <flexcomp name=\"f\">: attribute 'type': invalid value 'blob'"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='mesh' file='none.obj'/>"
     "</body></worldbody></mujoco>", ":2: <flexcomp name=\"f\">: mesh file 'none.obj' not found"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='gmsh' file='none.msh'/>"
     "</body></worldbody></mujoco>", ":2: <flexcomp name=\"f\">: gmsh file 'none.msh' not found"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='direct' dim='2' "
     "point='0 0 0 1 0 0 0 1 0' element='0 1'/></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: Element size must be a multiple of dim+1"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='direct' dim='2' "
     "element='0 1 2'/></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: Point and element required"),
    ("<mujoco><default><joint damping='1'/></default><worldbody><body name='b'>\n"
     "<flexcomp name='f' type='grid' count='3 3 1'/></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: flex vertex/node body 'f_0' cannot have joint damping"),
    ("<mujoco><worldbody><body name='b'><joint/><geom size='.1'/>\n"
     "<flexcomp name='f' type='grid' count='3 3 1'/></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: body 'b' has joints but no flex vertices/nodes are pinned"),
    ("<mujoco><worldbody><body name='b'><flexcomp name='f' type='grid' count='3 3 1'/>"
     "</body></worldbody><equality>\n<flex flex='g'/></equality></mujoco>",
     ":2: <flex>: unknown flex 'g' in equality"),
    ("<mujoco><worldbody><body name='b'><flexcomp name='f' type='grid' count='3 3 1'/>"
     "</body></worldbody><equality>\n<flexstrain flex='f'/></equality></mujoco>",
     ":2: <flexstrain>: flex strain equality requires an interpolated flex 'f'"),
    ("<mujoco><worldbody><body name='b'><replicate count='2' offset='1 0 0'>\n"
     "<flexcomp name='f' type='grid' count='3 3 1'/></replicate></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: Parent body must have name"),
    ("<mujoco><worldbody><body>\n<flexcomp name='f' type='grid' count='3 3 1'/></body>"
     "</worldbody></mujoco>", ":2: <flexcomp name=\"f\">: Parent body must have name"),
    ("<mujoco><worldbody><body name='b'><flexcomp name='f' type='grid' count='3 3 1'>\n"
     "<contact internal='true'/></flexcomp></body></worldbody></mujoco>",
     ":2: <contact>: unknown attribute 'internal'"),
    ("<mujoco><worldbody><body name='b'>\n<flexcomp name='f' type='grid' count='3 3 1' "
     "spacing='.001 .1 .1'/></body></worldbody></mujoco>",
     ":2: <flexcomp name=\"f\">: Spacing must be larger than geometry size"),
]


@pytest.mark.parametrize("xml,msg", ERRORS)
def test_bad_flex_is_an_error_naming_the_element(xml, msg):
  """Missing vertices or bodies, wrong element arity, bad ids, unknown types, missing files:
  an MjcfError naming file, line and element (4.0 refuses each of them too)."""
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=re.escape(msg)):
    load_flex_model(xml)


def test_load_model_names_what_it_cannot_simulate():
  """numjoco.load_model compiles flex models: flag.xml (collisions, edge springs) and jelly.xml
  (3D elasticity) load with 4.0's fields; a 1D flex with rod elasticity stops at the flexcomp
  (tests/test_flex.py test_refused has the other refusals); a flex equality naming no flex is
  an error naming the element (4.0 refuses it too)."""
  import numjoco
  for name in ("flag", "jelly"):
    path = os.path.join(ROOT, f"model/flex/{name}.xml")
    assert mismatches(*models_of(path)) == []
  rod = ('<mujoco><worldbody>\n<flexcomp name="rod" type="grid" dim="1" count="5 1 1" '
         'spacing=".1 .1 .1" radius=".01"><elasticity young="1e4"/></flexcomp></worldbody>'
         '</mujoco>')
  mujoco.MjModel.from_xml_string(rod)   # 4.0 simulates it: the refusal is ours
  with pytest.raises(MjcfError, match=r":2: <flexcomp[^>]*>: 1D flex \(rod\) elasticity"):
    numjoco.load_model(rod)
  xml = ("<mujoco><worldbody><body name='b'/></worldbody><equality>\n<flex flex='f'/>"
         "</equality></mujoco>")
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=":2: <flex>: unknown flex 'f' in equality"):
    numjoco.load_model(xml)
