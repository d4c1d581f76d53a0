"""The narrowphase's flat work buffers (Data's ccd work arrays): the column layout of a GJK
object row and its support modes, the multicontact scratch rows and int scratch, and
`work_sizes`, which sizes the buffers for a model (engine/types.contact_capacity); and the two
named tuples of views into them that the general colliders pass around (`Work`, `Polytope`,
made by collision/convex.split_work). Plain Python: the kernels in collision/gjk.py and
collision/convex.py read these as constants."""
import collections

# The views of the work buffers: the GJK objects (float rows, int rows: type and support mode),
# GJK's simplex and its trial simplex (Minkowski point and both witnesses per row, the support
# vertex ids), the witness points of geom 1 [0:3] and geom 2 [3:6], the polytope's center, the
# counters (polytope vertices, faces, map size, horizon; the EPA face and GJK simplex size for
# multicontact; the meshes the buffers hold), and the EPA polytope.
Work = collections.namedtuple(
    "Work", "objs objt simplex simplex_id trial trial_id witness center counts polytope")
# EPA's polytope: vertices (Minkowski point and both witnesses) and their support ids, face
# projections of the origin, their squared norms, face vertices, face neighbours, face indices,
# the face map, the horizon (faces, edges), the recursion stack, and the multicontact scratch
Polytope = collections.namedtuple(
    "Polytope", "verts vert_ids face_proj face_dist2 face_verts face_adj face_index face_map "
                "horizon_face horizon_edge stack multicontact")

# a GJK object: one float row of OBJ_COLS columns: size[0:3], pos[3:6], mat[6:15], margin[15],
# and for meshes the first row and count of its vertices[16:18], where its hull adjacency starts
# in objt [18] and the last support vertex [19]
OBJ_COLS = 20
SIZE, POS, MAT, MARGIN, VADR, VNUM, GADR, GHINT = 0, 3, 6, 15, 16, 17, 18, 19
# support modes (objt's second column): the geom itself, its center point (sphere core), its
# segment (capsule core)
MODE_GEOM, MODE_POINT, MODE_LINE = 0, 1, 2
# mjGEOM_FLEX: a flex element, its vertices (global, six per row like a mesh's) swept by the flex
# radius size[0]; pos is its box center (GJK's first point)
FLEX = 105
NEXTREMA = 27        # mesh_extrema: hill-climb seeds for the 3x3x3 direction grid

# multicontact scratch rows (3 floats each): clipping face, its plane normals, two polygon
# buffers
# (MuJoCo sizes these by the model's largest polygon, npolygonmax; we preallocate for polygons
# of up to MC_FACEMAX vertices, e.g. MuJoCo's cone.obj's 500-gon base: a larger polygon is
# not clipped, the EPA contact stands)
MC_FACEMAX = 512  # vertices of a clipping face
MC_FACE = 0
MC_PN = MC_FACEMAX
MC_POLY = 2 * MC_FACEMAX
MC_POLYMAX = 2 * MC_FACEMAX   # a clipped polygon, as MuJoCo's 2 npolygonmax
# candidate face normals of the two geoms and edge end points (mesh multicontact)
MC_NORM1 = MC_POLY + 2 * MC_POLYMAX
MC_NORM2 = MC_NORM1 + MC_FACEMAX
MC_EDGE = MC_NORM2 + MC_FACEMAX
MC_END = MC_EDGE + MC_FACEMAX
MC_START = MC_END + MC_FACEMAX   # the start of the edge that is clipped
MC_ROWS = MC_START + 1
MC_FLOATS = 3 * MC_ROWS

# int scratch (objt read flat, from int 4, after the two objects' rows): candidate polygons
# of geoms 1 and 2, and those of up to three vertices while they are intersected
PS_IDX1 = 0
PS_IDX2 = PS_IDX1 + MC_FACEMAX
PS_TMP = PS_IDX2 + MC_FACEMAX
PS_SIZE = PS_TMP + 2 * MC_FACEMAX

# The mesh cache: the meshes' support vertices (objs rows from MESH_ROW on, six per row) and
# hull adjacencies with their hill-climb seeds (objt read flat, from MESH_INTS on) stay in the
# buffers from one pair and one step to the next, so that a mesh is copied in once, not for
# every pair it is in. Its table (objt read flat, from MESH_TABLE on): the entry count, the
# next free row, the next free int, then per entry the mesh's key (the address of its first
# vertex), its vertex count, its first row and the flat int where its adjacency starts (-1:
# none). Rows 2 and 3 hold the vertices of flex elements and height field prisms.
MESH_ROW = 4
MESH_TABLE = 4 + PS_SIZE
MESH_CAP = 128          # entries; a full table (or full buffers) starts over empty
MESH_ENTRY = 4
MESH_INTS = MESH_TABLE + 3 + MESH_CAP * MESH_ENTRY


def work_sizes(ccd_iterations, nmeshvert=0, nmesh=2):
  """(float count, int count) of the work buffers for `collide_convex_work`, with room for
  `nmesh` meshes of `nmeshvert` vertices in all in the mesh cache (`collide_mesh_work`)."""
  n = max(int(ccd_iterations), 1)
  nv = 5 + n
  nf = 6 * n
  nmeshvert, nmesh = int(nmeshvert), max(int(nmesh), 2)
  nfloat = (MESH_ROW + (nmeshvert + 5 * nmesh) // 6 + 1) * OBJ_COLS
  nfloat += 2 * 4 * 9 + 6 + 3 + nv * 9 + nf * 3 + nf + MC_FLOATS
  nint = 2 * 4 * 2 + 8 + nv * 2 + nf * 3 + nf * 3 + nf + nf + nf + nf + nf * 3
  # the objects' rows, the multicontact scratch, the mesh table, and each hull's adjacency
  # (nv + (nv + 3 nface) < 8 nv) and seeds
  nint += MESH_INTS + 8 * nmeshvert + NEXTREMA * nmesh
  return nfloat, nint
