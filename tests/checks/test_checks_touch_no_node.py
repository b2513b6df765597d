"""Checks judge facts only: no module under checks/ touches the node or the auditing machine.

Node access belongs in gatherers (ascend_audit/gather/); a check that reads the auditing
machine's user database, opens a file or runs a process gives different verdicts on a replay.
"""

from __future__ import annotations

import re
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[2] / "checks"
NODE_ACCESS = {
    "the Host": re.compile(r"\bctx\.host\b|\.host\.(run|read_text|listdir|stat|glob|udev)\b"),
    "the user database": re.compile(r"^\s*(import|from)\s+(pwd|grp)\b|\b(pwd|grp)\.get", re.M),
    "the auditing process's identity": re.compile(r"\bos\.(geteuid|getuid|getegid|getgroups)\b"),
    "files": re.compile(r"(?<![\w.])open\(|\bos\.(open|stat|lstat|listdir|scandir|access)\("),
    "processes": re.compile(r"^\s*(import|from)\s+subprocess\b|\bos\.(system|popen)\(", re.M),
}


def _findings(text: str) -> list[str]:
    return [what for what, rx in NODE_ACCESS.items() if rx.search(text)]


def test_no_check_touches_the_node():
    modules = sorted(CHECKS.rglob("*.py"))
    assert len(modules) > 10, f"checks/ not found beside the tests ({CHECKS})"
    bad = {
        str(p.relative_to(CHECKS)): found for p in modules if (found := _findings(p.read_text()))
    }
    assert bad == {}, f"checks touching the node (move it into a gatherer): {bad}"


def test_the_grep_sees_each_kind_of_node_access():
    samples = {
        "the Host": "x = ctx.host.read_text('/etc/passwd')",
        "the user database": "import pwd",
        "the auditing process's identity": "uid = os.geteuid()",
        "files": "with open(path) as fh:",
        "processes": "import subprocess",
    }
    for what, line in samples.items():
        assert what in _findings(line), (what, line)
    assert _findings("ok = can_open(node, user)") == []
