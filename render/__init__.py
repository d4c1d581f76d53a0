"""numjoco's renderer: draws a Model and a Snapshot of its Data with moderngl (OpenGL 3.3 core),
in a window (the app) or headless through EGL (tests, screenshots, video).

Modules: snapshot (what is drawn), camera (mjvCamera), renderer (Renderer, VisOptions),
headless (HeadlessRenderer, save_png), visual (mjVisual/mjStatistic), meshes, shaders.
"""
