"""MJCF reading: an MJCF (or URDF) file or string -> a checked tree of `Node`s that remember
their source file and line (engine/mjcf/_node.py), so later stages report errors as
``file.xml:LINE: <tag name="...">: message``. Includes are spliced in, a URDF robot converted,
<attach> and <replicate> expanded, and every element and attribute checked against the subset
of the MJCF schema this engine understands (engine/mjcf/_schema.py).
"""
from numjoco.engine.mjcf import _attach, _replicate, urdf
from numjoco.engine.mjcf._node import MjcfError, MjcfWarning, Node, read  # noqa: F401
from numjoco.engine.mjcf._schema import check


def parse(source, assets=None, flex=False):
  """Parse an MJCF file path or XML string (bytes/str) into a checked `Node` tree (flex
  elements accepted only with `flex`, see `_check`)."""
  root = read(source, assets)
  if root.tag == "robot":
    root = urdf.urdf_to_mjcf(root)
  if root.tag != "mujoco":
    raise root.error("root element must be <mujoco> (MJCF) or <robot> (URDF)")
  _attach.expand(root, assets)
  _replicate.expand(root)
  check(root, flex)
  return root
