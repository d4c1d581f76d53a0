"""Rendering panel: the renderer's overlay toggles (flex vertices/edges/faces/skin among them,
MuJoCo's mjVIS_FLEX* with its defaults), geom, skin and flex groups, labels, cameras."""


def draw(imgui, ui, cmd):
  """The Rendering section (edits ui.opts and ui.camera, the viewer's VisOptions and Camera,
  directly: UI-side state)."""
  import dataclasses
  from numjoco.app.panels.common import rect
  from numjoco.render.camera import CameraType
  from numjoco.render.scene import LABELS
  o, cam, m = ui.opts, ui.camera, ui.m
  for f in dataclasses.fields(o):
    v = getattr(o, f.name)
    if isinstance(v, bool):
      _, nv = imgui.checkbox(f.name.replace("_", " "), v)
      rect(imgui, ui, f.name)
      setattr(o, f.name, nv)
  if ui.scene_full:   # simulate's "Increase maxgeom" warning
    from numjoco.app.panels.common import YELLOW
    imgui.text_colored(YELLOW, f"scene full ({ui.max_geom} geoms): some rangefinder markers "
                               "are not drawn")
  imgui.text("geom groups")
  for g in range(len(o.geom_groups)):
    imgui.same_line()
    _, o.geom_groups[g] = imgui.checkbox(f"{g}##gg", o.geom_groups[g])
  if m is not None and getattr(m, "nskin", 0):
    imgui.text("skin groups")
    for g in range(len(o.skin_groups)):
      imgui.same_line()
      _, o.skin_groups[g] = imgui.checkbox(f"{g}##sg", o.skin_groups[g])
  if m is not None and getattr(m, "nflex", 0):
    imgui.text("flex groups")
    for g in range(len(o.flex_groups)):
      imgui.same_line()
      _, o.flex_groups[g] = imgui.checkbox(f"{g}##fg", o.flex_groups[g])
      rect(imgui, ui, f"flex group {g}")
    if max(int(x) for x in m.flex_dim) == 3:     # simulate's "Flex layer" slider
      _, o.flex_layer = imgui.slider_int("flex layer", int(o.flex_layer), 0,
                                         max(0, int(max(m.flex_elemlayer, default=0))))
  _, li = imgui.combo("labels", LABELS.index(o.labels), list(LABELS))
  o.labels = LABELS[li]
  if cam is None:
    return
  names = ["free", "tracking"] + [f"camera {ui.name('camera', c)}" for c in range(m.ncam)]
  cur = 0 if cam.type == CameraType.FREE else 1 if cam.type == CameraType.TRACKING else \
      2 + cam.fixedcamid
  changed, i = imgui.combo("camera", cur, names)
  if changed:
    if i == 0:
      cam.type = CameraType.FREE
    elif i == 1:
      cam.type = CameraType.TRACKING
      cam.trackbodyid = max(cam.trackbodyid, 1 if m.nbody > 1 else 0)
    else:
      cam.type, cam.fixedcamid = CameraType.FIXED, i - 2
  if cam.type != CameraType.FIXED:     # simulate's "Free Camera: Orthographic"
    _, cam.orthographic = imgui.checkbox("orthographic", bool(cam.orthographic))
    rect(imgui, ui, "orthographic")
  if cam.type == CameraType.TRACKING:
    _, b = imgui.combo("track body", cam.trackbodyid,
                       [ui.name("body", b) for b in range(m.nbody)])
    cam.trackbodyid = b
  if imgui.button("Reset view"):
    cmd.send("reset_view")
