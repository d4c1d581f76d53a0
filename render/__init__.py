"""numjoco's renderer: draws a Model and a Snapshot of its Data with moderngl (OpenGL 3.3 core),
in a window (the app) or headless through EGL (tests, screenshots, video).

Modules: offscreen (Renderer: mujoco.Renderer's API, also numjoco.Renderer), snapshot (what is
drawn, filled on the physics thread), camera (mjvCamera), scene (SceneBuilder, Scene,
VisOptions: what to draw, numpy only, as mjv_updateScene), renderer (SceneRenderer: draws a
Scene with GL, as mjr_render), segment (its flat id pass: segmentation and depth), headless
(HeadlessRenderer, save_png), visual (mjVisual/mjStatistic and builtin textures read from the
MJCF), meshes (unit primitives), texmap/textures, skin, flex (each a numpy half for the scene
and a GL half), shaders (GLSL). The names below are imported on first use: the numpy modules
load without GL.
"""
import importlib

_API = {"Camera": "camera", "CameraType": "camera", "Mouse": "camera",
        "HeadlessRenderer": "headless", "save_png": "headless", "Renderer": "offscreen",
        "SceneRenderer": "renderer", "VisOptions": "scene", "Scene": "scene",
        "SceneBuilder": "scene", "Snapshot": "snapshot"}

__all__ = sorted(_API)


def __getattr__(name):
  """A public class or function, imported on first use."""
  module = _API.get(name)
  if module is None:
    raise AttributeError(f"module 'numjoco.render' has no attribute {name!r}")
  value = getattr(importlib.import_module("numjoco.render." + module), name)
  globals()[name] = value
  return value


def __dir__():
  return sorted(set(globals()) | set(_API))
