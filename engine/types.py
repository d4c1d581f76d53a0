"""Enums (values equal MuJoCo's mjt* enums) and the field tables of Model and Data.

The tables are the single source of truth: `engine/_structs.py` (the numba structref types and
their setters) is generated from them by `python -m numjoco.engine._gen`, and `engine.io` allocates every
array from them. A shape entry is a size name (``nq``), an int, or a product ``nu*nv``.
"""
import enum

import numpy as np

from numjoco.engine.collision.work import work_sizes


class mjtJoint(enum.IntEnum):
  FREE = 0
  BALL = 1
  SLIDE = 2
  HINGE = 3


class mjtGeom(enum.IntEnum):
  PLANE = 0
  HFIELD = 1
  SPHERE = 2
  CAPSULE = 3
  ELLIPSOID = 4
  CYLINDER = 5
  BOX = 6
  MESH = 7
  SDF = 8


class mjtIntegrator(enum.IntEnum):
  EULER = 0
  RK4 = 1
  IMPLICIT = 2
  IMPLICITFAST = 3
  DISCRETE = 4


class mjtCone(enum.IntEnum):
  PYRAMIDAL = 0
  ELLIPTIC = 1


class mjtJacobian(enum.IntEnum):
  DENSE = 0
  SPARSE = 1
  AUTO = 2


class mjtSolver(enum.IntEnum):
  PGS = 0
  CG = 1
  NEWTON = 2


class mjtDisableBit(enum.IntFlag):
  CONSTRAINT = 1 << 0
  EQUALITY = 1 << 1
  FRICTIONLOSS = 1 << 2
  LIMIT = 1 << 3
  CONTACT = 1 << 4
  SPRING = 1 << 5
  DAMPER = 1 << 6
  GRAVITY = 1 << 7
  CLAMPCTRL = 1 << 8
  WARMSTART = 1 << 9
  FILTERPARENT = 1 << 10
  ACTUATION = 1 << 11
  REFSAFE = 1 << 12
  SENSOR = 1 << 13
  MIDPHASE = 1 << 14
  EULERDAMP = 1 << 15
  AUTORESET = 1 << 16
  NATIVECCD = 1 << 17
  ISLAND = 1 << 18
  MULTICCD = 1 << 19


class mjtEnableBit(enum.IntFlag):
  OVERRIDE = 1 << 0
  ENERGY = 1 << 1
  FWDINV = 1 << 2
  INVDISCRETE = 1 << 3
  SLEEP = 1 << 4
  DIAGEXACT = 1 << 5
  IPC = 1 << 6
  SPECULATIVE = 1 << 7


class mjtTrn(enum.IntEnum):
  JOINT = 0
  JOINTINPARENT = 1
  SLIDERCRANK = 2
  TENDON = 3
  SITE = 4
  BODY = 5
  SO3 = 6
  UNDEFINED = 1000


class mjtDyn(enum.IntEnum):
  NONE = 0
  INTEGRATOR = 1
  FILTER = 2
  FILTEREXACT = 3
  MUSCLE = 4
  DCMOTOR = 5
  PID = 6
  USER = 7


class mjtGain(enum.IntEnum):
  FIXED = 0
  AFFINE = 1
  MUSCLE = 2
  DCMOTOR = 3
  SO3 = 4
  PID = 5
  USER = 6


class mjtBias(enum.IntEnum):
  NONE = 0
  AFFINE = 1
  MUSCLE = 2
  DCMOTOR = 3
  SO3 = 4
  USER = 5


class mjtInput(enum.IntFlag):
  """Actuator input signature bits (mjtInput); mjtChart values share actuator_ctrlspec."""
  POS = 1
  VEL = 2
  FF = 4
  VOLTAGE = 8
  NONE = 16
  PRESSURE = 32


class mjtChart(enum.IntEnum):
  """Chart of an SO3 servo's commanded orientation (actuator_ctrlspec of gaintype SO3)."""
  EXPMAP = 1
  QUAT = 2


class mjtWrap(enum.IntEnum):
  NONE = 0
  JOINT = 1
  PULLEY = 2
  SITE = 3
  SPHERE = 4
  CYLINDER = 5


class mjtEq(enum.IntEnum):
  CONNECT = 0
  WELD = 1
  JOINT = 2
  TENDON = 3
  FLEX = 4


class mjtConstraint(enum.IntEnum):
  EQUALITY = 0
  FRICTION_DOF = 1
  FRICTION_TENDON = 2
  LIMIT_JOINT = 3
  LIMIT_TENDON = 4
  CONTACT_FRICTIONLESS = 5
  CONTACT_PYRAMIDAL = 6
  CONTACT_ELLIPTIC = 7


class mjtConstraintState(enum.IntEnum):
  SATISFIED = 0
  QUADRATIC = 1
  LINEARNEG = 2
  LINEARPOS = 3
  CONE = 4


class mjtWarning(enum.IntEnum):
  INERTIA = 0
  CONTACTFULL = 1
  CNSTRFULL = 2
  BADQPOS = 3
  BADQVEL = 4
  BADQACC = 5
  BADCTRL = 6


class mjtObj(enum.IntEnum):
  """Object types, as MuJoCo's mjtObj (the ones `name2id` understands)."""
  UNKNOWN = 0
  BODY = 1
  XBODY = 2
  JOINT = 3
  DOF = 4
  GEOM = 5
  SITE = 6
  CAMERA = 7
  LIGHT = 8
  FLEX = 9
  MESH = 10
  SKIN = 11
  HFIELD = 12
  TEXTURE = 13
  MATERIAL = 14
  PAIR = 15
  EXCLUDE = 16
  EQUALITY = 17
  TENDON = 18
  ACTUATOR = 19
  SENSOR = 20
  NUMERIC = 21
  TEXT = 22
  TUPLE = 23
  KEY = 24


MINVAL = 1e-15  # mjMINVAL
MAXVAL = 1e10   # mjMAXVAL
NGAIN = 10      # mjNGAIN, mjNBIAS, mjNDYN
NREF = 2        # mjNREF
NIMP = 5        # mjNIMP
NFLUID = 12     # geom_fluid row length
MINIMP = 0.0001   # mjMINIMP
MAXIMP = 0.9999   # mjMAXIMP
MAXCONPAIR = 50   # mjMAXCONPAIR: contacts one geom pair may produce
NSOLVER = 200     # mjNSOLVER: solver statistics kept per island
NISLAND = 20      # mjNISLAND: islands with statistics (solver_* hold NISLAND x NSOLVER)

# Sizes of a Model, as MuJoCo's mjModel names them. All are ints set at compile time.
MODEL_SIZES = (
    "nq nv nu nactuator nout na nbody njnt ngeom nsite ncam nlight nmat ntendon nwrap neq nkey nmocap "
    "nplastic "
    "nM nC nD nB nJmom nJten ntree npair nexclude nconmax njmax nJmax nccd nccdf nccdi"
).split()

# Option fields: stored as small arrays (`opt_<name>`) so Python edits reach compiled code.
OPTION_FIELDS = """
timestep f8 1
impratio f8 1
tolerance f8 1
ls_tolerance f8 1
noslip_tolerance f8 1
ccd_tolerance f8 1
sleep_tolerance f8 1
density f8 1
viscosity f8 1
o_margin f8 1
gravity f8 3
wind f8 3
magnetic f8 3
o_solref f8 2
o_solimp f8 5
o_friction f8 5
integrator i4 1
cone i4 1
jacobian i4 1
solver i4 1
iterations i4 1
ls_iterations i4 1
noslip_iterations i4 1
ccd_iterations i4 1
sdf_iterations i4 1
sdf_initpoints i4 1
disableflags i4 1
enableflags i4 1
disableactuator i4 1
"""

# name dtype shape... ; one line per field, grouped as MuJoCo's mjmodel.h groups them.
MODEL_FIELDS = """
vis_map_stiffness f8 1
vis_map_stiffnessrot f8 1
qpos0 f8 nq
qpos_spring f8 nq
body_parentid i4 nbody
body_rootid i4 nbody
body_weldid i4 nbody
body_mocapid i4 nbody
body_jntnum i4 nbody
body_jntadr i4 nbody
body_dofnum i4 nbody
body_dofadr i4 nbody
body_treeid i4 nbody
body_geomnum i4 nbody
body_geomadr i4 nbody
body_simple u1 nbody
body_sameframe u1 nbody
body_pos f8 nbody 3
body_quat f8 nbody 4
body_ipos f8 nbody 3
body_iquat f8 nbody 4
body_mass f8 nbody
body_subtreemass f8 nbody
body_inertia f8 nbody 3
body_invweight0 f8 nbody 2
body_gravcomp f8 nbody
body_margin f8 nbody
body_contype i4 nbody
body_conaffinity i4 nbody
jnt_type i4 njnt
jnt_qposadr i4 njnt
jnt_dofadr i4 njnt
jnt_bodyid i4 njnt
jnt_group i4 njnt
jnt_limited b1 njnt
jnt_actfrclimited b1 njnt
jnt_actgravcomp b1 njnt
jnt_solref f8 njnt 2
jnt_solimp f8 njnt 5
jnt_pos f8 njnt 3
jnt_axis f8 njnt 3
jnt_stiffness f8 njnt
jnt_stiffnesspoly f8 njnt 2
jnt_springyield f8 njnt
jnt_plasticadr i4 njnt
jnt_range f8 njnt 2
jnt_actfrcrange f8 njnt 2
jnt_margin f8 njnt
jnt_actuatorid i4 njnt
dof_bodyid i4 nv
dof_jntid i4 nv
dof_parentid i4 nv
dof_treeid i4 nv
dof_Madr i4 nv
dof_simplenum i4 nv
dof_solref f8 nv 2
dof_solimp f8 nv 5
dof_frictionloss f8 nv
dof_armature f8 nv
dof_damping f8 nv
dof_dampingpoly f8 nv 2
dof_invweight0 f8 nv
dof_length f8 nv
dof_M0 f8 nv
tree_bodyadr i4 ntree
tree_bodynum i4 ntree
tree_dofadr i4 ntree
tree_dofnum i4 ntree
tree_sleep_policy i4 ntree
geom_type i4 ngeom
geom_contype i4 ngeom
geom_conaffinity i4 ngeom
geom_condim i4 ngeom
geom_bodyid i4 ngeom
geom_dataid i4 ngeom
geom_matid i4 ngeom
geom_group i4 ngeom
geom_priority i4 ngeom
geom_sameframe u1 ngeom
geom_solmix f8 ngeom
geom_solref f8 ngeom 2
geom_solimp f8 ngeom 5
geom_size f8 ngeom 3
geom_aabb f8 ngeom 6
geom_rbound f8 ngeom
geom_pos f8 ngeom 3
geom_quat f8 ngeom 4
geom_friction f8 ngeom 3
geom_margin f8 ngeom
geom_gap f8 ngeom
geom_fluid f8 ngeom 12
geom_rgba f4 ngeom 4
site_type i4 nsite
site_bodyid i4 nsite
site_matid i4 nsite
site_group i4 nsite
site_sameframe u1 nsite
site_size f8 nsite 3
site_pos f8 nsite 3
site_quat f8 nsite 4
site_rgba f4 nsite 4
cam_mode i4 ncam
cam_bodyid i4 ncam
cam_targetbodyid i4 ncam
cam_pos f8 ncam 3
cam_quat f8 ncam 4
cam_poscom0 f8 ncam 3
cam_pos0 f8 ncam 3
cam_mat0 f8 ncam 9
cam_projection i4 ncam
cam_fovy f8 ncam
cam_ipd f8 ncam
cam_resolution i4 ncam 2
cam_sensorsize f4 ncam 2
cam_intrinsic f4 ncam 4
light_mode i4 nlight
light_bodyid i4 nlight
light_targetbodyid i4 nlight
light_type i4 nlight
light_castshadow b1 nlight
light_active b1 nlight
light_pos f8 nlight 3
light_dir f8 nlight 3
light_poscom0 f8 nlight 3
light_pos0 f8 nlight 3
light_dir0 f8 nlight 3
light_attenuation f4 nlight 3
light_cutoff f4 nlight
light_exponent f4 nlight
light_ambient f4 nlight 3
light_diffuse f4 nlight 3
light_specular f4 nlight 3
mat_rgba f4 nmat 4
mat_emission f4 nmat
mat_specular f4 nmat
mat_shininess f4 nmat
mat_reflectance f4 nmat
eq_type i4 neq
eq_obj1id i4 neq
eq_obj2id i4 neq
eq_objtype i4 neq
eq_active0 b1 neq
eq_solref f8 neq 2
eq_solimp f8 neq 5
eq_data f8 neq 12
tendon_adr i4 ntendon
tendon_num i4 ntendon
tendon_type i4 ntendon
tendon_limited b1 ntendon
tendon_actfrclimited b1 ntendon
tendon_solref_lim f8 ntendon 2
tendon_solimp_lim f8 ntendon 5
tendon_solref_fri f8 ntendon 2
tendon_solimp_fri f8 ntendon 5
tendon_range f8 ntendon 2
tendon_actfrcrange f8 ntendon 2
tendon_margin f8 ntendon
tendon_stiffness f8 ntendon
tendon_damping f8 ntendon
tendon_stiffnesspoly f8 ntendon 2
tendon_dampingpoly f8 ntendon 2
tendon_actuatorid i4 ntendon
tendon_treenum i4 ntendon
tendon_treeid i4 ntendon 2
tendon_armature f8 ntendon
tendon_frictionloss f8 ntendon
tendon_lengthspring f8 ntendon 2
tendon_springyield f8 ntendon
tendon_plasticadr i4 ntendon
tendon_length0 f8 ntendon
tendon_invweight0 f8 ntendon
tendon_rgba f4 ntendon 4
tendon_width f8 ntendon
ten_J_rownnz i4 ntendon
ten_J_rowadr i4 ntendon
ten_J_colind i4 nJten
wrap_type i4 nwrap
wrap_objid i4 nwrap
wrap_prm f8 nwrap
actuator_trntype i4 nactuator
actuator_dyntype i4 nactuator
actuator_gaintype i4 nactuator
actuator_biastype i4 nactuator
actuator_ctrladr i4 nactuator
actuator_ctrlnum i4 nactuator
actuator_ctrlspec i4 nactuator
actuator_trnid i4 nactuator 2
actuator_actadr i4 nactuator
actuator_actnum i4 nactuator
actuator_group i4 nactuator
actuator_ctrllimited b1 nu
actuator_forcelimited b1 nactuator
actuator_actlimited b1 nactuator
actuator_dynprm f8 nactuator 10
actuator_gainprm f8 nactuator 10
actuator_biasprm f8 nactuator 10
actuator_actearly b1 nactuator
actuator_ctrlrange f8 nu 2
actuator_forcerange f8 nactuator 2
actuator_actrange f8 nactuator 2
actuator_gear f8 nout 6
actuator_cranklength f8 nactuator
actuator_acc0 f8 nout
actuator_length0 f8 nout
actuator_lengthrange f8 nout 2
actuator_damping f8 nactuator
actuator_armature f8 nactuator
actuator_dampingpoly f8 nactuator 2
actuator_outadr i4 nactuator
actuator_outnum i4 nactuator
key_time f8 nkey
key_qpos f8 nkey nq
key_qvel f8 nkey nv
key_act f8 nkey na
key_mpos f8 nkey nmocap*3
key_mquat f8 nkey nmocap*4
key_ctrl f8 nkey nu
key_plastic f8 nkey nplastic
M_rownnz i4 nv
M_rowadr i4 nv
M_colind i4 nC
mapM2M i4 nC
D_rownnz i4 nv
D_rowadr i4 nv
D_diag i4 nv
D_colind i4 nD
mapM2D i4 nD
mapD2M i4 nC
B_rownnz i4 nbody
B_rowadr i4 nbody
B_colind i4 nB
pair_dim i4 npair
pair_geom1 i4 npair
pair_geom2 i4 npair
pair_signature i4 npair
pair_solref f8 npair 2
pair_solreffriction f8 npair 2
pair_solimp f8 npair 5
pair_margin f8 npair
pair_gap f8 npair
pair_friction f8 npair 5
exclude_signature i4 nexclude
"""

# Data fields; sizes are Model sizes. Scalars MuJoCo keeps as plain numbers (time, ncon, ...)
# are 1-element arrays here so compiled code can write them; `Data` shows them as numbers.
DATA_FIELDS = """
time f8 1
energy f8 2
qpos f8 nq
qvel f8 nv
act f8 na
plastic f8 nplastic
qacc_warmstart f8 nv
ctrl f8 nu
qfrc_applied f8 nv
xfrc_applied f8 nbody 6
xfrc_perturb f8 nbody 6
pert_select i4 1
pert_active i4 1
pert_localpos f8 3
pert_refpos f8 3
pert_refquat f8 4
pert_refselpos f8 3
pert_localmass f8 1
mocap_pos f8 nmocap 3
mocap_quat f8 nmocap 4
eq_active u1 neq
qacc f8 nv
act_dot f8 na
xpos f8 nbody 3
xquat f8 nbody 4
xmat f8 nbody 9
xipos f8 nbody 3
xiquat f8 nbody 4
ximat f8 nbody 9
xanchor f8 njnt 3
xaxis f8 njnt 3
geom_xpos f8 ngeom 3
geom_xquat f8 ngeom 4
geom_xmat f8 ngeom 9
site_xpos f8 nsite 3
site_xquat f8 nsite 4
site_xmat f8 nsite 9
cam_xpos f8 ncam 3
cam_xmat f8 ncam 9
light_xpos f8 nlight 3
light_xdir f8 nlight 3
subtree_com f8 nbody 3
cdof f8 nv 6
cinert f8 nbody 10
ten_wrapadr i4 ntendon
ten_wrapnum i4 ntendon
ten_J f8 nJten
ten_length f8 ntendon
wrap_obj i4 nwrap 2
wrap_xpos f8 nwrap 6
actuator_length f8 nout
moment_rownnz i4 nout
moment_rowadr i4 nout
moment_colind i4 nJmom
actuator_moment f8 nJmom
crb f8 nbody 10
M f8 nC
qLD f8 nC
qLDiagInv f8 nv
ten_velocity f8 ntendon
actuator_velocity f8 nout
cvel f8 nbody 6
cdof_dot f8 nv 6
qfrc_bias f8 nv
qfrc_spring f8 nv
qfrc_damper f8 nv
qfrc_gravcomp f8 nv
qfrc_fluid f8 nv
qfrc_passive f8 nv
subtree_linvel f8 nbody 3
subtree_angmom f8 nbody 3
qH f8 nC
qHDiagInv f8 nv
qDeriv f8 nD
qLU f8 nD
actuator_force f8 nout
qfrc_actuator f8 nv
qfrc_smooth f8 nv
qacc_smooth f8 nv
qfrc_constraint f8 nv
qfrc_inverse f8 nv
cacc f8 nbody 6
cfrc_int f8 nbody 6
cfrc_ext f8 nbody 6
scratch_nv f8 8 nv
scratch_small f8 16
ctrl_clamped f8 nu
scratch_nbody f8 4 nbody 6
ten_wpnt f8 12
trn_jac f8 13 nv
rk4_qpos f8 nq
rk4_qvel f8 nv
rk4_act f8 na
rk4_dqvel f8 4 nv
rk4_dqacc f8 4 nv
rk4_dact f8 4 na
rk4_actstate f8 2 nout
rk4_ten_length f8 ntendon
rk4_ten_J f8 nJten
rk4_time f8 1
ivec_nv i4 2 nv
ncon i4 1
ne i4 1
nf i4 1
nl i4 1
nefc i4 1
contact_dist f8 nconmax
contact_pos f8 nconmax 3
contact_frame f8 nconmax 9
contact_includemargin f8 nconmax
contact_friction f8 nconmax 5
contact_solref f8 nconmax 2
contact_solreffriction f8 nconmax 2
contact_solimp f8 nconmax 5
contact_mu f8 nconmax
contact_H f8 nconmax 36
contact_dim i4 nconmax
contact_geom1 i4 nconmax
contact_geom2 i4 nconmax
contact_exclude i4 nconmax
contact_efc_address i4 nconmax
efc_type i4 njmax
efc_id i4 njmax
efc_J_rownnz i4 njmax
efc_J_rowadr i4 njmax
efc_J_colind i4 nJmax
efc_J f8 nJmax
efc_pos f8 njmax
efc_margin f8 njmax
efc_frictionloss f8 njmax
efc_diagA f8 njmax
efc_KBIP f8 njmax 4
efc_D f8 njmax
efc_R f8 njmax
efc_vel f8 njmax
efc_aref f8 njmax
efc_b f8 njmax
efc_force f8 njmax
efc_state i4 njmax
solver_niter i4 20
solver_improvement f8 4000
solver_gradient f8 4000
solver_lineslope f8 4000
solver_nactive i4 4000
solver_nchange i4 4000
solver_neval i4 4000
solver_nupdate i4 4000
solver_fwdinv f8 2
warning_number i4 8
warning_lastinfo i4 8
col_dist f8 50
col_pos f8 50 3
col_frame f8 50 9
col_fbuf f8 nccdf
col_ibuf i8 nccdi
cnstr_jac f8 4 6 nv
cnstr_vec f8 nv
cnstr_row f8 2 6
solver_L f8 nv nv
solver_Lcone f8 nv nv
solver_LTJ f8 6 nv
solver_nv f8 13 nv
solver_efc f8 8 njmax
solver_quad f8 3*njmax
solver_int i4 2 njmax
solver_Y f8 nJmax
solver_ARblk f8 njmax 6
solver_scratch f8 256
solver_mat f8 6 6 6
solver_Lpat i4 3 nv*nv
solver_Lnnz i4 8 nv
solver_tadj u8 1036
solver_Hpat u1 2 nv*nv
solver_Ynnz i4 njmax
solver_Yadr i4 njmax
solver_Ycol i4 nJmax
nisland i4 1
tree_asleep i4 ntree
tree_awake i4 ntree
body_awake i4 nbody
body_awake_ind i4 nbody
parent_awake_ind i4 nbody
dof_awake_ind i4 nv
ntree_awake i4 1
nbody_awake i4 1
nparent_awake i4 1
nv_awake i4 1
sleep_qacc f8 nv
nidof i4 1
tree_island i4 ntree
island_ntree i4 ntree
island_itreeadr i4 ntree
map_itree2tree i4 ntree
dof_island i4 nv
island_nv i4 ntree
island_idofadr i4 ntree
island_dofadr i4 ntree
map_dof2idof i4 nv
map_idof2dof i4 nv
efc_island i4 njmax
island_ne i4 ntree
island_nf i4 ntree
island_nefc i4 ntree
island_iefcadr i4 ntree
map_efc2iefc i4 njmax
map_iefc2efc i4 njmax
iefc_type i4 njmax
iefc_id i4 njmax
iefc_frictionloss f8 njmax
iefc_D f8 njmax
iefc_R f8 njmax
iefc_aref f8 njmax
iefc_force f8 njmax
iefc_state i4 njmax
ifrc_smooth f8 nv
ifrc_constraint f8 nv
iacc_smooth f8 nv
iacc f8 nv
iefc_J_rownnz i4 njmax
iefc_J_rowadr i4 njmax
iefc_J_colind i4 nJmax
iefc_J f8 nJmax
island_int i4 2 ntree
"""

# ---------------------------------------------------------------------------- sensors
# (one added block: mjtSensor/mjtStage/mjtDataType, the sensor_* group of mjmodel.h, sensordata)


class mjtSensor(enum.IntEnum):
  TOUCH = 0
  ACCELEROMETER = 1
  VELOCIMETER = 2
  GYRO = 3
  FORCE = 4
  TORQUE = 5
  MAGNETOMETER = 6
  RANGEFINDER = 7
  CAMPROJECTION = 8
  JOINTPOS = 9
  JOINTVEL = 10
  TENDONPOS = 11
  TENDONVEL = 12
  ACTUATORPOS = 13
  ACTUATORVEL = 14
  ACTUATORFRC = 15
  JOINTACTFRC = 16
  TENDONACTFRC = 17
  BALLQUAT = 18
  BALLANGVEL = 19
  JOINTLIMITPOS = 20
  JOINTLIMITVEL = 21
  JOINTLIMITFRC = 22
  TENDONLIMITPOS = 23
  TENDONLIMITVEL = 24
  TENDONLIMITFRC = 25
  FRAMEPOS = 26
  FRAMEQUAT = 27
  FRAMEXAXIS = 28
  FRAMEYAXIS = 29
  FRAMEZAXIS = 30
  FRAMELINVEL = 31
  FRAMEANGVEL = 32
  FRAMELINACC = 33
  FRAMEANGACC = 34
  SUBTREECOM = 35
  SUBTREELINVEL = 36
  SUBTREEANGMOM = 37
  INSIDESITE = 38
  GEOMDIST = 39
  GEOMNORMAL = 40
  GEOMFROMTO = 41
  CONTACT = 42
  E_POTENTIAL = 43
  E_KINETIC = 44
  CLOCK = 45
  TACTILE = 46
  PLUGIN = 47
  USER = 48


class mjtStage(enum.IntEnum):
  NONE = 0
  POS = 1
  VEL = 2
  ACC = 3


class mjtDataType(enum.IntEnum):
  REAL = 0
  POSITIVE = 1
  AXIS = 2
  QUATERNION = 3


NSENS = 3   # mjNSENS: sensor_intprm row length

MODEL_SIZES += ["nsensor", "nsensordata"]

MODEL_FIELDS += """sensor_type i4 nsensor
sensor_datatype i4 nsensor
sensor_needstage i4 nsensor
sensor_objtype i4 nsensor
sensor_objid i4 nsensor
sensor_reftype i4 nsensor
sensor_refid i4 nsensor
sensor_intprm i4 nsensor 3
sensor_dim i4 nsensor
sensor_adr i4 nsensor
sensor_cutoff f8 nsensor
sensor_noise f8 nsensor
sensor_plugin i4 nsensor
"""

DATA_FIELDS += """sensordata f8 nsensordata
"""
# ------------------------------------------------------------------------ end of sensors

# ---------------------------------------------------------------------------- meshes
# (one added block: the mesh_* group of mjmodel.h that collision, the tactile sensor and
# rendering use; mesh_normal: MuJoCo's vertex normals, or three rows (normal, two tangents) per
# vertex for the builtin wedge and plate meshes)
MODEL_SIZES += ["nmesh", "nmeshvert", "nmeshface", "nmeshgraph", "nmeshnormal"]

MODEL_FIELDS += """mesh_vertadr i4 nmesh
mesh_vertnum i4 nmesh
mesh_faceadr i4 nmesh
mesh_facenum i4 nmesh
mesh_graphadr i4 nmesh
mesh_extrema i4 nmesh 27
mesh_vert f4 nmeshvert 3
mesh_face i4 nmeshface 3
mesh_graph i4 nmeshgraph
mesh_scale f8 nmesh 3
mesh_pos f8 nmesh 3
mesh_quat f8 nmesh 4
mesh_normaladr i4 nmesh
mesh_normalnum i4 nmesh
mesh_normal f4 nmeshnormal 3
"""

# (MuJoCo's mesh polygons: the hull's coplanar triangles merged, which mesh multicontact and
# plane-mesh collisions clip (engine/mjcf/_mesh.make_polygons); mesh_polyvert holds mesh vertex
# ids, mesh_polymap per mesh vertex the ids within its mesh of the polygons holding it,
# ascending. The polygons equal 4.0's; 4.0 numbers them in its compiler's hash order, we by
# their first hull triangle)
MODEL_SIZES += ["nmeshpoly", "nmeshpolyvert", "nmeshpolymap", "npolygonmax"]

MODEL_FIELDS += """mesh_polynum i4 nmesh
mesh_polyadr i4 nmesh
mesh_polynormal f8 nmeshpoly 3
mesh_polyvertadr i4 nmeshpoly
mesh_polyvertnum i4 nmeshpoly
mesh_polyvert i4 nmeshpolyvert
mesh_polymapadr i4 nmeshvert
mesh_polymapnum i4 nmeshvert
mesh_polymap i4 nmeshpolymap
"""

# (the octree SDF of a plain mesh that an sdf geom without a plugin uses (mjCOctree): the
# mesh's nodes from mesh_octadr; children are indices within the mesh's block, -1 for none)
MODEL_SIZES += ["noct"]

MODEL_FIELDS += """oct_depth i4 noct
oct_child i4 noct 8
oct_aabb f8 noct 6
oct_coeff f8 noct 8
mesh_octadr i4 nmesh
mesh_octnum i4 nmesh
"""
# ------------------------------------------------------------------------ end of meshes

# ------------------------------------------------------------------------------ plugins
# (one added block: MuJoCo's plugin_* fields and geom_plugin for the first-party SDF plugins
# mujoco.sdf.torus/bowl/gear/nut/bolt, the touch-grid sensor plugin mujoco.sensor.touch_grid
# and the PID actuator plugin mujoco.pid; `plugin` holds the slot MuJoCo 4.0's wheel registers
# the plugin at (parity only); engine-only: plugin_kind (engine/mjcf/_plugin.py's kind, read by
# engine/collision/sdf.py and engine/sensor.py) and plugin_param (the numeric attributes,
# defaults filled))
MODEL_SIZES += ["nplugin", "npluginattr"]

MODEL_FIELDS += """plugin i4 nplugin
plugin_stateadr i4 nplugin
plugin_statenum i4 nplugin
plugin_attr u1 npluginattr
plugin_attradr i4 nplugin
geom_plugin i4 ngeom
plugin_kind i4 nplugin
plugin_param f8 nplugin 6
"""
# -------------------------------------------------------------------------- end of plugins

# ------------------------------------------------------------------------- user parameters
# (one added block: MJCF `user` attributes, nuser_* sizes and the *_user arrays of mjmodel.h;
# MuJoCo never reads them: they are for the user's own code)
MODEL_SIZES += ["nuser_body", "nuser_jnt", "nuser_geom", "nuser_site", "nuser_cam",
                "nuser_tendon", "nuser_actuator", "nuser_sensor"]

MODEL_FIELDS += """body_user f8 nbody nuser_body
jnt_user f8 njnt nuser_jnt
geom_user f8 ngeom nuser_geom
site_user f8 nsite nuser_site
cam_user f8 ncam nuser_cam
tendon_user f8 ntendon nuser_tendon
actuator_user f8 nactuator nuser_actuator
sensor_user f8 nsensor nuser_sensor
"""
# --------------------------------------------------------------------- end of user parameters

# ------------------------------------------------------- compile-time joint spring-damper
# engine-only: MuJoCo keeps joint springdamper in its spec; set_const turns it into
# jnt_stiffness / dof_damping from dof_invweight0 (mjCModel::AutoSpringDamper)
MODEL_FIELDS += """jnt_springdamper f8 njnt 2
"""

# ------------------------------------------------------------------------- height fields
MODEL_SIZES += ["nhfield", "nhfielddata"]

MODEL_FIELDS += """hfield_size f8 nhfield 4
hfield_nrow i4 nhfield
hfield_ncol i4 nhfield
hfield_adr i4 nhfield
hfield_data f4 nhfielddata
"""
# --------------------------------------------------------------------- end of height fields

# ------------------------------------------------ contact adhesion and surface velocity
# (one added block: MuJoCo 4's geom/pair adhesion and geom surfacevel, their per-contact
# values and the passive attraction qfrc_adhesion)
MODEL_FIELDS += """geom_surfacevel f8 ngeom 6
geom_adhesion f8 ngeom
pair_adhesion f8 npair
"""

DATA_FIELDS += """contact_adhesion f8 nconmax
contact_surfacevel f8 nconmax 3
qfrc_adhesion f8 nv
"""
# -------------------------------------------- end of contact adhesion and surface velocity

# ------------------------------------------------------- control and sensor history
# (one added block: MuJoCo 4's time-indexed ring buffers of actuator controls and sensor
# values, nsample / interp / delay / interval; see engine/history.py for the buffer layout)
MODEL_SIZES += ["nhistory"]

MODEL_FIELDS += """actuator_history i4 nactuator 2
actuator_historyadr i4 nactuator
actuator_delay f8 nactuator
sensor_history i4 nsensor 2
sensor_historyadr i4 nsensor
sensor_delay f8 nsensor
sensor_interval f8 nsensor 2
"""

# history_sensordata is engine-only: RK4 samples its delayed sensors there from the step's
# start state, before the stages overwrite what they read (MuJoCo 4.0 stores those values)
DATA_FIELDS += """history f8 nhistory
history_sensordata f8 nsensordata
"""
# --------------------------------------------------- end of control and sensor history

# ------------------------------------------------------------------- actuator plugins
# (one added block: MuJoCo's actuator_plugin, the instance driving an actuator, -1 none; the
# only actuator plugin is mujoco.pid, whose parameters the compiler stores per actuator in the
# engine-only actuator_pluginprm: kp, ki, kd, integral clamp (-1 none), slewmax (-1 none))
MODEL_FIELDS += """actuator_plugin i4 nactuator
actuator_pluginprm f8 nactuator 5
"""
# --------------------------------------------------------------- end of actuator plugins

# ------------------------------------------------------------------ discrete integrator
# (one added block, engine-only: MuJoCo 4.0's `discrete` integrator solves the constraints in
# the effective metric Mhat = M + h D + h^2 K (engine/discrete.py). qMhat: its backbone, the
# joint damping and stiffness terms on M's pattern, and qLDhat / qLDhatDiagInv its L'DL factor;
# qfrc_hat = qfrc_smooth - h K qvel, the right-hand side; ten_mhat and actuator_mhat: the
# weights h D + h^2 K of the tendon and actuator-output couplings w g g' (g the tendon's
# Jacobian or the output's moment), applied matrix-free by the primal solvers (0 under PGS);
# discrete_coupled[0]: 1 when any coupling weight is nonzero (the solve is then one system);
# dof_mhat: Mhat's diagonal with the couplings' (the constraint rows' metric scaling)
DATA_FIELDS += """qMhat f8 nC
qLDhat f8 nC
qLDhatDiagInv f8 nv
qfrc_hat f8 nv
ten_mhat f8 ntendon
actuator_mhat f8 nout
discrete_coupled i4 1
dof_mhat f8 nv
"""
# -------------------------------------------------------------- end of discrete integrator

# ------------------------------------------------------------------------ flex (deformables)
# mjModel's flex fields, by 4.0's names, shapes and dtypes (engine/mjcf/_flex.py compiles them;
# engine/flex.py moves flexes)
MODEL_SIZES += ("nflex nflexnode nflexvert nflexedge nflexelem nflexelemdata nflexelemedge "
                "nflexshelldata nflexstiffness nflexbending nflextexcoord nJfe").split()
MODEL_FIELDS += """flex_contype i4 nflex
flex_conaffinity i4 nflex
flex_condim i4 nflex
flex_priority i4 nflex
flex_solmix f8 nflex
flex_solref f8 nflex 2
flex_solimp f8 nflex 5
flex_friction f8 nflex 3
flex_margin f8 nflex
flex_gap f8 nflex
flex_selfcollide i4 nflex
flex_activelayers i4 nflex
flex_passive i4 nflex
flex_dim i4 nflex
flex_matid i4 nflexelem
flex_group i4 nflex
flex_interp i4 nflex
flex_nodeadr i4 nflex
flex_nodenum i4 nflex
flex_vertadr i4 nflex
flex_vertnum i4 nflex
flex_edgeadr i4 nflex
flex_edgenum i4 nflex
flex_elemadr i4 nflex
flex_elemnum i4 nflex
flex_elemdataadr i4 nflex
flex_elemedgeadr i4 nflex
flex_shellnum i4 nflex
flex_shelldataadr i4 nflex
flex_texcoordadr i4 nflex
flex_nodebodyid i4 nflexnode
flex_vertbodyid i4 nflexvert
flex_vertcell i4 nflexvert
flex_cellnum i4 nflex 3
flex_edge i4 nflexedge 2
flex_edgeflap i4 nflexedge 2
flex_elem i4 nflexelemdata
flex_elemtexcoord i4 nflexelemdata
flex_elemedge i4 nflexelemedge
flex_elemlayer i4 nflexelem
flex_shell i4 nflexshelldata
flex_vert f8 nflexvert 3
flex_vert0 f8 nflexvert 3
flex_node f8 nflexnode 3
flex_node0 f8 nflexnode 3
flexedge_length0 f8 nflexedge
flexedge_invweight0 f8 nflexedge
flex_radius f8 nflex
flex_size f8 nflex 3
flex_stiffness f8 nflexstiffness
flex_stiffnessadr i4 nflex
flex_bending f8 nflexbending
flex_bendingadr i4 nflex
flex_damping f8 nflex
flex_edgestiffness f8 nflex
flex_edgedamping f8 nflex
flex_edgeequality i4 nflex
flex_rigid b1 nflex
flexedge_rigid b1 nflexedge
flex_centered b1 nflex
flex_flatskin b1 nflex
flex_bvhadr i4 nflex
flex_bvhnum i4 nflex
flexedge_J_rownnz i4 nflexedge
flexedge_J_rowadr i4 nflexedge
flexedge_J_colind i4 nJfe
flex_plasticadr i4 nflex
flex_plasticmode i4 nflex
flex_yield f8 nflex 2
flex_rgba f4 nflex 4
flex_texcoord f4 nflextexcoord 2
"""
DATA_FIELDS += """flexvert_xpos f8 nflexvert 3
flexelem_aabb f8 nflexelem 6
flexedge_J f8 nJfe
flexedge_length f8 nflexedge
flexedge_velocity f8 nflexedge
flex_jacdif f8 nv 3
flex_vertforce f8 nflexvert 6
contact_geom i4 nconmax 2
contact_flex i4 nconmax 2
contact_elem i4 nconmax 2
contact_vert i4 nconmax 2
"""


_DTYPES = {"f8": np.float64, "f4": np.float32, "i4": np.int32, "i8": np.int64, "u1": np.uint8, "u8": np.uint64, "b1": np.bool_}


def parse_table(text):
  """Parse a field table into a list of (name, numpy dtype, shape spec tuple)."""
  fields = []
  for line in text.strip().splitlines():
    name, dt, *shape = line.split()
    fields.append((name, np.dtype(_DTYPES[dt]), tuple(int(s) if s.isdigit() else s for s in shape)))
  return fields


MODEL_TABLE = ([("opt_" + n, dt, shp) for n, dt, shp in parse_table(OPTION_FIELDS)]
               + parse_table(MODEL_FIELDS))
DATA_TABLE = parse_table(DATA_FIELDS)


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
  contacts per geom and 2 per flex vertex and element; rows cover pyramidal condim-4 contacts plus every equality (a flex
  equality's row per edge included), friction and limit row the model can produce. A full buffer drops the extra contacts/rows and
  counts a CONTACTFULL/CNSTRFULL warning, as MuJoCo does.
  """
  if nconmax < 0:
    nconmax = max(256, 12 * sizes.get("ngeom", 0)
                  + 2 * (sizes.get("nflexvert", 0) + sizes.get("nflexelem", 0)))
  if njmax < 0:
    njmax = (6 * nconmax + 6 * sizes.get("neq", 0) + 2 * sizes.get("nv", 0)
             + 2 * sizes.get("njnt", 0) + 2 * sizes.get("ntendon", 0)
             + sizes.get("nflexedge", 0))   # flex edge equality: a row per edge
  nccd = max(100, int(ccd_iterations))
  # room for two meshes' hulls, or a height field prism and a mesh
  nccdf, nccdi = work_sizes(nccd, sizes.get("nmeshvert", 0) + 6)
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
