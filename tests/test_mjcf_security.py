"""What an MJCF file can make the compiler read (issue #34 point 5): its own asset files as
MuJoCo finds them and nothing more. No entity, DTD or XInclude reaches a file or the network,
and a huge or absurd asset file is refused before it is read."""
import os
import socket
import struct
import zlib

import mujoco
import pytest

from numjoco.engine.mjcf import MjcfError, compile_model


def _tetra_stl():
  tris = [((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 0), (0, 1, 0), (0, 0, 1)),
          ((0, 0, 0), (0, 0, 1), (1, 0, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
  out = b"\0" * 80 + struct.pack("<I", len(tris))
  for tri in tris:
    out += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *v) for v in tri) + b"\0\0"
  return out


def _mesh_model(file, meshdir=None):
  compiler = f'<compiler meshdir="{meshdir}"/>' if meshdir else ""
  return (f'<mujoco>{compiler}\n<asset>\n<mesh name="m" file="{file}"/>\n</asset>\n'
          '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>')


@pytest.fixture
def tree(tmp_path):
  """tmp/a/model.xml's neighbours: a/m.stl, a/b/ (a folder), outside/m.stl, a/zero.stl (a
  link to /dev/zero)."""
  (tmp_path / "a" / "b").mkdir(parents=True)
  (tmp_path / "outside").mkdir()
  (tmp_path / "a" / "m.stl").write_bytes(_tetra_stl())
  (tmp_path / "outside" / "m.stl").write_bytes(_tetra_stl())
  os.symlink("/dev/zero", tmp_path / "a" / "zero.stl")
  return tmp_path


def _outcome_ours(path):
  try:
    compile_model(str(path))
    return "loads"
  except MjcfError as e:
    assert str(e).startswith("model.xml:3: <mesh name=\"m\">: "), str(e)
    return "refused"


def _outcome_mujoco(path):
  try:
    mujoco.MjModel.from_xml_path(str(path))
    return "loads"
  except ValueError:
    return "refused"


@pytest.mark.parametrize("file, meshdir", [
    ("m.stl", None), ("./m.stl", None), ("b/../m.stl", None),
    ("../outside/m.stl", None), ("m.stl", "../outside"),      # MuJoCo follows '..'
    ("{tmp}/outside/m.stl", None), ("m.stl", "{tmp}/outside"),  # and absolute paths
    ("../outside/missing.stl", None), ("b", None),            # a folder
    ("zero.stl", None), ("/dev/zero", None),                  # a device
    ("http://127.0.0.1:9/m.stl", None), ("file://{tmp}/outside/m.stl", None),
])
def test_asset_paths_resolve_as_mujocos(tree, file, meshdir):
  """MuJoCo has no '..' policy: it reads a mesh through '..' or an absolute path, and no URL.
  The compiler reads exactly the files MuJoCo reads, and refuses the rest with the element."""
  fmt = {"tmp": str(tree)}
  model = tree / "a" / "model.xml"
  model.write_text(_mesh_model(file.format(**fmt), meshdir and meshdir.format(**fmt)))
  assert _outcome_ours(model) == _outcome_mujoco(model)


def test_a_fifo_is_refused_not_waited_on(tree):
  """A FIFO named as a mesh is refused unread (MuJoCo's reader blocks on it for ever)."""
  os.mkfifo(tree / "a" / "fifo.stl")
  model = tree / "a" / "model.xml"
  model.write_text(_mesh_model("fifo.stl"))
  with pytest.raises(MjcfError, match="mesh file 'fifo.stl' is not a regular file"):
    compile_model(str(model))


def _load_both(xml):
  """(our names or our error, MuJoCo's names or its error) for an XML string."""
  try:
    ours = repr(compile_model(xml)[2])
  except MjcfError as e:
    ours = str(e)
  try:
    theirs = mujoco.MjModel.from_xml_string(xml).names.decode(errors="replace")
  except ValueError as e:
    theirs = str(e)
  return ours, theirs


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE m [<!ENTITY x SYSTEM "{file}">]>',            # external entity
    '<!DOCTYPE m [<!ENTITY x SYSTEM "file://{file}">]>',
    '<!DOCTYPE m [<!ENTITY % p SYSTEM "file://{file}"> %p;]>',  # parameter entity
    '<!DOCTYPE m SYSTEM "file://{file}">',                    # external DTD
])
def test_entities_and_dtds_read_no_file(tmp_path, doctype):
  """An entity or a DTD naming a file is never expanded from it, here or in MuJoCo."""
  secret = tmp_path / "secret.txt"
  secret.write_text("TOPSECRET")
  xml = (doctype.format(file=secret) + '<mujoco model="&x;"><worldbody><body name="b">'
         '<geom size="1"/></body></worldbody></mujoco>')
  for text in _load_both(xml):
    assert "TOPSECRET" not in text


def test_entities_reach_no_network():
  """An entity or a DTD naming a URL opens no connection (a listening socket sees none)."""
  with socket.socket() as server:
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    url = f"http://127.0.0.1:{server.getsockname()[1]}/x"
    for doctype in (f'<!DOCTYPE m [<!ENTITY x SYSTEM "{url}">]>', f'<!DOCTYPE m SYSTEM "{url}">'):
      _load_both(doctype + '<mujoco model="&x;"><worldbody/></mujoco>')
    with pytest.raises(BlockingIOError):
      server.accept()


def test_xinclude_and_entity_bombs_are_refused():
  """XInclude is an unknown element (MuJoCo's schema says the same); an entity expanding a
  billion-fold is refused by the parser, not expanded."""
  xi = ('<mujoco xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="/etc/hostname" '
        'parse="text"/></mujoco>')
  with pytest.raises(MjcfError, match="unknown element"):
    compile_model(xi)
  ents = '<!ENTITY a "aaaaaaaaaa">' + "".join(
      f'<!ENTITY {b} "{("&" + a + ";") * 10}">' for a, b in zip("abcdefgh", "bcdefghi"))
  with pytest.raises(MjcfError, match="amplification"):
    compile_model(f'<!DOCTYPE m [{ents}]><mujoco model="&i;"><worldbody/></mujoco>')


@pytest.mark.parametrize("tag, xml", [
    ("mesh", '<asset>\n<mesh name="m" file="big"/>\n</asset>'),
    ("texture", '<asset>\n<texture name="t" type="2d" file="big.png"/>\n</asset>'),
    ("hfield", '<asset>\n<hfield name="h" file="big" size="1 1 1 1"/>\n</asset>'),
    ("include", '<include file="big"/>'),
])
def test_a_10_gb_file_is_refused_before_it_is_read(tmp_path, tag, xml):
  """A 10 GB asset or include (a sparse file: it takes no disk) is refused by its size, with
  its element, before any of it is read."""
  with open(tmp_path / ("big.png" if tag == "texture" else "big"), "wb") as f:
    f.truncate(10 * 2**30)
  (tmp_path / "model.xml").write_text(f"<mujoco>\n{xml}\n</mujoco>")
  with pytest.raises(MjcfError) as e:
    compile_model(str(tmp_path / "model.xml"))
  msg = str(e.value)
  line = 2 if tag == "include" else 3
  assert msg.startswith(f"model.xml:{line}: <{tag}") and "is 10 GiB, more than the 1 GiB" in msg


def _png(width, height):
  def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
  ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
  return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 99))
          + chunk(b"IEND", b""))


@pytest.mark.parametrize("name, data, xml, fragment", [
    ("t.png", _png(100_000, 100_000), '<texture name="t" type="2d" file="t.png"/>',
     "10000000000 pixels"),
    ("m.stl", b"\0" * 80 + struct.pack("<I", 4_000_000_000) + b"\0" * 50,
     '<mesh name="m" file="m.stl"/>', "does not match its triangle count"),
    ("h.bin", struct.pack("<ii", 100_000, 100_000) + b"\0" * 64,
     '<hfield name="h" file="h.bin" size="1 1 1 1"/>', "unexpected file size"),
])
def test_absurd_dimensions_in_a_small_file_are_refused(tmp_path, name, data, xml, fragment):
  """A small file whose header claims a 1e5 x 1e5 image, 4e9 triangles or a 1e5 x 1e5 height
  field is refused by its element, before the claimed size is allocated."""
  (tmp_path / name).write_bytes(data)
  (tmp_path / "model.xml").write_text(f"<mujoco>\n<asset>\n{xml}\n</asset>\n</mujoco>")
  with pytest.raises(MjcfError, match=fragment) as e:
    compile_model(str(tmp_path / "model.xml"))
  assert str(e.value).startswith("model.xml:3: <")
