"""numjoco's physics engine: MuJoCo's computation model in numpy + numba.

Public API: load_model, make_data, reset_data, forward, step, name2id, id2name, Model, Data.
"""
from engine import _cache

_cache.configure()

from engine.api import (apply_perturb_force, apply_perturb_pose, forward, init_perturb,  # noqa: E402
                        load_model, step)
from engine.api import (compare_fwd_inv, eval_fk, eval_ik, inverse, joint_q_start,  # noqa: E402
                        joint_qd_start)
from engine.io import Data, Model, id2name, make_data, name2id, reset_data  # noqa: E402
from engine.types import (mjtBias, mjtCone, mjtConstraint, mjtConstraintState,  # noqa: E402
                          mjtDisableBit, mjtDyn, mjtEnableBit, mjtEq, mjtGain, mjtGeom,
                          mjtIntegrator, mjtJoint, mjtObj, mjtSolver, mjtTrn, mjtWarning)

__all__ = ["load_model", "make_data", "reset_data", "forward", "step", "name2id", "id2name",
           "init_perturb", "apply_perturb_pose", "apply_perturb_force",
           "Model", "Data", "mjtBias", "mjtCone", "mjtConstraint", "mjtConstraintState",
           "mjtDisableBit", "mjtDyn", "mjtEnableBit", "mjtEq", "mjtGain", "mjtGeom",
           "mjtIntegrator", "mjtJoint", "mjtObj", "mjtSolver", "mjtTrn", "mjtWarning",
           "inverse", "compare_fwd_inv", "eval_fk", "eval_ik", "joint_q_start", "joint_qd_start"]
