"""The packages' layering: numjoco.engine (engine/) imports neither numjoco.render (render/) nor
numjoco.app (app/) nor any GUI library; render/ never imports app/; nothing imports the folders
by their bare names (engine, app, render, assets: the installed package is numjoco). Every import
counts, also those inside functions."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUI = ("pyglet", "moderngl", "imgui_bundle", "OpenGL", "av", "glfw")   # Pillow reads textures
FOLDERS = ("engine", "app", "render", "assets")
FORBIDDEN = {"engine": ("numjoco.app", "numjoco.render") + GUI, "render": ("numjoco.app",)}


def _imports(path):
  """(line, module) of every absolute import in a file (`from a import b` counts as a.b too)."""
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      for a in node.names:
        yield node.lineno, a.name
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      yield node.lineno, node.module
      for a in node.names:
        yield node.lineno, f"{node.module}.{a.name}"


def _under(mod, prefixes):
  return any(mod == p or mod.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_the_layers_above_it(package):
  bad = [f"{p.relative_to(ROOT)}:{line}: {mod}"
         for p in sorted((ROOT / package).rglob("*.py"))
         for line, mod in _imports(p)
         if _under(mod, FORBIDDEN[package])]
  assert not bad, "\n".join(bad)


def test_nothing_imports_the_bare_folder_names():
  files = [p for d in FOLDERS + ("numjoco", "tests") for p in sorted((ROOT / d).rglob("*.py"))]
  bad = [f"{p.relative_to(ROOT)}:{line}: {mod}"
         for p in files for line, mod in _imports(p) if _under(mod, FOLDERS)]
  assert not bad, "\n".join(bad)
