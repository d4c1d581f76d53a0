"""Velocity derivatives of smooth forces for the implicit integrators (MuJoCo's
engine_derivative.c: mjd_smooth_vel) and the sparse LU solve of (M - h D)."""
from engine import smooth
from engine.smooth import jit


@jit
def implicit_qacc(m, d, qacc):
  """qacc solving (M - h*qDeriv) qacc = qfrc_smooth + qfrc_constraint. PLACEHOLDER: D = 0."""
  for i in range(m.nv):
    qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
  smooth.solve_m(m, d, qacc, qacc)
