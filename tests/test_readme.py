"""The README's tour runs as written (a tour that raises is the first thing a new user sees)."""

import pathlib
import re
import warnings

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_tour_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks, "README has no python block"
    for block in blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # the tour must not use deprecated names
            exec(compile(block, str(README), "exec"), {"__name__": "readme"})
