"""URDF reading: a `<robot>` tree -> the MJCF `Node` tree MuJoCo's URDF importer would build.

Follows MuJoCo's mjXURDF (xml_urdf.cc) rule by rule so the compiled model is the same:
links become bodies (roots attach to the world without a joint), each URDF joint places its
child body at the joint origin and adds a hinge/slide/free/ball joint (planar: two slides and a
hinge), fixed joints add none, inertials keep their principal frame, `<collision>` geoms collide
and `<visual>` geoms are drawn only (dropped unless `discardvisual` is false). The compiler
defaults are MuJoCo's for URDF: `<mimic>` is a joint equality, radians, `fusestatic` and `discardvisual` on; a `<mujoco>`
child with `<compiler>`, `<option>` and `<size>` is honoured as MuJoCo does.

Every generated element keeps the URDF file and line it came from, so compile errors point at
the URDF source.
"""
import os

from numjoco.engine import rotation
from numjoco.engine.mjcf import _inertia
from numjoco.engine.mjcf._node import MjcfError, Node, floats

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar",
                "spherical")


def _num(x):
  return repr(float(x))


def _vec(vals):
  return " ".join(_num(v) for v in vals)


def _child(node, tag, required=False):
  for c in node.children:
    if c.tag == tag:
      return c
  if required:
    raise node.error(f"URDF element <{node.tag}> needs a <{tag}> child")
  return None


def _attr(node, key, n, default=None, required=False):
  vals = floats(node, key, n)
  if vals is None:
    if required:
      raise node.error(f"missing attribute '{key}'")
    return default
  return vals


def _name(node):
  name = node.get("name")
  if not name:
    raise node.error("missing attribute 'name'")
  return name


def _origin(node):
  """(pos, quat) of a URDF element's <origin> (rpy is MuJoCo's extrinsic 'XYZ' euler)."""
  pos, quat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
  o = _child(node, "origin")
  if o is not None:
    pos = _attr(o, "xyz", 3, pos)
    rpy = _attr(o, "rpy", 3)
    if rpy is not None:
      quat = rotation.orientation("euler", rpy, False, "XYZ")
  return pos, quat


class _Builder:
  """Builds the MJCF Node tree from a URDF Node tree (see module docstring)."""

  def __init__(self, robot):
    self.robot = robot
    self.root = self._node("mujoco", robot, {"model": robot.get("name", "")} if
                           robot.get("name") else {})
    self.materials = {}
    self.meshes = {}   # stem -> [(scale, mesh name)]
    self.geom_names = set()
    self.asset = None
    self.equality = None   # <equality> for URDF <mimic> joints, made on first use

  def _node(self, tag, src, attrib=None, parent=None):
    n = Node(tag, attrib or {}, src.file, src.line, parent)
    if parent is not None:
      parent.children.append(n)
    return n

  def build(self):
    robot = self.robot
    compiler = {"fusestatic": "true", "discardvisual": "true"}
    sections = []
    mj = _child(robot, "mujoco")
    if mj is not None:
      for c in mj.children:
        if c.tag == "compiler":
          compiler.update(c.attrib)
        elif c.tag in ("option", "size"):
          sections.append(c)
    compiler["angle"] = "radian"   # MuJoCo forces radians for URDF
    comp = self._node("compiler", mj if mj is not None else robot, compiler, self.root)
    self.discardvisual = compiler["discardvisual"] == "true"
    for c in _children_of(_child(mj, "compiler") if mj is not None else None):
      c.parent = comp
      comp.children.append(c)
    for s in sections:
      s.parent = self.root
      self.root.children.append(s)
    self.asset = self._node("asset", robot, None, self.root)
    world = self._node("worldbody", robot, None, self.root)
    self._materials(robot)

    links, parent, children, link_nodes = [], {}, {}, {}
    for c in robot.children:
      if c.tag == "link":
        name = _name(c)
        if name in link_nodes:
          raise c.error(f"repeated URDF link name '{name}'")
        links.append(name)
        link_nodes[name] = c
        parent[name] = None
        children[name] = []
    joints = [c for c in robot.children if c.tag == "joint"]
    for j in joints:
      p = _child(j, "parent", True).get("link")
      ch = _child(j, "child", True).get("link")
      if p not in link_nodes or ch not in link_nodes:
        raise j.error("URDF joint parent or child missing")
      if parent[ch] is not None:
        raise j.error(f"URDF body has multiple parents: {ch}")
      parent[ch] = p
      children[p].append(ch)
    # detect cycles (a link reachable from itself never reaches a root)
    for name in links:
      seen, cur = set(), name
      while cur is not None:
        if cur in seen:
          raise link_nodes[name].error(f"URDF joints form a cycle through link '{name}'")
        seen.add(cur)
        cur = parent[cur]

    self.bodies = {}

    def add(name, mj_parent):
      if name != "world":
        b = self._node("body", link_nodes[name], {"name": name}, mj_parent)
        self.bodies[name] = b
      else:
        b = mj_parent
      for ch in children[name]:
        add(ch, b)

    for name in links:
      if parent[name] is None:
        add(name, world)
    for name in links:
      if name in self.bodies:
        self._link(link_nodes[name], self.bodies[name])
    for j in joints:
      self._joint(j)
    if not self.asset.children:
      self.root.children.remove(self.asset)
    return self.root

  def _materials(self, node):
    if node.tag == "material" and node.get("name") and node.get("name") not in self.materials:
      color = _child(node, "color")
      if color is not None:
        self.materials[node.get("name")] = _attr(color, "rgba", 4, required=True)
    for c in node.children:
      self._materials(c)

  def _link(self, link, body):
    inertial = _child(link, "inertial")
    if inertial is not None:
      pos, quat = _origin(inertial)
      mass = _attr(_child(inertial, "mass", True), "value", 1, required=True)[0]
      inode = _child(inertial, "inertia", True)
      full = [_attr(inode, k, 1, required=True)[0]
              for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")]
      attrib = {"pos": _vec(pos), "mass": _num(mass)}
      if any(v != 0 for v in full):
        res = _inertia.full_inertia(full)
        if res is None:
          raise inode.error("URDF inertia is not positive definite")
        lquat, diag = res
        attrib["quat"] = _vec(rotation.mulquat(quat, lquat))
        attrib["diaginertia"] = _vec(diag)
      else:
        attrib["quat"] = _vec(quat)
        attrib["diaginertia"] = "0 0 0"
      self._node("inertial", inertial, attrib, body)
    rgba = None
    for c in link.children:
      if c.tag == "visual":
        mat = _child(c, "material")
        if mat is not None:
          color = _child(mat, "color")
          if color is not None:
            rgba = _attr(color, "rgba", 4, required=True)
          elif mat.get("name") in self.materials:
            rgba = self.materials[mat.get("name")]
        if not self.discardvisual:
          g = self._geom(c, body, False)
          if rgba is not None:
            g.attrib["rgba"] = _vec(rgba)
      elif c.tag == "collision":
        g = self._geom(c, body, True)
        if rgba is not None:
          g.attrib["rgba"] = _vec(rgba)

  def _geom(self, node, body, collision):
    geometry = _child(node, "geometry", True)
    attrib = {}
    name = node.get("name", "")
    if name and name not in self.geom_names:
      attrib["name"] = name
      self.geom_names.add(name)
    if collision:
      attrib.update(contype="1", conaffinity="1")
    else:
      attrib.update(contype="0", conaffinity="0", group="1", density="0")
    shape = geometry.children[0] if geometry.children else None
    if shape is None:
      raise geometry.error("visual geometry specification not found")
    if shape.tag == "box":
      attrib.update(type="box", size=_vec(v / 2 for v in _attr(shape, "size", 3,
                                                                   required=True)))
    elif shape.tag in ("cylinder", "capsule"):
      r = _attr(shape, "radius", 1, required=True)[0]
      length = _attr(shape, "length", 1, required=True)[0]
      attrib.update(type=shape.tag, size=_vec([r, length / 2]))
    elif shape.tag == "sphere":
      attrib.update(type="sphere", size=_num(_attr(shape, "radius", 1, required=True)[0]))
    elif shape.tag == "mesh":
      attrib.update(type="mesh", mesh=self._mesh(shape))
    else:
      raise shape.error(f"unknown URDF geometry <{shape.tag}>")
    pos, quat = _origin(node)
    attrib.update(pos=_vec(pos), quat=_vec(quat))
    return self._node("geom", node, attrib, body)

  def _mesh(self, shape):
    file = shape.get("filename")
    if not file:
      raise shape.error("missing attribute 'filename'")
    scale = _attr(shape, "scale", 3, [1.0, 1.0, 1.0])
    stem = os.path.splitext(os.path.basename(file))[0]
    known = self.meshes.setdefault(stem, [])
    for s, name in known:
      if s == scale:
        return name
    name = stem if not known else stem + str(len(known))
    known.append((scale, name))
    self._node("mesh", shape, {"name": name, "file": file, "scale": _vec(scale)}, self.asset)
    return name

  def _joint(self, j):
    """Place the child body at the joint origin and add its joint(s); <mimic> becomes a joint
    equality (joint1 = this joint, polycoef = offset, multiplier), as MuJoCo 4 imports it."""
    kind = j.get("type")
    if kind not in _JOINT_TYPES:
      raise j.error(f"invalid joint type '{kind}' in URDF joint definition")
    name = _name(j)
    body = self.bodies.get(_child(j, "child", True).get("link"))
    if body is None:
      return   # a joint into the link named 'world'
    pos, quat = _origin(j)
    body.attrib["pos"], body.attrib["quat"] = _vec(pos), _vec(quat)
    axis_node = _child(j, "axis")
    axis = _attr(axis_node, "xyz", 3, required=True) if axis_node is not None else [1.0, 0, 0]
    made = []
    if kind in ("revolute", "continuous", "prismatic", "spherical"):
      jt = {"revolute": "hinge", "continuous": "hinge", "prismatic": "slide",
            "spherical": "ball"}[kind]
      made.append({"name": name, "type": jt, "pos": "0 0 0", "axis": _vec(axis)})
    elif kind == "fixed":
      return
    elif kind == "floating":
      made.append({"name": name, "type": "free"})
    else:   # planar: slides along the frame's x and y, hinge about the axis
      mat = rotation.quat2mat(rotation.z2quat(axis))
      made.append({"name": name + "_TX", "type": "slide", "pos": "0 0 0",
                   "axis": _vec([mat[0], mat[3], mat[6]])})
      made.append({"name": name + "_TY", "type": "slide", "pos": "0 0 0",
                   "axis": _vec([mat[1], mat[4], mat[7]])})
      made.append({"name": name + "_RZ", "type": "hinge", "pos": "0 0 0", "axis": _vec(axis)})
    dyn = _child(j, "dynamics")
    if dyn is not None:
      for a in made:
        damping = _attr(dyn, "damping", 1)
        friction = _attr(dyn, "friction", 1)
        if damping is not None:
          a["damping"] = _num(damping[0])
        if friction is not None:
          a["frictionloss"] = _num(friction[0])
    lim = _child(j, "limit")
    if lim is not None:
      a = made[0]
      lower, upper = _attr(lim, "lower", 1), _attr(lim, "upper", 1)
      rng = [lower[0] if lower else 0.0, upper[0] if upper else 0.0]
      a["range"] = _vec(rng)
      if (lower is None) != (upper is None) or rng[0] > rng[1]:
        a["limited"] = "false"
      effort = abs(_attr(lim, "effort", 1, [0.0])[0])
      if effort > 0:
        a["actuatorfrcrange"] = _vec([-effort, effort])
    for a in made:
      self._node("joint", j, a, body)
    mimic = _child(j, "mimic")
    if mimic is not None:
      target = mimic.get("joint")
      if not target:
        raise mimic.error("missing attribute 'joint'")
      offset = _attr(mimic, "offset", 1, [0.0])[0]
      mult = _attr(mimic, "multiplier", 1, [1.0])[0]
      if self.equality is None:
        self.equality = self._node("equality", self.robot, None, self.root)
      self._node("joint", mimic, {"joint1": made[0]["name"], "joint2": target,
                                  "polycoef": _vec([offset, mult, 0, 0, 0])}, self.equality)


def _children_of(node):
  return list(node.children) if node is not None else []


def urdf_to_mjcf(robot):
  """The MJCF `Node` tree MuJoCo's URDF importer builds for a `<robot>` `Node` tree."""
  if robot.tag != "robot":
    raise robot.error("root element of a URDF file must be <robot>")
  return _Builder(robot).build()


__all__ = ["urdf_to_mjcf", "MjcfError"]
