"""The viewer's keyboard and mouse bindings as the help panel (F1) lists them: (keys, action),
handled by Viewer.on_key_press and the mouse handlers in app/viewer.py."""

HELP = (
    ("Space", "pause / run"), ("Right arrow", "step once (paused)"),
    ("Backspace", "reset (to the selected keyframe, if any)"), ("Ctrl+L", "reload from disk"),
    ("- / =", "slower / faster"), ("[ / ]", "previous / next model camera"),
    ("Esc", "free camera"), ("Tab", "hide / show the panels"), ("F1", "this help"),
    ("Ctrl+P", "screenshot of the 3D view (PNG; Shift: with the panels)"), ("Ctrl+R", "start / stop recording a video"),
    ("F6 / F7", "cycle frames / labels"), ("C / F", "contact points / forces"),
    ("J / E", "joints / equality anchors"), ("I / M", "inertia boxes / centres of mass"),
    ("T / W / S", "transparency / wireframe / shadows"), ("V / Y", "tendons / rangefinder rays"),
    (";", "skins"), ("0-5", "geom group 0-5"),
    ("Left drag", "rotate view"),
    ("Right drag", "move view (Shift: horizontal plane)"),
    ("Middle drag / scroll", "zoom"), ("Double-click", "select a body"),
    ("Ctrl + right drag", "pull the selected body (Shift: horizontal plane)"),
    ("Ctrl + left drag", "twist the selected body"),
    ("Drop a file", "open that model"),
)
