"""Stand-in node commands for tests: scripts on PATH that print recorded outputs per argv.

They are POSIX shell scripts whose answers sit in files beside them: starting `sh` and `cat`
costs a tenth of the CPU of even `python -S`, and suites start thousands of stand-ins.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

_CAT, _SLEEP = shutil.which("cat") or "/bin/cat", shutil.which("sleep") or "/bin/sleep"


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _answer(base: Path, entry: dict) -> str:
    """The shell lines that give one recorded answer: sleep, stdout, stderr, exit status."""
    lines = []
    if entry.get("sleep"):
        lines.append(f"{_SLEEP} {float(entry['sleep'])!r}")
    for key, redirect in (("stdout", ""), ("stderr", " >&2")):
        if entry.get(key):
            out = Path(f"{base}.{key}")
            out.write_bytes(entry[key].encode("utf-8"))
            lines.append(f"{_CAT} {_sh(str(out))}{redirect}")
    lines.append(f"exit {int(entry.get('rc', 0))}")
    return "\n    ".join(lines)


def standin(bindir: Path, name: str, outputs: dict[str, str | dict]) -> Path:
    """Write a stand-in `name` into bindir answering `argv[1:]` joined by spaces.

    Each value is stdout text, or a dict with stdout / stderr / rc / sleep; "*" answers anything.
    """
    bindir.mkdir(parents=True, exist_ok=True)
    table = {k: ({"stdout": v} if isinstance(v, str) else v) for k, v in outputs.items()}
    answers = bindir / f".{name}.answers"
    answers.mkdir(exist_ok=True)
    cases = []
    # exact argv first, the catch-all "*" last: the first matching pattern answers
    for i, (key, entry) in enumerate(sorted(table.items(), key=lambda kv: kv[0] == "*")):
        pattern = "*" if key == "*" else _sh(key)
        cases.append(f"  {pattern})\n    {_answer(answers / str(i), entry)} ;;")
    if "*" not in table:
        cases.append('  *)\n    echo "stand-in: no recorded output for: $*" >&2\n    exit 2 ;;')
    script = bindir / name
    script.write_text('#!/bin/sh\ncase "$*" in\n' + "\n".join(cases) + "\nesac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return script


def node_env(bindir: Path) -> dict[str, str]:
    """An environment whose PATH finds the stand-ins first (and nothing Ascend-like after)."""
    return dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")


def run_node(sysroot: Path, bindir: Path, policy_text: str = "", only=(), layers=None, inputs=None):
    """Audit a fake node in-process and return the Report."""
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, run_audit
    from ascend_audit.host.live import LiveHost
    from ascend_audit.inventory import build_inventory
    from ascend_audit.model import LAYERS
    from ascend_audit.policy import parse_policy
    from ascend_audit.registry import load_registry

    host = LiveHost(str(sysroot), timeout=5.0, environ=node_env(bindir))
    ctx = Context(host, parse_policy(policy_text), inputs or Inputs())
    sel = Selection(only=frozenset(only), layers=tuple(layers or LAYERS), gate=False)
    return run_audit(load_registry(entry_points=False), ctx, sel, inventory=build_inventory)


def run_inputs(tmp_path: Path, layers=("operator", "framework"), **inputs):
    """Audit an empty fake node (no NPU, no stand-in commands) on user inputs alone, ungated:
    `serving_logs=[path, …]`, `serving_configs=[…]`, … as the Inputs fields are named."""
    from ascend_audit.context import Inputs

    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    bindir.mkdir(exist_ok=True)
    ins = Inputs(**{k: tuple(map(str, v)) for k, v in inputs.items()})
    return run_node(root, bindir, "", layers=list(layers), inputs=ins)
