"""GLSL 3.30 sources: the instanced lit geom program, its depth-only twin for the shadow map, and
flat lines.

Per vertex: position, normal and `cap` (see render/meshes.py). Per instance: position, the three
rows of the rotation matrix (MuJoCo's xmat layout), size (xyz scale, w: capsule half-length or
plane grid spacing), rgba, and material (emission, specular, shininess, kind: 1 = checker plane).
"""

MAX_LIGHTS = 8

GEOM_VS = """
#version 330
in vec3 in_pos; in vec3 in_normal; in float in_cap;
in vec3 i_pos; in vec3 i_r0; in vec3 i_r1; in vec3 i_r2; in vec4 i_size; in vec4 i_color;
in vec4 i_mat;
uniform mat4 u_viewproj;
uniform mat4 u_shadow_mat;
out vec3 v_world; out vec3 v_normal; out vec4 v_color; out vec4 v_mat; out vec2 v_local;
out vec4 v_shadow; out float v_spacing;
void main() {
  vec3 local = in_pos * i_size.xyz + vec3(0.0, 0.0, in_cap * i_size.w);
  mat3 R = transpose(mat3(i_r0, i_r1, i_r2));
  vec3 world = R * local + i_pos;
  v_world = world;
  v_normal = normalize(R * (in_normal / max(i_size.xyz, vec3(1e-9))));
  v_color = i_color; v_mat = i_mat; v_local = local.xy; v_spacing = i_size.w;
  v_shadow = u_shadow_mat * vec4(world, 1.0);
  gl_Position = u_viewproj * vec4(world, 1.0);
}
"""

GEOM_FS = """
#version 330
#define MAX_LIGHTS %d
in vec3 v_world; in vec3 v_normal; in vec4 v_color; in vec4 v_mat; in vec2 v_local;
in vec4 v_shadow; in float v_spacing;
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
uniform float u_shadow_scale;
uniform float u_shadow_bias;
uniform sampler2DShadow u_shadow;
uniform int u_unlit;
out vec4 f_color;
void main() {
  vec3 base = v_color.rgb;
  if (v_mat.w > 0.5 && v_spacing > 0.0) {
    vec2 c = floor(v_local / v_spacing);
    float even = mod(c.x + c.y, 2.0);
    base = mix(base, min(base * 1.35 + 0.05, vec3(1.0)), even);
  }
  if (u_unlit == 1) { f_color = vec4(base, v_color.a); return; }
  vec3 n = normalize(v_normal);
  vec3 V = normalize(u_eye - v_world);
  if (dot(n, V) < 0.0) n = -n;
  float shine = max(v_mat.z * 128.0, 1.0);
  vec3 color = v_mat.x * base;
  float shadow = 1.0;
  if (u_shadow_light >= 0) {
    vec3 sc = v_shadow.xyz / v_shadow.w * 0.5 + 0.5;
    if (sc.x > 0.0 && sc.x < 1.0 && sc.y > 0.0 && sc.y < 1.0 && sc.z < 1.0)
      shadow = 1.0 - u_shadow_scale * (1.0 - texture(u_shadow, vec3(sc.xy, sc.z - u_shadow_bias)));
  }
  for (int i = 0; i < u_nlight; i++) {
    vec3 L; float att = 1.0;
    if (u_lpos[i].w > 0.5) {
      L = -normalize(u_ldir[i]);
    } else {
      vec3 d = u_lpos[i].xyz - v_world;
      float dist = length(d);
      L = d / dist;
      att = 1.0 / max(u_latt[i].x + u_latt[i].y * dist + u_latt[i].z * dist * dist, 1e-6);
      if (u_lspot[i].x > -1.0) {
        float s = dot(-L, normalize(u_ldir[i]));
        att *= s >= u_lspot[i].x ? pow(max(s, 0.0), u_lspot[i].y) : 0.0;
      }
    }
    float sh = (i == u_shadow_light) ? shadow : 1.0;
    float ndl = max(dot(n, L), 0.0);
    vec3 H = normalize(L + V);
    float spec = ndl > 0.0 ? pow(max(dot(n, H), 0.0), shine) : 0.0;
    color += att * (u_lamb[i] * base
                    + sh * (u_ldif[i] * base * ndl + u_lspec[i] * v_mat.y * spec));
  }
  f_color = vec4(min(color, vec3(1.0)), v_color.a);
}
""" % MAX_LIGHTS

DEPTH_VS = """
#version 330
in vec3 in_pos; in float in_cap;
in vec3 i_pos; in vec3 i_r0; in vec3 i_r1; in vec3 i_r2; in vec4 i_size;
uniform mat4 u_viewproj;
void main() {
  vec3 local = in_pos * i_size.xyz + vec3(0.0, 0.0, in_cap * i_size.w);
  gl_Position = u_viewproj * vec4(transpose(mat3(i_r0, i_r1, i_r2)) * local + i_pos, 1.0);
}
"""

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
