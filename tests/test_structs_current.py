"""engine/_structs.py is generated from the field tables in engine/types.py
(`python -m numjoco.engine._gen`): a table edited without regenerating it fails here, not as a
confusing typing error in some kernel."""
import pathlib

from numjoco.engine import _gen


def test_generated_structs_match_the_field_tables():
  path = pathlib.Path(_gen.__file__).with_name("_structs.py")
  assert path.read_text() == _gen.source(), "run `python -m numjoco.engine._gen`"
