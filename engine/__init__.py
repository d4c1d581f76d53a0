"""numjoco.engine: the physics, MuJoCo's computation model in numpy + Numba.

The public functions are numjoco's (numjoco.load_model, numjoco.step, ...; defined in
numjoco.engine.api and numjoco.engine.io). The modules follow MuJoCo's engine files: forward
(mj_forward's stages), smooth (kinematics, inertia, RNE), collision_* (broad and
narrow phase), constraint (the constraint builder), solver, passive, sensor, derivative,
inverse, ...; mjcf compiles MJCF and URDF into a Model. Kernels are compiled per unit and cached
by content (_jit.py, _sig.py, build.py). Importing this package imports nothing else; the
parser and compiler (mjcf), types, visual, rotation and preview need no Numba.
"""
