"""`python -m numjoco`: the `numjoco` command (numjoco.app.__main__)."""
from numjoco.app.__main__ import main

if __name__ == "__main__":
  main()
