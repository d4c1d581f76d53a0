"""Type names for declaring units' signatures (engine/_jit.py), and the model features that
gate whole families of units (a model without them never compiles those units)."""
import numpy as np
from numba.core import types

from numjoco.engine._borrow import BorrowedArray
from numjoco.engine.collision.work import Polytope, Work
from numjoco.engine._jit import unit  # noqa: F401  (stages import unit and the types from here)
from numjoco.engine._structs import DataType as D, ModelType as M  # noqa: F401
from numjoco.engine.types import mjtDisableBit, mjtEnableBit, mjtGeom, mjtIntegrator, mjtSensor, mjtSolver

b1, i4, i8, f8 = types.boolean, types.int32, types.int64, types.float64
f8v, f8m, i4v = types.float64[::1], types.float64[:, ::1], types.int32[::1]
f8x2 = types.UniTuple(types.float64, 2)
# the narrowphase's views of the work buffers (collision/work.py's Work, Polytope), borrowed
# (collision/convex.borrow_work)
_f8m, _f8v = BorrowedArray(types.float64, 2, "C"), BorrowedArray(types.float64, 1, "C")
_i8m, _i8v = BorrowedArray(types.int64, 2, "C"), BorrowedArray(types.int64, 1, "C")
WORK = types.NamedTuple((_f8m, _i8m, _f8m, _i8m, _f8m, _i8m, _f8v, _f8v, _i8v,
                         types.NamedTuple((_f8m, _i8m, _f8m, _f8v, _i8m, _i8m, _i8v, _i8v, _i8v,
                                           _i8v, _i8m, _f8m), Polytope)), Work)

_SDF, _MESH = int(mjtGeom.SDF), int(mjtGeom.MESH)
_GJK_ONLY = (int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER))
_IMPLICIT = (int(mjtIntegrator.IMPLICIT), int(mjtIntegrator.IMPLICITFAST))
_DISCRETE, _RK4 = int(mjtIntegrator.DISCRETE), int(mjtIntegrator.RK4)
_ENERGY_SENSORS = (int(mjtSensor.E_POTENTIAL), int(mjtSensor.E_KINETIC))


def NEEDS_FLEX(m):
  """Flex bodies (flex stages and flex collisions)."""
  return m.nflex > 0


def NEEDS_HFIELD(m):
  """Height fields."""
  return m.nhfield > 0


def NEEDS_SDF(m):
  """SDF geoms (the SDF collider and SDF sensors)."""
  return bool(np.any(m.geom_type == _SDF))


def NEEDS_MESH(m):
  """Mesh geoms (and SDF geoms, whose mesh meets planes): the mesh narrowphase."""
  return bool(np.any((m.geom_type == _MESH) | (m.geom_type == _SDF)))


def NEEDS_CONVEX(m):
  """Ellipsoids and cylinders: among primitives, only pairs with one of them lack an analytic
  collider and go through GJK/EPA and multicontact."""
  return bool(np.isin(m.geom_type, _GJK_ONLY).any())


def NEEDS_TENDON(m):
  """Tendons (mj_tendon)."""
  return m.ntendon > 0


def NEEDS_SENSOR(m):
  """Sensors (the per-type sensor value stages)."""
  return m.nsensor > 0


# Options a user may change while the model runs: Model.struct re-links when they change
# (engine/io.py), so a unit is compiled when the first step that needs it is taken.
def OPTION_KEY(m):
  """The options the gates below read (from the option arrays directly, not through m.opt:
  every step called from Python reads this key, 0.7 us here against 5 us through m.opt)."""
  a = m._arrays
  return (int(a["opt_integrator"][0]), int(a["opt_solver"][0]), int(a["opt_enableflags"][0]),
          int(a["opt_disableflags"][0]), int(a["opt_noslip_iterations"][0]),
          bool(a["opt_density"][0] != 0 or a["opt_viscosity"][0] != 0))


def NEEDS_FLUID(m):
  """Fluid forces: a nonzero density or viscosity (passive.passive calls fluid.fluid then)."""
  return bool(m.opt.density != 0 or m.opt.viscosity != 0)


def NEEDS_FLUID_DERIVATIVE(m):
  return NEEDS_FLUID(m) and NEEDS_DERIVATIVE(m)


def NEEDS_RK4(m):
  return int(m.opt.integrator) == _RK4


def NEEDS_IMPLICIT(m):
  return int(m.opt.integrator) in _IMPLICIT


def NEEDS_DERIVATIVE(m):
  """The velocity derivatives: the implicit integrators and the discrete one."""
  return int(m.opt.integrator) in _IMPLICIT or int(m.opt.integrator) == _DISCRETE


def NEEDS_DISCRETE(m):
  """The discrete integrator's stages, also for inverse dynamics under INVDISCRETE."""
  return int(m.opt.integrator) == _DISCRETE or bool(
      int(m.opt.enableflags) & int(mjtEnableBit.INVDISCRETE))


def NEEDS_FWDINV(m):
  return bool(int(m.opt.enableflags) & int(mjtEnableBit.FWDINV))


def NEEDS_LIBCCD(m):
  """libccd's MPR, used when native CCD is disabled."""
  return bool(int(m.opt.disableflags) & int(mjtDisableBit.NATIVECCD))


def NEEDS_PGS(m):
  return int(m.opt.solver) == int(mjtSolver.PGS)


def NEEDS_NOSLIP(m):
  return int(m.opt.noslip_iterations) > 0


def NEEDS_ENERGY(m):
  """Energy: the ENERGY enable flag, or an energy sensor."""
  return bool(int(m.opt.enableflags) & int(mjtEnableBit.ENERGY)) or bool(
      np.isin(m.sensor_type, _ENERGY_SENSORS).any())
