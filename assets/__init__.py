"""Models and media shipped with numjoco."""
import pathlib

ASSETS = pathlib.Path(__file__).parent
DEMO_MODEL = ASSETS / "demo.xml"
