"""Fluid forces (MuJoCo's inertia-box and ellipsoid models). Placeholder until implemented."""
from engine.smooth import jit


@jit
def fluid(m, d):
  """Add fluid forces into qfrc_fluid; True if any were applied."""
  return False
