"""Peer: Huawei's msprechecker. Runs it when installed and holds our comparison table to its items.

Every `sys` / `env` rule key of its bundled presets and every checker class must appear in
benchmarks/msprechecker_comparison.md, so a new msprechecker item shows up as a failing test.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "benchmarks" / "msprechecker_comparison.md"


def _package() -> Path:
    spec = importlib.util.find_spec("msprechecker")
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("CI") == "true":
            pytest.fail("msprechecker is not installed (.ci/setup-peers installs it)")
        pytest.skip("msprechecker not installed: pip install msprechecker")
    return Path(next(iter(spec.submodule_search_locations)))


def items(pkg: Path) -> set[str]:
    """Rule keys of its presets (sys, env) and its checker classes."""
    yaml = pytest.importorskip("yaml")
    found: set[str] = set()
    for f in pkg.joinpath("presets").rglob("*.yaml"):
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        for section in ("sys", "env"):
            if isinstance(doc, dict) and isinstance(doc.get(section), dict):
                found.update(doc[section])
    for f in pkg.joinpath("checkers").rglob("*.py"):
        found.update(re.findall(r"^class (\w+Checker)\b", f.read_text(encoding="utf-8"), re.M))
    return found - {"BaseChecker", "NodeChecker"}


def test_every_msprechecker_item_is_in_our_comparison_table():
    pkg = _package()
    table = TABLE.read_text(encoding="utf-8")
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and "---" not in ln]
    missing = sorted(i for i in items(pkg) if not any(i in r for r in rows))
    assert not missing, f"msprechecker items absent from {TABLE.name}: {missing}"
    covered = [r for r in rows if re.search(r"\b(DRV|OPR|FWK)-[A-Z]+-\d{3}\b", r)]
    assert len(covered) >= 10


def test_msprechecker_precheck_runs_here_and_reports_system_items(tmp_path):
    _package()
    exe = shutil.which("msprechecker") or shutil.which(
        "msprechecker", path=os.path.dirname(sys.executable)
    )
    if exe is None:
        pytest.skip("msprechecker console script not on PATH")
    proc = subprocess.run(
        [exe, "precheck"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0  # it exits 0 whatever it finds: the gap DRV-* exit codes fill
    report = proc.stdout + proc.stderr  # it reports on stderr
    assert "SYSTEM CHECK REPORT" in report
    for key in ("virtual_machine", "transparent_hugepage"):
        if key in report:
            assert key in TABLE.read_text(encoding="utf-8")
