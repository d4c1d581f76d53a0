"""The packages' layering: numjoco.engine (engine/) imports neither numjoco.render (render/) nor
numjoco.app (app/) nor any GUI library; render/ never imports app/; nothing imports the folders
by their bare names (engine, app, render, assets: the installed package is numjoco); and no
module takes part in an import circle. Every import counts, also those inside functions."""
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


def _modules():
  """{module name: path} of every module of the installed package."""
  out = {}
  for folder, pkg in (("numjoco", "numjoco"),) + tuple((f, "numjoco." + f) for f in FOLDERS):
    for p in sorted((ROOT / folder).rglob("*.py")):
      parts = [x for x in p.relative_to(ROOT / folder).with_suffix("").parts if x != "__init__"]
      out[".".join([pkg] + parts)] = p
  return out


def _graph():
  """module -> the package modules it imports (`from pkg import sub` names the submodule)."""
  mods = _modules()
  graph = {}
  for name, path in mods.items():
    deps = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
      if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
      elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods
                   else node.module for a in node.names]
      else:
        continue
      for mod in targets:
        while mod and mod not in mods:
          mod = mod.rpartition(".")[0]
        if mod and mod != name:
          deps.add(mod)
    graph[name] = deps
  return graph


def _cycles(graph):
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on, out = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in graph[v]:
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      comp = []
      while True:
        w = stack.pop()
        on.discard(w)
        comp.append(w)
        if w == v:
          break
      if len(comp) > 1:
        out.append(sorted(comp))

  for v in graph:
    if v not in index:
      visit(v)
  return out


def test_no_import_circles():
  graph = _graph()
  assert len(graph) > 100 and graph["numjoco.engine.api"]   # the probe sees the package
  assert _cycles(graph) == []


def test_the_circle_check_finds_a_circle():
  graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
  assert _cycles(graph) == [["a", "b", "c"]]


# files allowed over the limit (none)
_LONG_FILES = set()


def test_files_and_functions_stay_short():
  """No module over 1,500 lines but those named above, no function over 150 lines."""
  long_files, long_functions = set(), []
  for folder in FOLDERS + ("numjoco",):
    for p in sorted((ROOT / folder).rglob("*.py")):
      rel = str(p.relative_to(ROOT))
      text = p.read_text()
      if text.count("\n") > 1500:
        long_files.add(rel)
      for node in ast.walk(ast.parse(text, rel)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
          if node.end_lineno - node.lineno + 1 > 150:
            long_functions.append(f"{rel}:{node.lineno} {node.name}")
  assert long_files == _LONG_FILES
  assert not long_functions


def test_the_scene_builder_imports_no_gl():
  """render/scene.py (what to draw) and every package module it imports, directly or through
  others, import no GL, window or GUI library; importing it loads none."""
  import subprocess
  import sys
  graph, seen, todo = _graph(), set(), ["numjoco.render.scene"]
  while todo:
    mod = todo.pop()
    if mod not in seen:
      seen.add(mod)
      todo.extend(graph[mod])
  mods = _modules()
  bad = [f"{mods[mod].relative_to(ROOT)}:{line}: {imp}" for mod in sorted(seen)
         for line, imp in _imports(mods[mod]) if _under(imp, GUI)]
  assert "numjoco.render.skin" in seen and not bad, "\n".join(bad)
  code = ("import sys, numjoco.render.scene; "
          f"print(sorted(m for m in sys.modules if m.split('.')[0] in {GUI!r}))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, check=True)
  assert out.stdout.strip() == "[]"


def _private_uses(path, mods):
  """(line, text) of each use in `path` of another module's private name: `from pkg.mod import
  _name` or `mod._name` where `_name` is a function, class or constant (a private module, such
  as engine/_jit.py or engine/mjcf/_mesh.py, may be imported by its package)."""
  tree = ast.parse(path.read_text(), str(path))
  aliases = {}
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("numjoco"):
      for a in node.names:
        full = f"{node.module}.{a.name}"
        if full in mods:
          aliases[a.asname or a.name] = full
        elif a.name.startswith("_"):
          yield node.lineno, f"from {node.module} import {a.name}"
    elif isinstance(node, ast.Import):
      for a in node.names:
        if a.name in mods and a.asname:
          aliases[a.asname] = a.name
  for node in ast.walk(tree):
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id in aliases and node.attr.startswith("_")
        and not node.attr.startswith("__") and f"{aliases[node.value.id]}.{node.attr}" not in mods):
      yield node.lineno, f"{node.value.id}.{node.attr}"


def test_no_module_reaches_into_another_modules_private_names():
  """What one module uses of another is public: a leading underscore means the name is the
  module's own business."""
  mods = _modules()
  bad = [f"{p.relative_to(ROOT)}:{line}: {text}" for p in sorted(set(mods.values()))
         for line, text in _private_uses(p, mods)]
  assert not bad, "\n".join(bad)
