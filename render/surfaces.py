"""GL plumbing shared by the surfaces the renderer builds per model and draws with the geom
programs as one instance each: skins (render/skin.py) and flexes (render/flex.py). Each keeps
its own vertex data (their normals differ on purpose: skin's float32 sums match MuJoCo's
mjv_updateSkin); what they share is how a surface's buffers become vertex arrays and how the
lit programs, their uniforms and textures are chosen while drawing."""
import numpy as np

INSTANCE_FMT = "3f 3f 3f 3f 4f 4f 4f 4f/i"
INSTANCE_ATTRS = ("i_pos", "i_r0", "i_r1", "i_r2", "i_size", "i_color", "i_mat", "i_color2")
TEX_NONE, TEX_2D, TEX_CUBE = 0, 1, 2


def vertex_array(ctx, prog, key, vbuf, uvbuf, inst, ibuf=None):
  """A vertex array of one surface for `prog`: key "d" (the shadow map's depth program) reads
  positions and the instance pose; any other key reads positions, normals, the whole instance
  row and, where the program samples a texture, the uvs."""
  if key == "d":
    attrs = [(vbuf, "3f 12x", "in_pos"), (inst, "3f 3f 3f 3f 4f 48x/i", *INSTANCE_ATTRS[:5])]
  else:
    attrs = [(vbuf, "3f 3f", "in_pos", "in_normal"), (inst, INSTANCE_FMT, *INSTANCE_ATTRS)]
    if "in_uv" in prog:
      attrs.append((uvbuf, "2f", "in_uv"))
  return ctx.vertex_array(prog, attrs, ibuf) if ibuf is not None else ctx.vertex_array(prog, attrs)


def draw_lit(r, ctx, sh, set_uniforms, items, render):
  """Draw surfaces with the renderer `r`'s lit geom programs (`sh`: the variant that reads the
  shadow map), back faces culled as MuJoCo's renderer draws skins and flexes. `items` yields
  (surface, texture type, texture id); `render(surface, prog, key)` draws one. Each program
  gets this frame's camera and lights once (`set_uniforms`), one-sided lighting and the
  texture unit."""
  import moderngl
  done = set()
  ctx.enable(moderngl.CULL_FACE)
  for i, tex, texid in items:
    prog = r._textured._program(0, sh, tex) if tex else r._geom_progs[sh]
    if id(prog) not in done:
      set_uniforms(prog)
      if "u_twoside" in prog:
        prog["u_twoside"].value = 0
      if "u_tex" in prog:
        prog["u_tex"].value = 1
      done.add(id(prog))
    if tex:
      r._textured._texture(int(texid)).use(location=1)
    render(i, prog, (sh, tex))
  r._twoside_key = None      # u_twoside was set here: the renderer sets it again


def selected(mask, alpha, transparent):
  """Indices of the shown surfaces that are transparent (alpha < 1) or opaque, as asked."""
  return np.nonzero(mask & ((alpha < 1.0) == transparent))[0]
