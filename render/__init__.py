"""numjoco's renderer: draws a Model and a Snapshot of its Data with moderngl (OpenGL 3.3 core),
in a window (the app) or headless through EGL (tests, screenshots, video).

Modules: snapshot (what is drawn, filled on the physics thread), camera (mjvCamera), renderer
(Renderer, VisOptions), headless (HeadlessRenderer, save_png), visual (mjVisual/mjStatistic and
builtin textures read from the MJCF), meshes (unit primitives), shaders (GLSL).
"""
from numjoco.render.camera import Camera, CameraType, Mouse
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import Renderer, VisOptions
from numjoco.render.snapshot import Snapshot

__all__ = ["Camera", "CameraType", "Mouse", "HeadlessRenderer", "save_png", "Renderer",
           "VisOptions", "Snapshot"]
