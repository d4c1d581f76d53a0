"""GLSL 3.30 sources: the instanced lit geom program, its depth-only twin for the shadow map, and
flat lines.

Lighting is per vertex, as MuJoCo's fixed-function OpenGL (software GL here: the fragment shader
must stay short); the shadow-casting light is shaded per fragment from the shadow map. Planes lit
by spot/point lights get a variant that shades those lights per fragment.
Per vertex: position, normal and `cap` (see render/meshes.py). Per instance: position, the three
rows of the rotation matrix (MuJoCo's xmat layout), size (xyz scale, w: capsule half-length or
plane checker square), rgba, material (emission, specular, shininess, kind: 2 = checker of rgba
and rgba2, a plane's builtin checker material; a plane without one is one colour, as MuJoCo draws
it) and rgba2.
"""

from numjoco.render.scene import MAX_LIGHTS  # noqa: F401 - the uniform arrays hold these

_LIGHT_UNIFORMS = """
#define MAX_LIGHTS %d
uniform vec3 u_eye;
uniform int u_nlight;
uniform vec4 u_lpos[MAX_LIGHTS];      // xyz, w: 1 directional, 0 positional
uniform vec3 u_ldir[MAX_LIGHTS];
uniform vec3 u_lamb[MAX_LIGHTS];
uniform vec3 u_ldif[MAX_LIGHTS];
uniform vec3 u_lspec[MAX_LIGHTS];
uniform vec3 u_latt[MAX_LIGHTS];
uniform vec2 u_lspot[MAX_LIGHTS];     // cos(cutoff) (-1: no cone), exponent
uniform int u_shadow_light;           // index of the shadow-casting light, -1 none

// attenuation and direction to light i from `world`
float light_at(int i, vec3 world, out vec3 L) {
  if (u_lpos[i].w > 0.5) { L = -normalize(u_ldir[i]); return 1.0; }
  vec3 d = u_lpos[i].xyz - world;
  float dist = length(d);
  L = d / dist;
  float att = 1.0 / max(u_latt[i].x + u_latt[i].y * dist + u_latt[i].z * dist * dist, 1e-6);
  if (u_lspot[i].x > -1.0) {
    float s = dot(-L, normalize(u_ldir[i]));
    att *= s >= u_lspot[i].x ? pow(max(s, 0.0), u_lspot[i].y) : 0.0;
  }
  return att;
}
""" % MAX_LIGHTS

GEOM_VS = """
#version 330
#define PLANE %d
#define TEX %d
#define SHADOW %d
in vec3 in_pos; in vec3 in_normal; in float in_cap;
in vec3 i_pos; in vec3 i_r0; in vec3 i_r1; in vec3 i_r2; in vec4 i_size; in vec4 i_color;
in vec4 i_mat; in vec4 i_color2;
#if TEX > 0
in vec2 in_uv; out vec3 v_tex;     // textured variant: i_color2 holds the texture mapping
#endif
uniform mat4 u_viewproj;
uniform mat4 u_shadow_mat;
uniform mat4 u_clip;        // rows: clip planes over the shadow-map coordinates (x, y, w, 1)
uniform int u_twoside;      // 1 while drawing planes (no back-face culling)
out float gl_ClipDistance[4];
""" + _LIGHT_UNIFORMS + """
// per-instance values are flat (llvmpipe interpolates every smooth component per pixel)
flat out vec4 v_color; flat out vec3 v_color2; flat out float v_checker;
out vec2 v_local; out vec3 v_diff; out vec3 v_spec;
#if SHADOW >= 1
out vec3 v_sdiff; out vec3 v_sspec;
#endif
#if SHADOW == 1
out vec4 v_shadow;
#endif
#if PLANE == 1
out vec3 v_world; flat out vec3 v_normal;    // a plane's normal is constant (also its sign)
#endif
void main() {
  vec3 local = in_pos * i_size.xyz + vec3(0.0, 0.0, in_cap * i_size.w);
  mat3 R = transpose(mat3(i_r0, i_r1, i_r2));
  vec3 world = R * local + i_pos;
  vec3 n = normalize(R * (in_normal / max(i_size.xyz, vec3(1e-9))));
  vec3 V = normalize(u_eye - world);
  // MuJoCo culls back faces and lights the front ones with their normals as given (no two-sided
  // lighting): a smooth normal turned away from the eye stays so. Planes are drawn without
  // culling; their one normal turns to the eye (u_twoside), the same for the whole triangle.
  if (u_twoside == 1 && dot(n, V) < 0.0) n = -n;
  float shine = max(i_mat.z * 128.0, 1.0);
  // per-vertex lighting, as MuJoCo's fixed-function OpenGL; the shadow light kept apart so
  // the fragment shader can shade it
  vec3 diff = vec3(i_mat.x), spec = vec3(0.0), sdiff = vec3(0.0), sspec = vec3(0.0);
  for (int i = 0; i < MAX_LIGHTS; i++) {
    if (i >= u_nlight) break;
    if (PLANE == 1 && u_lpos[i].w < 0.5) continue;    // planes: positional lights per fragment
    vec3 L;
    float att = light_at(i, world, L);
    float ndl = max(dot(n, L), 0.0);
    float sp = ndl > 0.0 ? pow(max(dot(n, normalize(L + V)), 0.0), shine) : 0.0;
    if (i == u_shadow_light) {
      sdiff += att * (u_lamb[i] + u_ldif[i] * ndl); sspec += att * u_lspec[i] * i_mat.y * sp;
    } else {
      diff += att * (u_lamb[i] + u_ldif[i] * ndl); spec += att * u_lspec[i] * i_mat.y * sp;
    }
  }
#if SHADOW >= 1
  v_diff = diff; v_spec = spec; v_sdiff = sdiff; v_sspec = sspec;
#else
  v_diff = diff + sdiff; v_spec = spec + sspec;   // nothing in shadow: one sum per vertex
#endif
  v_color = i_color; v_color2 = i_color2.rgb; v_local = local.xy / max(i_size.w, 1e-9);
  v_checker = (i_mat.w > 1.5 && i_size.w > 0.0) ? 1.0 : 0.0;
  vec4 shadow_pos = u_shadow_mat * vec4(world, 1.0);
#if SHADOW == 1
  v_shadow = shadow_pos;
#endif
  // floors are drawn in pieces: the shadow map's footprint with the shadow variant, the rest
  // without (u_clip is zero, clipping nothing, for everything else)
  vec4 clip = u_clip * vec4(shadow_pos.xyw, 1.0);
  for (int i = 0; i < 4; i++) gl_ClipDistance[i] = clip[i];
#if PLANE == 1
  v_world = world; v_normal = n;
#endif
#if TEX == 1
  v_tex = vec3(in_uv * i_color2.xy + i_color2.zw, 0.0);   // 2d: scaled, offset coordinates
#elif TEX == 2
  v_tex = in_pos * i_color2.xyz;                          // cube: object-space direction
#endif
  gl_Position = u_viewproj * vec4(world, 1.0);
}
"""

GEOM_FS = """
#version 330
#define PLANE %d
#define NPOS %d
#define NLOOP %d
#define SHADOW %d
#define TEX %d
#if TEX == 1
in vec3 v_tex; uniform sampler2D u_tex;
#elif TEX == 2
in vec3 v_tex; uniform samplerCube u_tex;
#endif
#if PLANE == 1
in vec3 v_world; flat in vec3 v_normal;
uniform vec3 u_ppos[NPOS]; uniform vec3 u_pdir[NPOS]; uniform vec3 u_pamb[NPOS];
uniform vec3 u_pdif[NPOS]; uniform vec3 u_pspec[NPOS]; uniform vec3 u_patt[NPOS];
uniform vec2 u_pspot[NPOS];           // cos(cutoff) (-1: no cone), exponent
uniform int u_pshadow;                // which of them casts the shadow, -1 none
#endif
flat in vec4 v_color; flat in vec3 v_color2; flat in float v_checker;
in vec2 v_local; in vec3 v_diff; in vec3 v_spec;
#if SHADOW >= 1
in vec3 v_sdiff; in vec3 v_sspec;
#endif
#if SHADOW == 1
in vec4 v_shadow;
#endif
uniform float u_shadow_scale;
uniform float u_shadow_bias;
uniform int u_shadow_light;
uniform sampler2DShadow u_shadow;
out vec4 f_color;
void main() {
  vec3 base = v_color.rgb;
  if (v_checker > 0.5) {
    vec2 c = floor(v_local);
    base = mix(base, v_color2, mod(c.x + c.y, 2.0));
  }
  float shadow = 1.0;
  vec3 diff = v_diff, spec = v_spec;
#if SHADOW == 1
  // a variant without this block is drawn when no shadow is cast: llvmpipe runs both sides of
  // every branch (masked), so a uniform-false `if` still pays the shadow-map lookup per pixel
  if (u_shadow_light >= 0) {
    vec3 sc = v_shadow.xyz / v_shadow.w * 0.5 + 0.5;
    // MuJoCo's shadow pass adds the light only where the filtered comparison passes its alpha
    // test (>= 0.99): in shadow the light is gone, ambient and all
    if (sc.x > 0.0 && sc.x < 1.0 && sc.y > 0.0 && sc.y < 1.0 && sc.z < 1.0)
      shadow = 1.0 - u_shadow_scale * (1.0 - step(0.99, texture(u_shadow, vec3(sc.xy,
                                                                     sc.z - u_shadow_bias))));
  }
#endif
#if SHADOW >= 1
  vec3 sdiff = v_sdiff, sspec = v_sspec;
#endif
#if PLANE == 1
  // spot and point lights on planes, per fragment: a plane's few big triangles cannot carry
  // a light cone per vertex. Diffuse only, in a constant-length loop: llvmpipe pays for every
  // instruction on every floor pixel.
  vec3 n = v_normal;      // a plane's normal is constant: no renormalisation
  for (int i = 0; i < NLOOP; i++) {
    vec3 d = u_ppos[i] - v_world;
    float inv = inversesqrt(dot(d, d));
    vec3 L = d * inv;
    float dist = 1.0 / inv;
    float att = 1.0 / max(u_patt[i].x + u_patt[i].y * dist + u_patt[i].z * dist * dist, 1e-6);
    float c = dot(-L, u_pdir[i]);
    att *= (u_pspot[i].x <= -1.0 || c >= u_pspot[i].x) ? exp2(u_pspot[i].y * log2(max(c, 1e-6)))
                                                       : 0.0;
    vec3 add = att * (u_pamb[i] + u_pdif[i] * max(dot(n, L), 0.0));
#if SHADOW >= 1
    if (i == u_pshadow) sdiff += add; else diff += add;
#else
    diff += add;
#endif
  }
#endif
#if TEX == 1
  vec4 tc = texture(u_tex, v_tex.xy);
#elif TEX == 2
  vec4 tc = texture(u_tex, v_tex);
#else
  vec4 tc = vec4(1.0);
#endif
  // as fixed-function GL_MODULATE: the lit colour, clamped, times the texel
  vec3 rgb = min(base * diff + spec, vec3(1.0)) * tc.rgb;
#if SHADOW >= 1
  // MuJoCo draws the shadow-casting light in a pass of its own, added (GL_ONE, GL_ONE) to the
  // other lights' picture: each pass is clamped on its own, so a bright texel-modulated floor
  // (base colour 1) still shows the spot light and its shadow
  rgb = min(rgb + shadow * min(base * sdiff + sspec, vec3(1.0)) * tc.rgb, vec3(1.0));
#endif
  f_color = vec4(rgb, v_color.a * tc.a);
}
"""


APART = 2   # geom_program's shadow variant: the shadow light kept apart, no shadow map read

# floor pieces (renderer._floor_pieces): inside the shadow map's footprint, around it, beyond a
# spot light's cone; PIECE_VARIANT: each one's geom_program (shadow, positional) arguments
INSIDE, AROUND, OUTSIDE = range(3)
PIECE_VARIANT = {INSIDE: (True, True), AROUND: (APART, True), OUTSIDE: (False, False)}
GL_CLIP_DISTANCE0 = 0x3000   # the clip distances the pieces and the sky's pieces are cut by


def geom_program(npos=0, shadow=True, tex=0, positional=True):
  """(vertex, fragment) sources of the geom program; with `npos` > 0, the plane variant that
  shades that many spot/point lights per fragment (with `positional` False, none of them: for
  floor pieces that no spot light reaches); without `shadow`, the variant that never reads the
  shadow map (drawn when no light casts a shadow this frame); with `shadow` APART, the one that
  lights the shadow light apart, clamped on its own as the shadow variant, without reading the
  map (floor pieces outside its footprint); `tex` 1 or 2: the variant that multiplies by a 2d or
  cube texture (vertex attribute in_uv, render/textures.py)."""
  plane, npos = int(npos > 0), max(int(npos), 1)
  return (GEOM_VS % (plane, int(tex), int(shadow)),
          GEOM_FS % (plane, npos, npos if positional else 0, int(shadow), int(tex)))


# the shadow map's depth-only instances; with ID 1, the id pass's (render/segment.py): i_color.x
# holds the instance's segmentation index, u_view_z the view matrix row of the distance along
# the view axis (mujoco.Renderer's depth image)
_DEPTH_VS = """
#version 330
#define ID %d
in vec3 in_pos; in float in_cap;
in vec3 i_pos; in vec3 i_r0; in vec3 i_r1; in vec3 i_r2; in vec4 i_size;
uniform mat4 u_viewproj;
#if ID == 1
in vec4 i_color; uniform vec4 u_view_z; flat out float v_segid; out float v_depth;
#endif
void main() {
  vec3 local = in_pos * i_size.xyz + vec3(0.0, 0.0, in_cap * i_size.w);
  vec4 world = vec4(transpose(mat3(i_r0, i_r1, i_r2)) * local + i_pos, 1.0);
#if ID == 1
  v_segid = i_color.x; v_depth = dot(u_view_z, world);
#endif
  gl_Position = u_viewproj * world;
}
"""
DEPTH_VS, ID_VS = _DEPTH_VS % 0, _DEPTH_VS % 1

DEPTH_FS = """
#version 330
void main() {}
"""

LINE_VS = """
#version 330
in vec3 in_pos; in vec4 in_color;
uniform mat4 u_viewproj;
out vec4 v_color;
void main() { v_color = in_color; gl_Position = u_viewproj * vec4(in_pos, 1.0); }
"""

LINE_FS = """
#version 330
in vec4 v_color;
out vec4 f_color;
void main() { f_color = v_color; }
"""

# wide lines (MuJoCo's mjGEOM_LINE, e.g. rangefinder rays: glLineWidth(3)) as instanced quads:
# core-profile GL may refuse line widths above 1. Like GL's aliased wide lines, the quad is
# `u_width` pixels across along the screen's minor axis of the segment.
# (with ID 1, the id pass's: as _DEPTH_VS)
_WIDELINE_VS = """
#version 330
#define ID %d
in vec2 in_corner;                   // x: 0 at p0, 1 at p1; y: -1 or +1, the side
in vec3 i_p0; in vec3 i_p1; in vec4 i_color;
uniform mat4 u_viewproj;
uniform vec2 u_viewport;             // pixels
uniform float u_width;               // pixels
uniform vec4 u_view_z;
#if ID == 1
flat out float v_segid; out float v_depth;
#else
out vec4 v_color;
#endif
void main() {
  vec4 a = u_viewproj * vec4(i_p0, 1.0), b = u_viewproj * vec4(i_p1, 1.0);
  const float eps = 1e-6;
  // (distances along the view axis at both ends, cut with them)
  vec2 z = vec2(dot(u_view_z, vec4(i_p0, 1.0)), dot(u_view_z, vec4(i_p1, 1.0)));
  if (a.w < eps && b.w < eps) { gl_Position = vec4(0.0, 0.0, 2.0, 1.0); return; }  // behind
  if (a.w < eps) {                      // cut at the eye plane
    float t = (eps - a.w) / (b.w - a.w);
    a = mix(a, b, t); z.x = mix(z.x, z.y, t);
  }
  if (b.w < eps) {
    float t = (eps - b.w) / (a.w - b.w);
    b = mix(b, a, t); z.y = mix(z.y, z.x, t);
  }
  vec2 d = (b.xy / b.w - a.xy / a.w) * u_viewport;
  vec2 off = abs(d.x) >= abs(d.y) ? vec2(0.0, 1.0) : vec2(1.0, 0.0);
  vec4 p = in_corner.x < 0.5 ? a : b;
  p.xy += off * in_corner.y * (u_width / u_viewport) * p.w;
#if ID == 1
  v_segid = i_color.x; v_depth = in_corner.x < 0.5 ? z.x : z.y;
#else
  v_color = i_color;
#endif
  gl_Position = p;
}
"""
WIDELINE_VS, ID_WIDELINE_VS = _WIDELINE_VS % 0, _WIDELINE_VS % 1

# the id pass's colour: segmentation index k as the bytes (k & 255, k >> 8 & 255, k >> 16 & 255)
# of an RGBA8 attachment (MuJoCo's mjRND_IDCOLOR encoding); the distance along the view axis in
# a float one
ID_FS = """
#version 330
flat in float v_segid; in float v_depth;
layout(location = 0) out vec4 f_id;
layout(location = 1) out float f_depth;
void main() {
  int k = int(v_segid);
  f_id = vec4(float(k & 255), float((k >> 8) & 255), float((k >> 16) & 255), 255.0) / 255.0;
  f_depth = v_depth;
}
"""

SKY_VS = """
#version 330
in vec2 in_pos; in vec3 in_color;
out vec3 v_color;
void main() { v_color = in_color; gl_Position = vec4(in_pos, 0.999, 1.0); }
"""

SKY_FS = """
#version 330
in vec3 v_color;
out vec4 f_color;
void main() { f_color = vec4(v_color, 1.0); }
"""

SKYTEX_VS = """
#version 330
in vec2 in_pos;
uniform vec3 u_edge;        // kept where dot(u_edge, (x, y, 1)) >= 0 (0 0 1: everywhere)
out vec2 v_ndc;
out float gl_ClipDistance[1];
void main() {
  v_ndc = in_pos;
  gl_ClipDistance[0] = dot(u_edge, vec3(in_pos, 1.0));
  gl_Position = vec4(in_pos, 1.0, 1.0);     // far plane
}
"""

# the skybox texture seen along each pixel's view ray: MuJoCo maps it with texgen (x, z, -y)
# on a box around the camera (rotated 90 deg about x), so only the ray direction matters
SKYTEX_FS = """
#version 330
in vec2 v_ndc;
uniform mat4 u_inv_viewproj;
uniform samplerCube u_sky;
out vec4 f_color;
void main() {
  vec4 a = u_inv_viewproj * vec4(v_ndc, -1.0, 1.0);
  vec4 b = u_inv_viewproj * vec4(v_ndc, 1.0, 1.0);
  vec3 d = b.xyz / b.w - a.xyz / a.w;
  f_color = vec4(texture(u_sky, vec3(d.x, d.z, -d.y)).rgb, 1.0);
}
"""

# resolve of a multisampled colour image (one full-screen triangle from gl_VertexID, no
# buffers): each pixel the mean of its samples, as glBlitFramebuffer's resolve, which on
# llvmpipe (moderngl's copy_framebuffer resolves depth too) takes 6.7 ms at 1280x720 x4 against
# this pass's 1.2 ms
RESOLVE_VS = """
#version 330
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0);
}
"""

RESOLVE_FS = """
#version 330
uniform sampler2DMS u_image;
uniform int u_samples;
out vec4 f_color;
void main() {
  ivec2 q = ivec2(gl_FragCoord.xy);
  vec4 s = vec4(0.0);
  for (int i = 0; i < u_samples; i++) s += texelFetch(u_image, q, i);
  f_color = s / float(u_samples);
}
"""
