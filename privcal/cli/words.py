"""The command line's words: a library message with its argument names replaced by the flags that set them,
on one line (every refusal and warning of ``privcal`` goes through :func:`user_words` or :func:`error_words`)."""

from __future__ import annotations

import re

__all__ = ["user_words", "error_words"]


#: The library's words for what the command line calls by a flag (advice must name a flag that exists).
_FLAG_WORDS = (
    (re.compile(r"relax accuracy \(now ([^)]*)\) or value_discretization, or raise memory_limit"),
     r"relax --pld-accuracy (now \1) or raise --memory-limit (in MiB)"),
    (re.compile(r"memory_limit = (\S+) MB"), r"--memory-limit \1 (MiB)"),
    (re.compile(r"\bmemory_limit\b"), "--memory-limit"),
    (re.compile(r"\baccuracy (?=\d)"), "--pld-accuracy "),
    (re.compile(r"\b(neighbouring|sampling|counter_noise|error_bound|budget_split|variant|bound|accountant|"
                r"unknown)='(\w+)'"), lambda m: f"--{m[1].replace('_', '-')} {m[2]}"),
    (re.compile(r"\b\d{13,}\b"), lambda m: f"{float(m[0]):.3g}"),  # a count of grid cells, say
    (re.compile(r"\bprivacy_unit '([\w-]+)'"), r"--privacy-unit \1"),
)


#: Arguments of the library whose flag has the same name (``batch_size`` is ``--batch-size``): an error that
#: starts with one of them ("epsilon must be in (0, 1e+06], got 1e+300") names the flag instead.
_SAME_AS_FLAG = ("epsilon", "delta", "sigma", "sensitivity", "steps", "sample_rate", "samples", "batch_size", "lr",
                 "lipschitz", "resets", "actions", "update_clip", "gamma", "trajectories", "iterations",
                 "episodes", "states", "horizon", "clip", "step_size", "failure_probability", "accuracy",
                 "environment")
_FIRST_WORD = re.compile(rf"^({'|'.join(_SAME_AS_FLAG)}) (must|needs|applies)\b")


def error_words(text: object) -> str:
    """An error message in the command line's words (:func:`user_words`, its first word a flag).

    Args:
        text: the message (any object; its str is used).

    Returns:
        the message on one line, in flags.
    """
    out = user_words(text)
    return _FIRST_WORD.sub(lambda m: f"--{m[1].replace('_', '-')} {m[2]}", out)


def user_words(text: object) -> str:
    """``text`` on one line (messages of numpy/scipy warnings and OS errors may span several), the
    library's argument names replaced by the flags that set them.

    Args:
        text: the message (any object; its str is used).

    Returns:
        the message on one line, in flags.
    """
    out = " ".join(str(text).split())
    for pattern, repl in _FLAG_WORDS:
        out = pattern.sub(repl, out)
    return out
