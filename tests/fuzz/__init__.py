"""Mutation fuzzing of the MJCF compiler and the engine behind it (`python -m tests.fuzz`):
real models mutated (tests/fuzz/mutate.py), each mutant loaded, forwarded and stepped in a child
process (tests/fuzz/worker.py) with a time limit, the outcomes classified and the failures
saved with a repro command (tests/fuzz/runner.py). tests/test_fuzz.py runs a seeded subset."""
