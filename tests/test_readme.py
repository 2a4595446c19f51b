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


def test_readme_example_files_ship():
    # every file the README's commands name under examples/ is in the repository and is accepted by the CLI
    from privcal.cli import main

    root = README.parent
    named = set(re.findall(r"(examples/[\w./-]+)", README.read_text(encoding="utf-8")))
    assert named, "README names no example file"
    for name in named:
        assert (root / name).is_file(), name
    assert main(["epsilon", "--history", str(root / "examples/runs.json"), "--delta", "1e-5", "--json"]) == 0
