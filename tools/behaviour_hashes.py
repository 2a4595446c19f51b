"""Hashes of privcal's observable behaviour, to show that a refactoring changed nothing.

Runs a fixed list of seeded commands (the README's, every ``--help``, the refusals, and seeded runs of each
learner), and prints one line per command: the SHA-256 of its exit code, stdout and stderr. Run it before and
after a change and ``diff`` the two outputs::

    python tools/behaviour_hashes.py > before.txt      # on the old commit
    python tools/behaviour_hashes.py > after.txt       # on the new one
    diff before.txt after.txt                          # empty: same numbers, defaults and messages

Deprecation warnings are part of the behaviour, so stderr is hashed too. The script needs the ``rl`` extra
(gymnasium) for Algorithm 1; pictures are not hashed (PNG bytes depend on the matplotlib version).
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

COMMANDS = [
    # the README's commands (pictures and the 10-20 seed runs left out for time)
    "table --delta 1e-4 --epsilons 0.45,0.9,2,4",
    "table",
    "table --wide",
    "table --setting gaussian --steps 1000 --format markdown",
    "table --setting gaussian --steps 1000 --format json",
    "table --setting gpope --trajectories 1000 --iterations 10000",
    "table --setting gpope --trajectories 1000 --iterations 10000 --format csv",
    "table --setting dpq --format json",
    "calibrate --epsilon 1 --delta 1e-5 --steps 1e4 --sample-rate 0.01 --format json",
    "calibrate --epsilon 1 --delta 1e-5 --steps 1e4 --sample-rate 0.01 --accountant rdp",
    "calibrate --epsilon 1 --delta 1e-5 --steps 1e4 --sample-rate 0.01 --accountant pld",
    "calibrate --epsilon 1 --delta 1e-5 --steps 1e4 --sample-rate 0.01 --accountant kov",
    "calibrate --epsilon 1 --delta 1e-5 --sample-rate 1e-12",
    "epsilon --sigma 3 --delta 1e-5 --steps 100 --accountant rdp",
    "epsilon --sigma 3 --delta 1e-5 --steps 100",
    "epsilon --sigma 1.1 --delta 1e-5 --steps 1000 --sample-rate 0.01 --format json",
    "epsilon --history examples/runs.json --delta 1e-5",
    "epsilon --history examples/runs.toml --delta 1e-5 --format json",
    "epsilon --history examples/mixed_relations.json --delta 1e-5",
    "calibrate --history examples/runs.json --epsilon 2 --delta 1e-5",
    "epsilon --sampling shuffle --epochs 10 --batch-size 10 --dataset-size 1000 --sigma 1 --delta 1e-5",
    "table --setting gaussian --sampling shuffle --epochs 10 --batch-size 10 --dataset-size 1000",
    "verify --budget quick",
    "verify --budget quick --format json",
    "train dpq --samples 2000 --epsilon 0.9 --delta 1e-4 --seed 0 --format json",
    "train dpq --samples 2000 --epsilon 0.9 --delta 1e-4 --seed 0 --environment random-peak",
    "train dpq --method select --epsilon 7 --delta 1e-5 --seed 0 --format json",
    "train dpq --method select --epsilon 7 --delta 1e-5 --seeds 0-3",
    "train dpq --method fqi --epsilon 7 --delta 1e-5 --seed 1 --format json",
    "train dpq --method fqi-dpsgd --privacy-unit transition --epsilon 1 --delta 1e-5 --seed 0 --format json",
    "train dpq --method fqi-dpsgd --privacy-unit episode --epsilon 1 --delta 1e-5 --seed 0",
    "train gpope --domain chain --trajectories 1000 --epsilon 0.1 --delta 1e-5 --seed 0 --format json",
    "train gpope --domain chain --trajectories 300 --epsilon 1 --delta 1e-5 --seeds 0-2",
    "train pucb --states 5 --actions 2 --horizon 5 --episodes 1000 --epsilon 1 --seed 0 --format csv",
    "train pucb --states 3 --actions 2 --horizon 3 --episodes 500 --epsilon 100 --seed 2 --format json",
    "train ucbvi --epsilon 10 --delta 1e-5 --episodes 2000 --seed 0 --format json",
    "train ucbvi --epsilon 10 --delta 1e-5 --episodes 1000 --seeds 0-2",
    "frontier --help",
    # refusals: one line, exit 2
    "calibrate --epsilon -1 --delta 1e-5",
    "epsilon --sigma 0 --delta 1e-5",
    "table --delta 2",
    "train dpq --privacy-unit transition --epsilon 1",
    "train pucb --epsilon 0",
    "--version",
    "--help",
]
SUBCOMMANDS = ["table", "calibrate", "epsilon", "plot", "verify", "frontier", "train",
               "train dpq", "train gpope", "train pucb", "train ucbvi"]
COMMANDS += [f"{s} --help" for s in SUBCOMMANDS]


# What differs between two runs of the same code: wall-clock times and progress bars. They are masked.
_MASKS = [
    (re.compile(r'"seconds": [0-9.e+-]+'), '"seconds": T'),
    (re.compile(r'\b[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)? ?s\b'), 'T s'),
    (re.compile(r'"timings": \{[^}]*\}'), '"timings": T'),
]


def _normalise(text: str) -> str:
    lines = [line for line in re.split(r"[\r\n]", text) if " eta " not in line]
    text = "\n".join(lines)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def run(command: str) -> str:
    env = dict(os.environ, COLUMNS="100", PYTHONHASHSEED="0", MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-m", "privcal", *command.split()], capture_output=True,
                          text=True, env=env, timeout=1800)
    digest = hashlib.sha256(f"{done.returncode}\0{_normalise(done.stdout)}\0{_normalise(done.stderr)}".encode()).hexdigest()
    return f"{digest[:16]}  rc={done.returncode}  privcal {command}"


def main() -> None:
    workers = int(os.environ.get("HASH_JOBS", "2"))
    with ThreadPoolExecutor(workers) as pool:
        for line in pool.map(run, COMMANDS):
            print(line, flush=True)


if __name__ == "__main__":
    main()
