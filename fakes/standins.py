"""Stand-in node commands for tests: scripts on PATH that print recorded outputs per argv.

They run with `python -S`: the dispatcher needs only the standard library, and skipping site
(the editable install's .pth hooks) makes each call about 3x cheaper.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

_DISPATCH = """#!{python} -S
import json, sys, time
table = json.load(open({table!r}))
key = " ".join(sys.argv[1:])
entry = table.get(key, table.get("*"))
if entry is None:
    sys.stderr.write("stand-in: no recorded output for: " + key + "\\n")
    sys.exit(2)
time.sleep(entry.get("sleep", 0))
sys.stdout.write(entry.get("stdout", ""))
sys.stderr.write(entry.get("stderr", ""))
sys.exit(entry.get("rc", 0))
"""


def standin(bindir: Path, name: str, outputs: dict[str, str | dict]) -> Path:
    """Write a stand-in `name` into bindir answering `argv[1:]` joined by spaces.

    Each value is stdout text, or a dict with stdout / stderr / rc / sleep; "*" answers anything.
    """
    bindir.mkdir(parents=True, exist_ok=True)
    table = {k: ({"stdout": v} if isinstance(v, str) else v) for k, v in outputs.items()}
    table_path = bindir / f".{name}.json"
    table_path.write_text(json.dumps(table))
    script = bindir / name
    script.write_text(_DISPATCH.format(python=sys.executable, table=str(table_path)))
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
