"""Enums (values equal MuJoCo's mjt* enums) and the field tables of Model and Data.

The tables are the single source of truth: `engine/_structs.py` (the numba structref types and
their setters) is generated from them by `python -m numjoco.engine._gen`, and `engine.io`
allocates every array from them. A row is `name dtype shape...  # doc`; a shape entry is a size
name (``nq``), an int, or a product ``nu*nv``; a line starting with `#` heads a group.

Fields MuJoCo has come first, with MuJoCo's names, shapes and meaning, in the order of mjOption,
mjModel and mjData in MuJoCo's headers (an array of structs, such as mjData.contact, is one field
per member: contact_dist, contact_pos, ...). The engine's own fields follow, in groups.
tests/test_fields.py checks the order, the docs and the shapes against the `mujoco` package.
"""
import enum

import numpy as np

from numjoco.engine.collision.work import work_sizes


def _enum(name, members, doc=None, flag=False, start=0):
  """MuJoCo's enum `name`: an IntEnum of the space-separated `members` numbered from `start`
  (`NAME=value` sets a value, the next ones count on from it), or with `flag` an IntFlag whose
  members are the bits 1, 2, 4, ... in order."""
  values, value = {}, start
  for i, member in enumerate(members.split()):
    key, _, given = member.partition("=")
    value = int(given) if given else value
    values[key] = 1 << i if flag else value
    value += 1
  cls = (enum.IntFlag if flag else enum.IntEnum)(name, values, module=__name__)
  cls.__doc__ = doc or f"MuJoCo's {name}."
  return cls


def ints(enum_, members):
  """The values, as ints, of the space-separated `members` of an enum: the module-level
  constants kernels compare with (numba folds them)."""
  return tuple(int(enum_[name]) for name in members.split())


mjtJoint = _enum("mjtJoint", "FREE BALL SLIDE HINGE")
mjtGeom = _enum("mjtGeom", "PLANE HFIELD SPHERE CAPSULE ELLIPSOID CYLINDER BOX MESH SDF")
mjtIntegrator = _enum("mjtIntegrator", "EULER RK4 IMPLICIT IMPLICITFAST DISCRETE")
mjtCone = _enum("mjtCone", "PYRAMIDAL ELLIPTIC")
mjtJacobian = _enum("mjtJacobian", "DENSE SPARSE AUTO")
mjtSolver = _enum("mjtSolver", "PGS CG NEWTON")
mjtDisableBit = _enum(
    "mjtDisableBit", "CONSTRAINT EQUALITY FRICTIONLOSS LIMIT CONTACT SPRING DAMPER GRAVITY "
    "CLAMPCTRL WARMSTART FILTERPARENT ACTUATION REFSAFE SENSOR MIDPHASE EULERDAMP AUTORESET "
    "NATIVECCD ISLAND MULTICCD", flag=True)
mjtEnableBit = _enum(
    "mjtEnableBit", "OVERRIDE ENERGY FWDINV INVDISCRETE SLEEP DIAGEXACT IPC SPECULATIVE", flag=True)
mjtTrn = _enum("mjtTrn", "JOINT JOINTINPARENT SLIDERCRANK TENDON SITE BODY SO3 UNDEFINED=1000")
mjtDyn = _enum("mjtDyn", "NONE INTEGRATOR FILTER FILTEREXACT MUSCLE DCMOTOR PID USER")
mjtGain = _enum("mjtGain", "FIXED AFFINE MUSCLE DCMOTOR SO3 PID USER")
mjtBias = _enum("mjtBias", "NONE AFFINE MUSCLE DCMOTOR SO3 USER")
mjtInput = _enum("mjtInput", "POS VEL FF VOLTAGE NONE PRESSURE", flag=True,
                 doc="Actuator input signature bits (mjtInput); mjtChart values share "
                     "actuator_ctrlspec.")
mjtChart = _enum("mjtChart", "EXPMAP QUAT", start=1,
                 doc="Chart of an SO3 servo's commanded orientation (actuator_ctrlspec of "
                     "gaintype SO3).")
mjtWrap = _enum("mjtWrap", "NONE JOINT PULLEY SITE SPHERE CYLINDER")
mjtEq = _enum("mjtEq", "CONNECT WELD JOINT TENDON FLEX")
mjtConstraint = _enum(
    "mjtConstraint", "EQUALITY FRICTION_DOF FRICTION_TENDON LIMIT_JOINT LIMIT_TENDON "
    "CONTACT_FRICTIONLESS CONTACT_PYRAMIDAL CONTACT_ELLIPTIC")
mjtConstraintState = _enum("mjtConstraintState", "SATISFIED QUADRATIC LINEARNEG LINEARPOS CONE")
mjtWarning = _enum("mjtWarning", "INERTIA CONTACTFULL CNSTRFULL BADQPOS BADQVEL BADQACC BADCTRL")
mjtTimer = _enum(
    "mjtTimer", "STEP FORWARD INVERSE POSITION VELOCITY ACTUATION CONSTRAINT ADVANCE "
    "POS_KINEMATICS POS_INERTIA POS_COLLISION POS_MAKE POS_PROJECT COL_BROAD COL_NARROW",
    doc="Stage timers, as MuJoCo's mjtTimer (d.timer_duration, d.timer_number).")
mjtObj = _enum(
    "mjtObj", "UNKNOWN BODY XBODY JOINT DOF GEOM SITE CAMERA LIGHT FLEX MESH SKIN HFIELD TEXTURE "
    "MATERIAL PAIR EXCLUDE EQUALITY TENDON ACTUATOR SENSOR NUMERIC TEXT TUPLE KEY",
    doc="Object types, as MuJoCo's mjtObj (the ones `name2id` understands).")
mjtSensor = _enum(
    "mjtSensor", "TOUCH ACCELEROMETER VELOCIMETER GYRO FORCE TORQUE MAGNETOMETER RANGEFINDER "
    "CAMPROJECTION JOINTPOS JOINTVEL TENDONPOS TENDONVEL ACTUATORPOS ACTUATORVEL ACTUATORFRC "
    "JOINTACTFRC TENDONACTFRC BALLQUAT BALLANGVEL JOINTLIMITPOS JOINTLIMITVEL JOINTLIMITFRC "
    "TENDONLIMITPOS TENDONLIMITVEL TENDONLIMITFRC FRAMEPOS FRAMEQUAT FRAMEXAXIS FRAMEYAXIS "
    "FRAMEZAXIS FRAMELINVEL FRAMEANGVEL FRAMELINACC FRAMEANGACC SUBTREECOM SUBTREELINVEL "
    "SUBTREEANGMOM INSIDESITE GEOMDIST GEOMNORMAL GEOMFROMTO CONTACT E_POTENTIAL E_KINETIC CLOCK "
    "TACTILE PLUGIN USER")
mjtStage = _enum("mjtStage", "NONE POS VEL ACC")
mjtDataType = _enum("mjtDataType", "REAL POSITIVE AXIS QUATERNION")


MINVAL = 1e-15  # mjMINVAL
MAXVAL = 1e10   # mjMAXVAL
NGAIN = 10      # mjNGAIN, mjNBIAS, mjNDYN
NREF = 2        # mjNREF
NIMP = 5        # mjNIMP
NFLUID = 12     # geom_fluid row length
NSENS = 3       # mjNSENS: sensor_intprm row length
MINIMP = 0.0001   # mjMINIMP
MAXIMP = 0.9999   # mjMAXIMP
MAXCONPAIR = 50   # mjMAXCONPAIR: contacts one geom pair may produce
NSOLVER = 200     # mjNSOLVER: solver statistics kept per island
NISLAND = 20      # mjNISLAND: islands with statistics (solver_* hold NISLAND x NSOLVER)

# Sizes of a Model, all ints set at compile time: MuJoCo's, in mjModel's order, then ours:
# nJmax (room for efc_J's nonzeros) and nccd, nccdf, nccdi (GJK/EPA work; see contact_capacity).
MODEL_SIZES = (
    "nq nv nu nactuator nout na nbody noct njnt ntree nM nB nC nD ngeom nsite ncam nlight nflex "
    "nflexnode nflexvert nflexedge nflexelem nflexelemdata nflexstiffness nflexbending "
    "nflexelemedge nflexshelldata nflextexcoord nJfe nmesh nmeshvert nmeshnormal nmeshface "
    "nmeshgraph nmeshpoly nmeshpolyvert nmeshpolymap nhfield nhfielddata nmat npair nexclude neq "
    "ntendon nJten nwrap nsensor nkey nmocap nplugin npluginattr nuser_body nuser_jnt nuser_geom "
    "nuser_site nuser_cam nuser_tendon nuser_actuator nuser_sensor nplastic nJmom njmax nconmax "
    "npolygonmax nsensordata nhistory "
    "nJmax nccd nccdf nccdi"
).split()

# Option fields (mjOption): stored as small arrays (`opt_<name>`) so Python edits reach compiled
# code; `m.opt` shows them by MuJoCo's names.
OPTION_FIELDS = """
timestep f8 1            # integration time step (s)
impratio f8 1            # frictional to normal impedance ratio (elliptic cones)
tolerance f8 1           # main solver: stop below this relative cost improvement
ls_tolerance f8 1        # CG/Newton line search: relative slope tolerance
noslip_tolerance f8 1    # noslip solver: stop tolerance
ccd_tolerance f8 1       # convex collision (GJK/EPA, MPR): distance tolerance
sleep_tolerance f8 1     # velocity below which a tree may fall asleep
gravity f8 3             # gravitational acceleration, world frame
wind f8 3                # velocity of the medium, world frame (fluid forces)
magnetic f8 3            # global magnetic flux, world frame (magnetometer)
density f8 1             # density of the medium (fluid forces)
viscosity f8 1           # viscosity of the medium (fluid forces)
o_margin f8 1            # contact margin used when the OVERRIDE flag is on
o_solref f8 2            # contact solref used when the OVERRIDE flag is on
o_solimp f8 5            # contact solimp used when the OVERRIDE flag is on
o_friction f8 5          # contact friction used when the OVERRIDE flag is on
integrator i4 1          # integrator (mjtIntegrator)
cone i4 1                # friction cone (mjtCone)
jacobian i4 1            # dense or sparse Jacobian (mjtJacobian); ours is always sparse
solver i4 1              # constraint solver (mjtSolver)
iterations i4 1          # most main-solver iterations
ls_iterations i4 1       # most CG/Newton line-search iterations
noslip_iterations i4 1   # most noslip iterations (0: no noslip pass)
ccd_iterations i4 1      # most convex-collision iterations (capped at nccd)
disableflags i4 1        # mjtDisableBit flags turning standard features off
enableflags i4 1         # mjtEnableBit flags turning optional features on
disableactuator i4 1     # bit g set: actuators of group g are disabled
sdf_initpoints i4 1      # SDF collision: starting points of the gradient descent
sdf_iterations i4 1      # SDF collision: most gradient-descent iterations
"""

# Model fields (mjModel).
MODEL_FIELDS = """
# visual (MuJoCo's m.vis.map; 1-element arrays here so the compiled mouse perturbation reads them)
vis_map_stiffness f8 1             # stiffness of the mouse perturbation spring (force per length)
vis_map_stiffnessrot f8 1          # rotational stiffness of that spring (torque per rad)
# default generalized coordinates
qpos0 f8 nq                        # qpos of the model's default pose
qpos_spring f8 nq                  # reference pose of joint springs
# bodies
body_parentid i4 nbody             # parent body id (the world's is 0)
body_rootid i4 nbody               # ancestor that is a child of the world
body_weldid i4 nbody               # top ancestor welded to it (no dofs between); mocap: itself
body_mocapid i4 nbody              # row in mocap_pos/mocap_quat; -1: not a mocap body
body_jntnum i4 nbody               # number of joints
body_jntadr i4 nbody               # first joint id; -1: none
body_dofnum i4 nbody               # number of dofs
body_dofadr i4 nbody               # first dof address; -1: none
body_treeid i4 nbody               # kinematic tree id; -1: static body
body_geomnum i4 nbody              # number of geoms
body_geomadr i4 nbody              # first geom id; -1: none
body_simple u1 nbody               # 1: its block of M is diagonal; 2: diagonal with sliders only
body_sameframe u1 nbody            # inertial frame coincides with body frame (mjtSameframe)
body_pos f8 nbody 3                # position in the parent body frame
body_quat f8 nbody 4               # orientation in the parent body frame (w, x, y, z)
body_ipos f8 nbody 3               # center of mass in the body frame
body_iquat f8 nbody 4              # orientation of the principal inertia axes in the body frame
body_mass f8 nbody                 # mass of the body
body_subtreemass f8 nbody          # mass of the body and all its descendants
body_inertia f8 nbody 3            # principal moments of inertia (in the ipos/iquat frame)
body_invweight0 f8 nbody 2         # mean inverse inertia at qpos0: translation, rotation
body_gravcomp f8 nbody             # gravity compensation, as a fraction of the body's weight
body_margin f8 nbody               # largest margin + gap of the body's geoms
body_user f8 nbody nuser_body      # user data, never read by the engine
body_contype i4 nbody              # OR of the contype bits of the body's geoms
body_conaffinity i4 nbody          # OR of the conaffinity bits of the body's geoms
# octree of mesh SDFs (mjCOctree; children are ids within the mesh's block, -1: leaf)
oct_depth i4 noct                  # depth of the node in the octree
oct_child i4 noct 8                # ids of the eight children
oct_aabb f8 noct 6                 # box of the node: center, half sizes (mesh frame)
oct_coeff f8 noct 8                # signed distances at the box corners (trilinear interpolation)
# joints
jnt_type i4 njnt                   # joint type (mjtJoint)
jnt_qposadr i4 njnt                # first qpos address
jnt_dofadr i4 njnt                 # first dof (qvel) address
jnt_bodyid i4 njnt                 # body the joint moves
jnt_actuatorid i4 njnt             # actuator adding damping/armature to the joint; -1: none
jnt_group i4 njnt                  # visibility group
jnt_plasticadr i4 njnt             # address in the plastic state; -1: not plastic
jnt_limited b1 njnt                # joint has a range limit
jnt_actfrclimited b1 njnt          # total actuator force on the joint is clamped
jnt_actgravcomp b1 njnt            # gravity compensation counts as actuator force
jnt_solref f8 njnt 2               # solref of the limit constraint
jnt_solimp f8 njnt 5               # solimp of the limit constraint
jnt_pos f8 njnt 3                  # anchor in the body frame
jnt_axis f8 njnt 3                 # axis in the body frame (unit)
jnt_stiffness f8 njnt              # spring stiffness (linear term)
jnt_stiffnesspoly f8 njnt 2        # spring stiffness, quadratic and cubic terms
jnt_springyield f8 njnt            # plastic yield threshold of the spring
jnt_range f8 njnt 2                # limit range (m or rad)
jnt_actfrcrange f8 njnt 2          # range of the total actuator force
jnt_margin f8 njnt                 # limit becomes active within this distance
jnt_user f8 njnt nuser_jnt         # user data, never read by the engine
# dofs
dof_bodyid i4 nv                   # body the dof moves
dof_jntid i4 nv                    # joint of the dof
dof_parentid i4 nv                 # parent dof in the tree; -1: none
dof_treeid i4 nv                   # kinematic tree id
dof_Madr i4 nv                     # address of the dof's diagonal in the sparse inertia
dof_simplenum i4 nv                # number of simple dofs starting at this one
dof_solref f8 nv 2                 # solref of the dof's friction loss
dof_solimp f8 nv 5                 # solimp of the dof's friction loss
dof_frictionloss f8 nv             # dry friction (force or torque)
dof_armature f8 nv                 # armature inertia added to M's diagonal
dof_damping f8 nv                  # viscous damping (linear term)
dof_dampingpoly f8 nv 2            # damping, quadratic and cubic terms
dof_invweight0 f8 nv               # inverse of M's diagonal at qpos0
dof_M0 f8 nv                       # M's diagonal at qpos0
dof_length f8 nv                   # length scale: 1 for sliding, about the body size for rotation
# kinematic trees
tree_bodyadr i4 ntree              # first body id
tree_bodynum i4 ntree              # number of bodies
tree_dofadr i4 ntree               # first dof address
tree_dofnum i4 ntree               # number of dofs
tree_sleep_policy i4 ntree         # sleep policy (mjtSleepPolicy)
# geoms
geom_type i4 ngeom                 # geom type (mjtGeom)
geom_contype i4 ngeom              # contact type bits
geom_conaffinity i4 ngeom          # contact affinity bits
geom_condim i4 ngeom               # contact dimension: 1, 3, 4 or 6
geom_bodyid i4 ngeom               # body the geom belongs to
geom_dataid i4 ngeom               # mesh or height field id; -1: none
geom_matid i4 ngeom                # material id; -1: none
geom_group i4 ngeom                # visibility group
geom_priority i4 ngeom             # contact priority (the higher geom's parameters win)
geom_plugin i4 ngeom               # plugin instance of an SDF geom; -1: none
geom_sameframe u1 ngeom            # geom frame coincides with a body frame (mjtSameframe)
geom_solmix f8 ngeom               # weight of this geom's solref/solimp when mixing a pair's
geom_solref f8 ngeom 2             # contact solref
geom_solimp f8 ngeom 5             # contact solimp
geom_size f8 ngeom 3               # type-dependent size parameters
geom_aabb f8 ngeom 6               # bounding box in the geom frame: center, half sizes
geom_rbound f8 ngeom               # radius of the bounding sphere about the geom origin
geom_pos f8 ngeom 3                # position in the body frame
geom_quat f8 ngeom 4               # orientation in the body frame
geom_friction f8 ngeom 3           # friction: sliding, torsional, rolling
geom_margin f8 ngeom               # contacts are made within this distance
geom_gap f8 ngeom                  # part of the margin in which contacts exert no force
geom_surfacevel f8 ngeom 6         # surface velocity in the geom frame: linear, angular
geom_adhesion f8 ngeom             # adhesion force of the geom's contacts
geom_fluid f8 ngeom 12             # ellipsoid fluid model: flag, coefficients, added mass
geom_user f8 ngeom nuser_geom      # user data, never read by the engine
geom_rgba f4 ngeom 4               # color without a material
# sites
site_type i4 nsite                 # shape drawn (mjtGeom)
site_bodyid i4 nsite               # body the site belongs to
site_matid i4 nsite                # material id; -1: none
site_group i4 nsite                # visibility group
site_sameframe u1 nsite            # site frame coincides with a body frame (mjtSameframe)
site_size f8 nsite 3               # size of the drawn shape
site_pos f8 nsite 3                # position in the body frame
site_quat f8 nsite 4               # orientation in the body frame
site_user f8 nsite nuser_site      # user data, never read by the engine
site_rgba f4 nsite 4               # color without a material
# cameras
cam_mode i4 ncam                   # tracking mode (mjtCamLight)
cam_bodyid i4 ncam                 # body the camera is attached to
cam_targetbodyid i4 ncam           # body a targeting camera looks at; -1: none
cam_pos f8 ncam 3                  # position in the body frame
cam_quat f8 ncam 4                 # orientation in the body frame
cam_poscom0 f8 ncam 3              # world offset from the subtree com at qpos0 (tracking modes)
cam_pos0 f8 ncam 3                 # world offset from the body at qpos0 (tracking modes)
cam_mat0 f8 ncam 9                 # world orientation at qpos0 (tracking modes)
cam_projection i4 ncam             # perspective or orthographic (mjtProjection)
cam_fovy f8 ncam                   # vertical field of view (deg); orthographic: view height
cam_ipd f8 ncam                    # inter-pupillary distance (stereo)
cam_resolution i4 ncam 2           # image size in pixels: width, height
cam_sensorsize f4 ncam 2           # sensor size in length units: width, height
cam_intrinsic f4 ncam 4            # focal lengths and principal point (length units)
cam_user f8 ncam nuser_cam         # user data, never read by the engine
# lights
light_mode i4 nlight               # tracking mode (mjtCamLight)
light_bodyid i4 nlight             # body the light is attached to
light_targetbodyid i4 nlight       # body a targeting light points at; -1: none
light_type i4 nlight               # spot, directional, ... (mjtLightType)
light_castshadow b1 nlight         # light casts shadows
light_active b1 nlight             # light is on
light_pos f8 nlight 3              # position in the body frame
light_dir f8 nlight 3              # direction in the body frame
light_poscom0 f8 nlight 3          # world offset from the subtree com at qpos0 (tracking modes)
light_pos0 f8 nlight 3             # world offset from the body at qpos0 (tracking modes)
light_dir0 f8 nlight 3             # world direction at qpos0 (tracking modes)
light_attenuation f4 nlight 3      # attenuation: constant, linear, quadratic
light_cutoff f4 nlight             # spot cutoff angle (degrees)
light_exponent f4 nlight           # spot exponent
light_ambient f4 nlight 3          # ambient color
light_diffuse f4 nlight 3          # diffuse color
light_specular f4 nlight 3         # specular color
# flexes (deformables; compiled by engine/mjcf/_flex.py, moved by engine/flex.py)
flex_contype i4 nflex              # contact type bits
flex_conaffinity i4 nflex          # contact affinity bits
flex_condim i4 nflex               # contact dimension: 1, 3, 4 or 6
flex_priority i4 nflex             # contact priority
flex_solmix f8 nflex               # weight of this flex's solref/solimp when mixing a pair's
flex_solref f8 nflex 2             # contact solref
flex_solimp f8 nflex 5             # contact solimp
flex_friction f8 nflex 3           # friction: sliding, torsional, rolling
flex_margin f8 nflex               # contacts are made within this distance
flex_gap f8 nflex                  # part of the margin in which contacts exert no force
flex_selfcollide i4 nflex          # self-collision mode (mjtFlexSelf)
flex_activelayers i4 nflex         # element layers from the surface that collide (3D only)
flex_passive i4 nflex              # collisions with other passive objects enabled
flex_dim i4 nflex                  # 1: lines, 2: triangles, 3: tetrahedra
flex_matid i4 nflexelem            # material id; -1: none
flex_group i4 nflex                # visibility group
flex_interp i4 nflex               # 0: vertices are bodies; 1: vertices interpolate nodes
flex_cellnum i4 nflex 3            # cells per dimension of an interpolated flex
flex_nodeadr i4 nflex              # first node address
flex_nodenum i4 nflex              # number of nodes
flex_vertadr i4 nflex              # first vertex address
flex_vertnum i4 nflex              # number of vertices
flex_edgeadr i4 nflex              # first edge address
flex_edgenum i4 nflex              # number of edges
flex_elemadr i4 nflex              # first element address
flex_elemnum i4 nflex              # number of elements
flex_elemdataadr i4 nflex          # first address in flex_elem
flex_stiffnessadr i4 nflex         # first address in flex_stiffness
flex_elemedgeadr i4 nflex          # first address in flex_elemedge
flex_bendingadr i4 nflex           # first address in flex_bending
flex_plasticadr i4 nflex           # address in the plastic state; -1: elastic
flex_plasticmode i4 nflex          # plastic bits: 1 bending, 2 stretching
flex_shellnum i4 nflex             # number of shell fragments
flex_shelldataadr i4 nflex         # first address in flex_shell
flex_texcoordadr i4 nflex          # first address in flex_texcoord; -1: none
flex_nodebodyid i4 nflexnode       # body of each node
flex_vertbodyid i4 nflexvert       # body of each vertex
flex_vertcell i4 nflexvert         # cell holding the vertex; -1: none
flex_edge i4 nflexedge 2           # the edge's two vertex ids (within the flex)
flex_edgeflap i4 nflexedge 2       # the two vertices opposite the edge (triangles only)
flex_elem i4 nflexelemdata         # vertex ids of each element (dim + 1 each)
flex_elemtexcoord i4 nflexelemdata # texture coordinate ids of each element's vertices
flex_elemedge i4 nflexelemedge     # edge ids of each element
flex_elemlayer i4 nflexelem        # distance of the element from the surface, in layers (3D only)
flex_shell i4 nflexshelldata       # vertex ids of each shell fragment (dim per fragment)
flex_vert f8 nflexvert 3           # vertex positions in their body frames
flex_vert0 f8 nflexvert 3          # vertex positions at qpos0, scaled to [0, 1]^dim
flex_node f8 nflexnode 3           # node positions in their body frames
flex_node0 f8 nflexnode 3          # world node positions at qpos0
flexedge_length0 f8 nflexedge      # edge length at qpos0
flexedge_invweight0 f8 nflexedge   # inverse weight of the edge at qpos0
flex_radius f8 nflex               # radius around the elements (collision and drawing)
flex_size f8 nflex 3               # half sizes of the vertices' bounding box at qpos0
flex_stiffness f8 nflexstiffness   # finite-element stiffness data
flex_bending f8 nflexbending       # bending stiffness data
flex_damping f8 nflex              # Rayleigh damping coefficient
flex_yield f8 nflex 2              # yield strain: stretching, bending; 0: elastic
flex_edgestiffness f8 nflex        # edge spring stiffness
flex_edgedamping f8 nflex          # edge damping
flex_edgeequality i4 nflex         # 0: none, 1: edge-length equality, 3: strain equality
flex_rigid b1 nflex                # all vertices in one body
flexedge_rigid b1 nflexedge        # both vertices of the edge in one body
flex_centered b1 nflex             # every vertex at its body's origin
flex_flatskin b1 nflex             # draw the skin with flat shading
flex_bvhadr i4 nflex               # address of the bounding volume hierarchy root; -1: none
flex_bvhnum i4 nflex               # number of bounding volumes
flexedge_J_rownnz i4 nflexedge     # nonzeros in each edge Jacobian row
flexedge_J_rowadr i4 nflexedge     # start of each row in flexedge_J_colind
flexedge_J_colind i4 nJfe          # dof of each nonzero of the edge Jacobian
flex_rgba f4 nflex 4               # color without a material
flex_texcoord f4 nflextexcoord 2   # texture coordinates of the vertices
# meshes (ours: the builtin wedge and plate meshes have three mesh_normal rows per vertex,
# normal and two tangents; polygons are numbered by their first hull triangle)
mesh_vertadr i4 nmesh              # first row in mesh_vert
mesh_vertnum i4 nmesh              # number of vertices
mesh_faceadr i4 nmesh              # first row in mesh_face
mesh_facenum i4 nmesh              # number of triangles
mesh_octadr i4 nmesh               # first octree node (oct_* row)
mesh_octnum i4 nmesh               # number of octree nodes
mesh_normaladr i4 nmesh            # first row in mesh_normal
mesh_normalnum i4 nmesh            # number of normals
mesh_graphadr i4 nmesh             # address of the hull graph in mesh_graph; -1: none
mesh_extrema i4 nmesh 27           # hull vertex furthest along each of the 3x3x3 grid directions
mesh_vert f4 nmeshvert 3           # vertex positions in the mesh frame
mesh_normal f4 nmeshnormal 3       # vertex normals in the mesh frame
mesh_face i4 nmeshface 3           # vertex ids of each triangle
mesh_graph i4 nmeshgraph           # convex hull graph (vertex count, face count, adjacency)
mesh_scale f8 nmesh 3              # scale applied to the asset's vertices
mesh_pos f8 nmesh 3                # translation applied to the asset's vertices
mesh_quat f8 nmesh 4               # rotation applied to the asset's vertices
mesh_polynum i4 nmesh              # number of polygons (hull triangles merged where coplanar)
mesh_polyadr i4 nmesh              # first polygon address
mesh_polynormal f8 nmeshpoly 3     # polygon normals
mesh_polyvertadr i4 nmeshpoly      # first address of the polygon's vertices in mesh_polyvert
mesh_polyvertnum i4 nmeshpoly      # number of vertices of the polygon
mesh_polyvert i4 nmeshpolyvert     # vertex ids of the polygons
mesh_polymapadr i4 nmeshvert       # first address of the vertex's polygons in mesh_polymap
mesh_polymapnum i4 nmeshvert       # number of polygons holding the vertex
mesh_polymap i4 nmeshpolymap       # polygons holding each vertex, ascending
# height fields
hfield_size f8 nhfield 4           # half sizes x, y; top z; bottom depth
hfield_nrow i4 nhfield             # number of grid rows
hfield_ncol i4 nhfield             # number of grid columns
hfield_adr i4 nhfield              # first address in hfield_data
hfield_data f4 nhfielddata         # elevations, scaled to [0, 1]
# materials
mat_emission f4 nmat               # emission, as a multiple of the color
mat_specular f4 nmat               # specular reflection, as a multiple of white
mat_shininess f4 nmat              # shininess, 0 to 1
mat_reflectance f4 nmat            # reflectance; 0: none
mat_rgba f4 nmat 4                 # color and transparency
# predefined geom pairs
pair_dim i4 npair                  # contact dimension: 1, 3, 4 or 6
pair_geom1 i4 npair                # first geom id
pair_geom2 i4 npair                # second geom id
pair_signature i4 npair            # body1 << 16 + body2
pair_solref f8 npair 2             # solref along the normal
pair_solreffriction f8 npair 2     # solref along the friction directions
pair_solimp f8 npair 5             # contact solimp
pair_margin f8 npair               # contacts are made within this distance
pair_gap f8 npair                  # part of the margin in which contacts exert no force
pair_adhesion f8 npair             # adhesion force of the pair's contacts
pair_friction f8 npair 5           # friction: two tangents, torsion, two rolling
# excluded body pairs
exclude_signature i4 nexclude      # body1 << 16 + body2
# equality constraints
eq_type i4 neq                     # constraint type (mjtEq)
eq_obj1id i4 neq                   # id of the first object
eq_obj2id i4 neq                   # id of the second object; -1: none (world or unused)
eq_objtype i4 neq                  # type of both objects (mjtObj)
eq_active0 b1 neq                  # active at reset
eq_solref f8 neq 2                 # constraint solref
eq_solimp f8 neq 5                 # constraint solimp
eq_data f8 neq 12                  # type-dependent data: anchors, relative pose, polynomial
# tendons
tendon_type i4 ntendon             # fixed or spatial (mjtTendon)
tendon_adr i4 ntendon              # first wrap object address
tendon_num i4 ntendon              # number of wrap objects in the path
tendon_actuatorid i4 ntendon       # actuator adding damping/armature to the tendon; -1: none
tendon_plasticadr i4 ntendon       # address in the plastic state; -1: not plastic
tendon_treenum i4 ntendon          # number of kinematic trees the path crosses
tendon_treeid i4 ntendon 2         # first two trees the path crosses
ten_J_rownnz i4 ntendon            # nonzeros in each tendon Jacobian row
ten_J_rowadr i4 ntendon            # start of each row in ten_J_colind
ten_J_colind i4 nJten              # dof of each nonzero of the tendon Jacobian
tendon_limited b1 ntendon          # tendon has a length limit
tendon_actfrclimited b1 ntendon    # total actuator force on the tendon is clamped
tendon_width f8 ntendon            # drawn width
tendon_solref_lim f8 ntendon 2     # solref of the limit constraint
tendon_solimp_lim f8 ntendon 5     # solimp of the limit constraint
tendon_solref_fri f8 ntendon 2     # solref of the friction loss
tendon_solimp_fri f8 ntendon 5     # solimp of the friction loss
tendon_range f8 ntendon 2          # length limit range
tendon_actfrcrange f8 ntendon 2    # range of the total actuator force
tendon_margin f8 ntendon           # limit becomes active within this distance
tendon_stiffness f8 ntendon        # spring stiffness (linear term)
tendon_stiffnesspoly f8 ntendon 2  # spring stiffness, quadratic and cubic terms
tendon_damping f8 ntendon          # viscous damping (linear term)
tendon_dampingpoly f8 ntendon 2    # damping, quadratic and cubic terms
tendon_armature f8 ntendon         # inertia of the tendon's length velocity
tendon_frictionloss f8 ntendon     # dry friction
tendon_lengthspring f8 ntendon 2   # spring rest length range (no force inside it)
tendon_springyield f8 ntendon      # plastic yield threshold of the spring
tendon_length0 f8 ntendon          # length at qpos0
tendon_invweight0 f8 ntendon       # inverse weight at qpos0
tendon_user f8 ntendon nuser_tendon # user data, never read by the engine
tendon_rgba f4 ntendon 4           # color without a material
# tendon wrap objects
wrap_type i4 nwrap                 # object type (mjtWrap)
wrap_objid i4 nwrap                # id of the geom, site or joint
wrap_prm f8 nwrap                  # pulley divisor, joint coefficient, or side site id
# actuators
actuator_trntype i4 nactuator      # transmission type (mjtTrn)
actuator_dyntype i4 nactuator      # activation dynamics (mjtDyn)
actuator_gaintype i4 nactuator     # gain type (mjtGain)
actuator_biastype i4 nactuator     # bias type (mjtBias)
actuator_ctrladr i4 nactuator      # first control address
actuator_ctrlnum i4 nactuator      # number of controls
actuator_ctrlspec i4 nactuator     # input signature (mjtInput bits; mjtChart for SO3 gains)
actuator_outadr i4 nactuator       # first force output address
actuator_outnum i4 nactuator       # number of force outputs (from the transmission)
actuator_actadr i4 nactuator       # first activation address; -1: stateless
actuator_actnum i4 nactuator       # number of activations
actuator_trnid i4 nactuator 2      # transmission target ids: joint, tendon, site (and reference)
actuator_cranklength f8 nactuator  # rod length of a slider-crank
actuator_dynprm f8 nactuator 10    # activation dynamics parameters
actuator_gainprm f8 nactuator 10   # gain parameters
actuator_biasprm f8 nactuator 10   # bias parameters
actuator_actlimited b1 nactuator   # activation is clamped
actuator_actrange f8 nactuator 2   # activation range
actuator_actearly b1 nactuator     # force uses the next step's activation
actuator_history i4 nactuator 2    # control history: samples kept, interpolation order
actuator_historyadr i4 nactuator   # address in the history buffer; -1: none
actuator_delay f8 nactuator        # control delay (s); 0: none
actuator_damping f8 nactuator      # damping added to the target (linear term)
actuator_dampingpoly f8 nactuator 2 # damping added to the target, quadratic and cubic terms
actuator_armature f8 nactuator     # armature added to the target joint or tendon
actuator_group i4 nactuator        # visibility group (and disableactuator bit)
actuator_user f8 nactuator nuser_actuator # user data, never read by the engine
actuator_plugin i4 nactuator       # plugin instance driving it (mujoco.pid); -1: none
actuator_forcelimited b1 nactuator # force is clamped
actuator_forcerange f8 nactuator 2 # force range
actuator_ctrllimited b1 nu         # control is clamped
actuator_ctrlrange f8 nu 2         # control range
actuator_gear f8 nout 6            # transmission gear (length scale and force scale)
actuator_acc0 f8 nout              # acceleration norm from a unit force at qpos0
actuator_length0 f8 nout           # length at qpos0
actuator_lengthrange f8 nout 2     # feasible length range
# sensors
sensor_type i4 nsensor             # sensor type (mjtSensor)
sensor_datatype i4 nsensor         # kind of value (mjtDataType)
sensor_needstage i4 nsensor        # stage that computes it (mjtStage)
sensor_objtype i4 nsensor          # type of the sensed object (mjtObj)
sensor_objid i4 nsensor            # id of the sensed object
sensor_reftype i4 nsensor          # type of the reference frame object (mjtObj)
sensor_refid i4 nsensor            # id of the reference frame object; -1: world frame
sensor_intprm i4 nsensor 3         # integer parameters
sensor_dim i4 nsensor              # number of values
sensor_adr i4 nsensor              # address in sensordata
sensor_cutoff f8 nsensor           # clamp of real and positive values; 0: none
sensor_noise f8 nsensor            # noise standard deviation, for the user (the engine adds none)
sensor_history i4 nsensor 2        # value history: samples kept, interpolation order
sensor_historyadr i4 nsensor       # address in the history buffer; -1: none
sensor_delay f8 nsensor            # delay (s); 0: none
sensor_interval f8 nsensor 2       # sampling period and phase (s)
sensor_user f8 nsensor nuser_sensor # user data, never read by the engine
sensor_plugin i4 nsensor           # plugin instance computing it; -1: none
# plugin instances
plugin i4 nplugin                  # registry slot of the plugin in MuJoCo's wheel (parity only)
plugin_stateadr i4 nplugin         # first address in the plugin state
plugin_statenum i4 nplugin         # number of plugin state values
plugin_attr u1 npluginattr         # configuration attributes of all instances (text)
plugin_attradr i4 nplugin          # first address of the instance's attributes
# keyframes
key_time f8 nkey                   # simulation time
key_qpos f8 nkey nq                # joint positions
key_qvel f8 nkey nv                # joint velocities
key_act f8 nkey na                 # actuator activations
key_mpos f8 nkey nmocap*3          # mocap body positions
key_mquat f8 nkey nmocap*4         # mocap body orientations
key_ctrl f8 nkey nu                # controls of the keyframe
key_plastic f8 nkey nplastic       # plastic state
# sparse structures (rows of the body-dof, reduced inertia and full dof-dof patterns)
B_rownnz i4 nbody                  # body-dof: nonzeros of each body's row
B_rowadr i4 nbody                  # body-dof: start of each row
B_colind i4 nB                     # body-dof: dof of each nonzero
M_rownnz i4 nv                     # inertia M (lower triangle): nonzeros of each row
M_rowadr i4 nv                     # inertia M: start of each row
M_colind i4 nC                     # inertia M: column of each nonzero
mapM2M i4 nC                       # index of each M entry in MuJoCo's legacy qM layout
D_rownnz i4 nv                     # full dof-dof pattern: nonzeros of each row
D_rowadr i4 nv                     # full dof-dof pattern: start of each row
D_diag i4 nv                       # full dof-dof pattern: address of each diagonal entry
D_colind i4 nD                     # full dof-dof pattern: column of each nonzero
mapM2D i4 nD                       # index in M of each full-pattern entry
mapD2M i4 nC                       # index in the full pattern of each M entry
# ours only: plugin kinds and parameters the engine's SDF, sensor and PID code read
plugin_kind i4 nplugin             # which first-party plugin (engine/mjcf/_plugin.py's kinds)
plugin_param f8 nplugin 6          # the plugin's numeric attributes, defaults filled
actuator_pluginprm f8 nactuator 5  # mujoco.pid: kp, ki, kd, integral clamp, slew limit (-1: none)
# ours only: compile-time spring-damper, turned into jnt_stiffness/dof_damping by set_const
jnt_springdamper f8 njnt 2         # joint springdamper: time constant, damping ratio
"""

# Data fields (mjData); sizes are Model sizes.
DATA_FIELDS = """
# solver statistics (MuJoCo's mjSolverStat array, one field each: island-major, NISLAND x NSOLVER)
solver_improvement f8 4000         # cost reduction of each iteration, scaled by 1/trace(M)
solver_gradient f8 4000            # gradient norm of each iteration (primal solvers)
solver_lineslope f8 4000           # line-search slope of each iteration
solver_nactive i4 4000             # active constraints after each iteration
solver_nchange i4 4000             # constraint state changes in each iteration
solver_neval i4 4000               # cost evaluations in each line search
solver_nupdate i4 4000             # Cholesky updates in each line search
solver_niter i4 20                 # iterations of each island's solve
solver_fwdinv f8 2                 # forward-inverse mismatch: qfrc, efc (fwdinv flag)
# warnings (MuJoCo's mjWarningStat array, one field each, indexed by mjtWarning)
warning_lastinfo i4 7              # info of the warning's last occurrence
warning_number i4 7                # times the warning was raised
# stage timers (MuJoCo's mjTimerStat array, one field each, indexed by mjtTimer): kept while
# timer_on is set (MuJoCo: while mjcb_time is), in CPU cycles (engine/timer.py converts them)
timer_duration f8 15               # cycles spent in the stage
timer_number i4 15                 # times the stage ran
# variable sizes (1-element arrays here so compiled code can write them; Data shows numbers)
ncon i4 1                          # number of contacts
ne i4 1                            # number of equality constraint rows
nf i4 1                            # number of friction loss rows
nl i4 1                            # number of limit rows
nefc i4 1                          # number of constraint rows
nisland i4 1                       # number of constraint islands
nidof i4 1                         # number of dofs in islands
ntree_awake i4 1                   # number of awake trees
nbody_awake i4 1                   # number of awake and static bodies
nparent_awake i4 1                 # number of bodies whose parent is awake or static
nv_awake i4 1                      # number of awake dofs
# global properties
time f8 1                          # simulation time (s)
energy f8 2                        # potential and kinetic energy
# state
qpos f8 nq                         # joint positions
qvel f8 nv                         # joint velocities
act f8 na                          # actuator activations
history f8 nhistory                # ring buffers of delayed controls and sensors (history.py)
plastic f8 nplastic                # plastic state: spring references of joints, tendons, flexes
qacc_warmstart f8 nv               # acceleration the next solve starts from
# control
ctrl f8 nu                         # controls of the actuators
qfrc_applied f8 nv                 # applied generalized force
xfrc_applied f8 nbody 6            # applied world force and torque at each body's com
eq_active b1 neq                   # equality constraint is on
# mocap bodies
mocap_pos f8 nmocap 3              # world positions
mocap_quat f8 nmocap 4             # world orientations
# dynamics
qacc f8 nv                         # joint accelerations
act_dot f8 na                      # time derivative of act
# sensors
sensordata f8 nsensordata          # sensor values
# sleep state
tree_asleep i4 ntree               # <0: awake; >=0: next tree in its cycle of sleeping trees
# position dependent: kinematics
xpos f8 nbody 3                    # world position of the body frame
xquat f8 nbody 4                   # world orientation of the body frame
xmat f8 nbody 9                    # world rotation matrix of the body frame
xipos f8 nbody 3                   # world position of the body's com
xiquat f8 nbody 4                  # world orientation of the principal inertia axes
ximat f8 nbody 9                   # world rotation matrix of the principal inertia axes
xanchor f8 njnt 3                  # world position of the joint anchor
xaxis f8 njnt 3                    # world joint axis
geom_xpos f8 ngeom 3               # world geom position
geom_xquat f8 ngeom 4              # world geom orientation
geom_xmat f8 ngeom 9               # world geom rotation matrix
site_xpos f8 nsite 3               # world site position
site_xquat f8 nsite 4              # world site orientation
site_xmat f8 nsite 9               # world site rotation matrix
cam_xpos f8 ncam 3                 # world camera position
cam_xmat f8 ncam 9                 # world camera rotation matrix
light_xpos f8 nlight 3             # world light position
light_xdir f8 nlight 3             # world light direction
# position dependent: com-based quantities
subtree_com f8 nbody 3             # world com of each subtree
cdof f8 nv 6                       # motion axis of each dof about the subtree com (rot, lin)
cinert f8 nbody 10                 # body inertia and mass about the subtree com
# position dependent: flexes
flexvert_xpos f8 nflexvert 3       # world vertex positions
flexelem_aabb f8 nflexelem 6       # element bounding boxes: center, half sizes
flexedge_J f8 nJfe                 # edge Jacobian nonzeros (flexedge_J_* layout)
flexedge_length f8 nflexedge       # edge lengths
# position dependent: tendons
ten_wrapadr i4 ntendon             # first address of the tendon's path in wrap_obj/wrap_xpos
ten_wrapnum i4 ntendon             # number of points in the tendon's path
ten_J f8 nJten                     # tendon Jacobian nonzeros (ten_J_* layout)
ten_length f8 ntendon              # tendon lengths
wrap_obj i4 nwrap 2                # geom id of each path point; -1: site, -2: pulley
wrap_xpos f8 nwrap 6               # world path points, two per wrap object
# position dependent: transmissions
actuator_length f8 nout            # actuator lengths, one per force output
moment_rownnz i4 nout              # nonzeros of each actuator_moment row
moment_rowadr i4 nout              # start of each row in moment_colind
moment_colind i4 nJmom             # dof of each nonzero of actuator_moment
actuator_moment f8 nJmom           # actuator moment arms (sparse rows)
# position dependent: inertia
crb f8 nbody 10                    # composite rigid-body inertia about the subtree com
M f8 nC                            # joint-space inertia (sparse, M_* layout)
qLD f8 nC                          # L'DL factor of M (sparse)
qLDiagInv f8 nv                    # 1 / diag(D) of the factor
# position dependent: sleep
tree_awake i4 ntree                # 1: tree awake, 0: asleep
body_awake i4 nbody                # body sleep state (mjtSleepState)
body_awake_ind i4 nbody            # ids of the awake and static bodies
parent_awake_ind i4 nbody          # ids of the bodies whose parent is awake or static
dof_awake_ind i4 nv                # ids of the awake dofs
# velocity dependent
flexedge_velocity f8 nflexedge     # flex edge length velocities
ten_velocity f8 ntendon            # tendon length velocities
actuator_velocity f8 nout          # actuator velocities, one per force output
cvel f8 nbody 6                    # body velocity about the subtree com (rotation, translation)
cdof_dot f8 nv 6                   # time derivative of cdof
qfrc_bias f8 nv                    # Coriolis, centrifugal and gravity force C(qpos, qvel)
qfrc_spring f8 nv                  # passive spring force
qfrc_damper f8 nv                  # passive damper force
qfrc_gravcomp f8 nv                # gravity compensation force
qfrc_fluid f8 nv                   # fluid force
qfrc_adhesion f8 nv                # contact adhesion force
qfrc_passive f8 nv                 # total passive force
subtree_linvel f8 nbody 3          # linear velocity of the subtree com
subtree_angmom f8 nbody 3          # angular momentum of the subtree about its com
qH f8 nC                           # L'DL factor of the implicit integrators' modified M
qHDiagInv f8 nv                    # 1 / diag(D) of qH
qDeriv f8 nD                       # d(passive + actuator - bias force)/d qvel (D_* layout)
qLU f8 nD                          # sparse LU factor of M - h qDeriv
# acceleration dependent
actuator_force f8 nout             # actuator force in actuation space
qfrc_actuator f8 nv                # actuator force in joint space
qfrc_smooth f8 nv                  # net force without constraints
qacc_smooth f8 nv                  # acceleration without constraints
qfrc_constraint f8 nv              # constraint force
qfrc_inverse f8 nv                 # net external force found by inverse dynamics
cacc f8 nbody 6                    # body acceleration about the subtree com (rotation, translation)
cfrc_int f8 nbody 6                # interaction force with the parent, about the subtree com
cfrc_ext f8 nbody 6                # external force on the body, about the subtree com
# contacts (MuJoCo's mjContact array, one field each; nconmax rows, the first ncon valid)
contact_dist f8 nconmax            # distance between the surfaces; negative: penetration
contact_pos f8 nconmax 3           # world contact point, midway between the surfaces
contact_frame f8 nconmax 9         # frame rows: normal (geom 1 to geom 2), two tangents
contact_includemargin f8 nconmax   # distance below which the contact exerts force
contact_friction f8 nconmax 5      # friction: two tangents, torsion, two rolling
contact_solref f8 nconmax 2        # solref along the normal
contact_solreffriction f8 nconmax 2 # solref along the friction directions
contact_solimp f8 nconmax 5        # solimp of the contact
contact_adhesion f8 nconmax        # adhesion force along the normal
contact_surfacevel f8 nconmax 3    # relative surface velocity: two tangents, spin
contact_mu f8 nconmax              # friction of the regularized cone
contact_H f8 nconmax 36            # cone Hessian (elliptic cones)
contact_dim i4 nconmax             # contact dimension: 1, 3, 4 or 6
contact_geom1 i4 nconmax           # first geom id (also in contact_geom)
contact_geom2 i4 nconmax           # second geom id (also in contact_geom)
contact_geom i4 nconmax 2          # geom ids; -1: flex
contact_flex i4 nconmax 2          # flex ids; -1: geom
contact_elem i4 nconmax 2          # flex element ids; -1: geom or vertex
contact_vert i4 nconmax 2          # flex vertex ids; -1: geom or element
contact_exclude i4 nconmax         # 0: included, 1: in the gap, 2: fused, 3: no dofs, 4: passive
contact_efc_address i4 nconmax     # first constraint row; -1: none
# constraint rows (njmax rows and nJmax nonzeros here, the first nefc rows valid)
efc_type i4 njmax                  # row type (mjtConstraint)
efc_id i4 njmax                    # id of the object of that type
efc_J_rownnz i4 njmax              # nonzeros of each Jacobian row
efc_J_rowadr i4 njmax              # start of each row in efc_J_colind
efc_J_colind i4 nJmax              # dof of each Jacobian nonzero
efc_J f8 nJmax                     # constraint Jacobian nonzeros
efc_pos f8 njmax                   # constraint violation (equality, contact distance)
efc_margin f8 njmax                # contact margin of the row
efc_frictionloss f8 njmax          # friction loss of the row
efc_diagA f8 njmax                 # diagonal of J M^-1 J' (approximate or exact)
efc_KBIP f8 njmax 4                # stiffness, damping, impedance and its derivative
efc_D f8 njmax                     # constraint mass
efc_R f8 njmax                     # regularizer (inverse constraint mass)
# islands (ntree rows here where MuJoCo has nisland, the first nisland valid)
tree_island i4 ntree               # island of the tree; -1: none
island_ntree i4 ntree              # number of trees in the island
island_itreeadr i4 ntree           # first address of the island in map_itree2tree
map_itree2tree i4 ntree            # tree of each island-ordered tree slot
dof_island i4 nv                   # island of the dof; -1: none
island_nv i4 ntree                 # number of dofs in the island
island_idofadr i4 ntree            # first island-ordered dof of the island
island_dofadr i4 ntree             # first dof of the island
map_dof2idof i4 nv                 # island-ordered slot of each dof
map_idof2dof i4 nv                 # dof of each island-ordered slot; slots >= nidof: unconstrained
ifrc_smooth f8 nv                  # qfrc_smooth in island order
iacc_smooth f8 nv                  # qacc_smooth in island order
iacc f8 nv                         # qacc in island order
efc_island i4 njmax                # island of each constraint row
island_ne i4 ntree                 # equality rows of the island
island_nf i4 ntree                 # friction rows of the island
island_nefc i4 ntree               # constraint rows of the island
island_iefcadr i4 ntree            # first island-ordered row of the island
map_efc2iefc i4 njmax              # island-ordered slot of each row
map_iefc2efc i4 njmax              # row of each island-ordered slot
iefc_type i4 njmax                 # efc_type in island order
iefc_id i4 njmax                   # efc_id in island order
iefc_frictionloss f8 njmax         # efc_frictionloss in island order
iefc_D f8 njmax                    # efc_D in island order
iefc_R f8 njmax                    # efc_R in island order
# constraint rows, velocity and acceleration dependent
efc_vel f8 njmax                   # row velocity J qvel
efc_aref f8 njmax                  # reference acceleration of the row
efc_b f8 njmax                     # linear cost term J qacc_smooth - aref
iefc_aref f8 njmax                 # efc_aref in island order
iefc_state i4 njmax                # efc_state in island order
iefc_force f8 njmax                # efc_force in island order
efc_state i4 njmax                 # row state (mjtConstraintState)
efc_force f8 njmax                 # row force
ifrc_constraint f8 nv              # qfrc_constraint in island order
# ours only: mouse perturbation (mjvPerturb's reference kept in Data; engine/perturb.py)
xfrc_perturb f8 nbody 6            # perturbation spring wrench, added to xfrc_applied by the step
pert_select i4 1                   # perturbed body; 0: none
pert_active i4 1                   # mjtPertBit: 1 translate, 2 rotate
pert_localpos f8 3                 # grab point in the body frame
pert_refpos f8 3                   # reference position of the body's com
pert_refquat f8 4                  # reference orientation of the body's inertial frame
pert_refselpos f8 3                # reference position of the grab point
pert_localmass f8 1                # effective mass at the grab point
# ours only: integrator work (engine/step.py, engine/discrete.py)
rk4_qpos f8 nq                     # RK4: qpos at the step's start
rk4_qvel f8 nv                     # RK4: qvel at the step's start
rk4_act f8 na                      # RK4: act at the step's start
rk4_dqvel f8 4 nv                  # RK4: qvel of each stage
rk4_dqacc f8 4 nv                  # RK4: qacc of each stage
rk4_dact f8 4 na                   # RK4: act_dot of each stage
rk4_actstate f8 2 nout             # RK4: actuator_length and actuator_velocity kept across stages
rk4_ten_length f8 ntendon          # RK4: ten_length kept across stages
rk4_ten_J f8 nJten                 # RK4: ten_J kept across stages
rk4_time f8 1                      # RK4: time at the step's start
sleep_qacc f8 nv                   # qacc the step keeps when trees fall asleep mid-step
qMhat f8 nC                        # discrete integrator: M + h D + h^2 K (joint terms, M_* layout)
qLDhat f8 nC                       # discrete integrator: L'DL factor of qMhat
qLDhatDiagInv f8 nv                # discrete integrator: 1 / diag(D) of qLDhat
qfrc_hat f8 nv                     # discrete integrator: right-hand side qfrc_smooth - h K qvel
ten_mhat f8 ntendon                # discrete integrator: coupling weight h D + h^2 K of each tendon
actuator_mhat f8 nout              # discrete integrator: coupling weight of each actuator output
discrete_coupled i4 1              # discrete integrator: 1 when any coupling weight is nonzero
dof_mhat f8 nv                     # discrete integrator: diagonal of the metric with the couplings
# ours only: delayed sensors
history_sensordata f8 nsensordata  # RK4: delayed sensors sampled from the step's start state
# ours only: scratch of the smooth stages (engine/smooth.py, passive.py, actuation.py)
scratch_nv f8 8 nv                 # vectors of length nv
scratch_small f8 16                # small vectors (polynomials, quaternions)
ctrl_clamped f8 nu                 # controls clamped to ctrlrange (all zero if any is not finite)
scratch_nbody f8 4 nbody 6         # per-body 6-vectors (velocities, accelerations, forces, flags)
ten_wpnt f8 12                     # path points of the spatial tendon being computed
trn_jac f8 13 nv                   # Jacobian rows of the transmission being computed
ivec_nv i4 2 nv                    # integer vectors of length nv (column indices)
# ours only: collision work (engine/collision/driver.py)
col_dist f8 50                     # distances of one geom pair's contacts (up to mjMAXCONPAIR)
col_pos f8 50 3                    # positions of one geom pair's contacts
col_frame f8 50 9                  # frames of one geom pair's contacts
col_fbuf f8 nccdf                  # GJK/EPA float work (sized for nccd iterations)
col_ibuf i8 nccdi                  # GJK/EPA integer work
col_body i8 2 nbody                # broadphase: bodies that can collide, then their sweep order
col_low f8 nbody                   # broadphase: each such body's box start on the sweep axis
col_pair i8 4*nbody                # broadphase: candidate body pairs (a bigger copy when full)
col_geombox f8 ngeom 6             # midphase: each geom's world box grown by its margin and gap
col_flexf f8 48                    # flex pairs: two elements' capsules (pos, mat, size), a geom row
col_flexi i8 8                     # flex pairs: two elements' vertex ids
# ours only: constraint work (engine/constraint.py)
cnstr_jac f8 4 6 nv                # Jacobian buffers of the row being made
cnstr_vec f8 nv                    # values of a sparse row being made
cnstr_row f8 2 6                   # position and margin of each row of the constraint being made
# ours only: solver work (engine/solver.py, engine/solver_pgs.py)
solver_L f8 nv nv                  # Newton Hessian factor
solver_Lcone f8 nv nv              # Newton Hessian factor with the cone terms
solver_LTJ f8 6 nv                 # rows of L^-T J' for cone updates
solver_nv f8 13 nv                 # vectors of length nv
solver_efc f8 8 njmax              # vectors over constraint rows
solver_quad f8 3*njmax             # line-search polynomial of each row
solver_int i4 2 njmax              # integer vectors over constraint rows (old states, row trees)
solver_Y f8 nJmax                  # PGS: Y = D^-1/2 L^-T J' nonzeros
solver_ARblk f8 njmax 6            # PGS: diagonal blocks of AR
solver_scratch f8 256              # small vectors
solver_mat f8 6 6 6                # 6 x 6 matrices
solver_Lpat i4 3 nv*nv             # sparsity patterns of the Hessian factor
solver_Lnnz i4 8 nv                # pattern row counts, fill-reducing order and its inverse
solver_tadj u8 1036                # tree adjacency bit rows for the fill-reducing order
solver_Hpat u1 2 nv*nv             # Hessian patterns before and after a state change
solver_Ynnz i4 njmax               # PGS: nonzeros of each solver_Y row
solver_Yadr i4 njmax               # PGS: start of each solver_Y row
solver_Ycol i4 nJmax               # PGS: dof of each solver_Y nonzero
# ours only: island work (engine/island.py)
iefc_J_rownnz i4 njmax             # efc_J_rownnz in island order
iefc_J_rowadr i4 njmax             # start of each island-ordered row in iefc_J_colind
iefc_J_colind i4 nJmax             # island-ordered dof of each nonzero
iefc_J f8 nJmax                    # efc_J in island order (columns over island dofs)
island_int i4 2 ntree              # union-find parents and counters
# ours only: flex work (engine/flex.py)
flex_jacdif f8 nv 3                # difference of an edge's end-point Jacobians
flex_vertforce f8 nflexvert 6      # per-vertex spring and damper forces
# ours only: the stage timers' switch (MuJoCo's is mjcb_time)
timer_on u1 1                      # 1: the stages time themselves (engine/timer.py)
"""


_DTYPES = {"f8": np.float64, "f4": np.float32, "i4": np.int32, "i8": np.int64, "u1": np.uint8,
           "u8": np.uint64, "b1": np.bool_}


def _rows(text):
  """(name dtype shape... as a list, doc) of each row of a field table."""
  for line in text.strip().splitlines():
    if not line.startswith("#"):
      spec, _, doc = line.partition("#")
      yield spec.split(), doc.strip()


def parse_table(text):
  """Parse a field table into a list of (name, numpy dtype, shape spec tuple)."""
  return [(name, np.dtype(_DTYPES[dt]), tuple(int(s) if s.isdigit() else s for s in shape))
          for (name, dt, *shape), _ in _rows(text)]


def table_docs(text, prefix=""):
  """{prefix + name: doc} of a field table's rows ('' where a row has no doc)."""
  return {prefix + spec[0]: doc for spec, doc in _rows(text)}


MODEL_TABLE = ([("opt_" + n, dt, shp) for n, dt, shp in parse_table(OPTION_FIELDS)]
               + parse_table(MODEL_FIELDS))
DATA_TABLE = parse_table(DATA_FIELDS)
MODEL_DOCS = {**table_docs(OPTION_FIELDS, "opt_"), **table_docs(MODEL_FIELDS)}
DATA_DOCS = table_docs(DATA_FIELDS)


def efc_row_nnz(nv, tree_dofnum, dof_treeid, ten_J_rowadr, ten_J_rownnz, ten_J_colind,
                nflex=0):
  """Most nonzeros a constraint row of efc_J (or of solver_Y, its half solve, which fills each
  tree it touches up to the row's last dof) can have: a row touches the trees of two bodies
  (contact, connect, weld), two dofs (joint equality) or one or two tendons, and every tree
  it touches at most in full. With flexes, a contact between two tetrahedra touches the trees
  of 8 vertex bodies."""
  tree_dofnum = np.asarray(tree_dofnum, np.int64)
  tree = int(tree_dofnum.max(initial=0))
  tendon = 0
  for adr, nnz in zip(np.asarray(ten_J_rowadr), np.asarray(ten_J_rownnz)):
    trees = np.unique(np.asarray(dof_treeid)[np.asarray(ten_J_colind)[adr:adr + nnz]])
    tendon = max(tendon, int(tree_dofnum[trees].sum()))
  bodies = 8 if nflex else 2
  return max(1, min(int(nv), max(bodies * tree, 2 * tendon)))


def efc_row_nnz_of(model):
  """efc_row_nnz of anything with the Model field names (a Model, a mujoco.MjModel)."""
  return efc_row_nnz(model.nv, model.tree_dofnum, model.dof_treeid, model.ten_J_rowadr,
                     model.ten_J_rownnz, model.ten_J_colind, getattr(model, "nflex", 0))


def contact_capacity(sizes, nconmax=-1, njmax=-1, ccd_iterations=35, row_nnz=None):
  """Sizes of the preallocated collision/constraint buffers, fixed when Data is allocated:
  nconmax, njmax (room for contacts and constraint rows), nJmax (room for the nonzeros of
  efc_J: njmax rows of at most `row_nnz` (efc_row_nnz; default nv) each) and nccd/nccdf/nccdi
  (GJK/EPA work buffers for up to nccd iterations: MuJoCo's ccd_iterations, at least 100, so
  the option can be raised at run time; beyond nccd the driver caps the iterations).

  MuJoCo grows an arena; we preallocate. -1 (MuJoCo's default) picks room for about 12
  contacts per geom and 2 per flex vertex and element; rows cover pyramidal condim-4 contacts
  plus every equality (a flex equality's row per edge included), friction and limit row the
  model can produce. A full buffer drops the extra contacts/rows and counts a
  CONTACTFULL/CNSTRFULL warning, as MuJoCo does.
  """
  if nconmax < 0:
    nconmax = max(256, 12 * sizes.get("ngeom", 0)
                  + 2 * (sizes.get("nflexvert", 0) + sizes.get("nflexelem", 0)))
  if njmax < 0:
    njmax = (6 * nconmax + 6 * sizes.get("neq", 0) + 2 * sizes.get("nv", 0)
             + 2 * sizes.get("njnt", 0) + 2 * sizes.get("ntendon", 0)
             + sizes.get("nflexedge", 0))   # flex edge equality: a row per edge
  nccd = max(100, int(ccd_iterations))
  # room for every mesh in the mesh cache
  nccdf, nccdi = work_sizes(nccd, sizes.get("nmeshvert", 0), sizes.get("nmesh", 0))
  nv = int(sizes.get("nv", 0))
  row_nnz = nv if row_nnz is None else min(nv, int(row_nnz))
  return {"nconmax": int(nconmax), "njmax": int(njmax), "nJmax": int(njmax) * row_nnz,
          "nccd": nccd, "nccdf": int(nccdf), "nccdi": int(nccdi)}


def initial_plastic(A, nplastic):
  """The plastic state mj_resetData starts from: qpos_spring of plastic joints and
  tendon_lengthspring of plastic tendons, at their jnt_plasticadr/tendon_plasticadr."""
  out = np.zeros(nplastic)
  for j, a in enumerate(A["jnt_plasticadr"]):
    if a >= 0:
      q = A["jnt_qposadr"][j]
      n = 4 if A["jnt_type"][j] == mjtJoint.BALL else 1
      out[a:a + n] = A["qpos_spring"][q:q + n]
  for i, a in enumerate(A["tendon_plasticadr"]):
    if a >= 0:
      out[a:a + 2] = A["tendon_lengthspring"][i]
  return out


def resolve_shape(shape, sizes):
  """Shape spec -> tuple of ints, given a dict of sizes."""
  out = []
  for s in shape:
    if isinstance(s, int):
      out.append(s)
    else:
      v = 1
      for part in s.split("*"):
        v *= int(part) if part.isdigit() else sizes[part]
      out.append(v)
  return tuple(out)


def check_arrays(table, sizes, arrays, what):
  """`arrays` completed to `table`: each with its exact dtype and shape (zeros where missing;
  a wrong shape of the right size is reshaped, another size raises ValueError naming
  what.name) and owning its memory, so a compiled Model/Data can share it without copying."""
  for name, dtype, shape in table:
    a = arrays.get(name)
    want = resolve_shape(shape, sizes)
    if a is None:
      arrays[name] = np.zeros(want, dtype)
      continue
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.shape != want:
      if a.size != int(np.prod(want)):
        raise ValueError(f"{what}.{name}: shape {a.shape}, expected {want}")
      a = a.reshape(want)
    arrays[name] = a.copy() if a.base is not None or not a.flags.writeable else a
  return arrays
