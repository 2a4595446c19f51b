"""Every shell example of the README runs: each ``privcal ...`` line of its shell
blocks is run through the CLI's entry point in a scratch directory holding the shipped ``examples/``, in
the fast setting below where the README's own setting takes more than a few seconds (the substitution is
written here, next to its reason, and each one must still match the README, so a changed command cannot
slip through untested). A command answers with exit 0 and prints something; files it is asked to write
exist."""

from __future__ import annotations

import pathlib
import re
import shlex
import shutil

import pytest

from privcal.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: README text -> fast setting (the reason: the full setting's run time, a few seconds to a minute)
FAST = {
    "--trajectories 1000 --iterations 10000": "--trajectories 50 --iterations 200",  # GPOPE table
    "verify --budget quick": "verify --budget quick --claim WH-prop3-classic-gaussian",  # every claim: ~20 s
    # GPOPE training; its MSPBE evaluation set (default 20000 trajectories) dominates the run time
    "--domain chain --trajectories 1000": "--domain chain --trajectories 60 --eval-trajectories 400",
    "--samples 5000": "--samples 640",  # DP Q-learning: 10 updates of 64
    "--episodes 1000": "--episodes 100",  # PUCB
    # several seeds in worker processes: 10 x 10^4 episodes take ~25 s of CPU; two short seeds here, in process
    "--episodes 10000 --seeds 0-9": "--episodes 200 --seeds 0-1 --n-jobs 1",
    "--seeds 0-19": "--seeds 0-2 --n-jobs 1",  # select over 20 seeds: ~3 s, plus the workers' start-up
}


def _commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, flags=re.DOTALL):
        for line in block.splitlines():
            line = re.split(r"\s#\s", line)[0].strip()
            if line.startswith("privcal "):
                out.append(line)
            elif "&& privcal " in line:  # the install-and-run line: its privcal part
                out.append("privcal " + line.split("&& privcal ", 1)[1].strip())
    return out


COMMANDS = _commands()


def test_the_readme_has_shell_examples_and_every_fast_setting_is_used():
    assert len(COMMANDS) >= 10
    text = " ".join(COMMANDS)
    for full in FAST:
        assert full in text, f"FAST names {full!r}, which the README no longer says"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_shell_example_runs(command, tmp_path, monkeypatch, capsys):
    for full, fast in FAST.items():
        command = command.replace(full, fast)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)[1:]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, (command, err)
    assert out.strip(), command
    for flag in ("--out", "--plot", "--write"):
        if flag in argv:
            written = tmp_path / argv[argv.index(flag) + 1]
            assert written.is_file() and written.stat().st_size > 0, (command, written)


def _inline_commands() -> list[str]:
    """The complete commands the README's prose quotes inline (`privcal ... --flag ...`): those with flags and
    no placeholder (an alternative `a|b`, HOST, FILE, an ellipsis)."""
    prose = re.sub(r"```.*?```", "", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    spans = re.findall(r"`(privcal [^`]*)`", re.sub(r"\n\s*", " ", prose))
    return [s for s in spans if " --" in s and not re.search(r"\||HOST|FILE|…|\.\.\.", s)]


INLINE = _inline_commands()

#: inline README text -> fast setting: Algorithm 1 over 10 seeds of 5000 samples takes ~35 s of CPU; two seeds of
#: 640 samples run the same code path (--seeds, the environment, the verdict over seeds)
INLINE_FAST = {
    "--environment random-peak --seeds 0-9": "--environment random-peak --seeds 0-1 --samples 640",
}


def test_the_readme_quotes_inline_commands():
    assert INLINE, "the README's prose quotes no complete inline command (the pattern above may need updating)"
    text = " ".join(INLINE)
    for full in INLINE_FAST:
        assert full in text, f"INLINE_FAST names {full!r}, which the README no longer says"


@pytest.mark.parametrize("command", INLINE)
def test_readme_inline_command_runs_as_written(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for full, fast in INLINE_FAST.items():
        command = command.replace(full, fast)
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    assert code == 0, (command, err)
    assert out.strip(), command
