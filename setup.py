"""`pip install .` from the repository root: the package lives in python/
(python/setup.py does the work)."""
import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).resolve().parent / "python" / "setup.py"),
                   run_name="__main__")
