"""The packages' layering: engine/ imports neither render/ nor app/ nor any GUI library;
render/ never imports app/. Every import counts, also those inside functions."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUI = ("pyglet", "moderngl", "imgui_bundle", "OpenGL", "av", "glfw")   # Pillow reads textures
FORBIDDEN = {"engine": ("app", "render") + GUI, "render": ("app",)}


def _imports(path):
  """(line, module) of every import in a file."""
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      for a in node.names:
        yield node.lineno, a.name
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      yield node.lineno, node.module


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_the_layers_above_it(package):
  bad = [f"{p.relative_to(ROOT)}:{line}: {mod}"
         for p in sorted((ROOT / package).rglob("*.py"))
         for line, mod in _imports(p)
         if mod.split(".")[0] in FORBIDDEN[package]]
  assert not bad, "\n".join(bad)
