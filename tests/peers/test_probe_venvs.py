"""Peer: the real probe in real venvs with torch 2.13.0 and torch_npu, on a machine without CANN.

.ci/setup-peers builds venv A (torch_npu 2.13.0, matching) and venv B (torch_npu 2.9.0,
mismatched) under $ASCEND_AUDIT_PROBE_VENVS or ~/.cache/ascend-audit-ci/probe-venvs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clirun import cli as run_cli

from ascend_audit.model import Status

DEFAULT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
VENVS = Path(
    os.environ.get("ASCEND_AUDIT_PROBE_VENVS") or DEFAULT / "ascend-audit-ci" / "probe-venvs"
)


def venv_python(name: str) -> Path:
    """The venv's interpreter; in CI its absence fails the test, elsewhere it skips."""
    py = VENVS / name / "bin" / "python"
    if py.exists():
        return py
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"probe venv {py} is missing in CI (.ci/setup-peers builds it)")
    pytest.skip(f"probe venv {py} not built (run bash .ci/setup-peers)")


def audit(python: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    # the CLI in-process; the probe it starts in the venv's interpreter is the real child
    proc = run_cli("run", "--layers", "framework", "--python", str(python), "--json", str(out))
    assert proc.returncode == 1, proc.stderr  # the framework layer is not ready without CANN
    assert "Traceback" not in proc.stderr
    return json.loads(out.read_text())


def stack(report: dict) -> dict:
    return next(r for r in report["results"] if r["id"] == "FWK-STACK-001")


def test_venv_a_torch_npu_installed_matches_but_cannot_load(tmp_path):
    report = audit(venv_python("torch-npu-match"), tmp_path)
    r = stack(report)
    assert r["status"] == Status.FAIL.value
    assert "torch_npu 2.13.0 installed (matches torch)" in r["summary"]
    assert "CANN not installed or not sourced (libhccl.so missing)" in r["summary"]
    probe = next(e for e in r["evidence"] if e["kind"] == "probe")
    assert probe["values"]["torch_npu_status"] == "cann_missing"
    assert report["inventory"]["versions"]["torch_npu"] == "2.13.0"
    assert report["inventory"]["versions"]["torch"].startswith("2.13.0")


def test_venv_b_is_reported_as_mismatch(tmp_path):
    report = audit(venv_python("torch-npu-mismatch"), tmp_path)
    r = stack(report)
    assert r["status"] == Status.FAIL.value
    assert "torch_npu 2.9.0 installed (does NOT match torch)" in r["summary"]
    assert "built for torch 2.9.0" in r["summary"]
    assert any(
        e["source"].startswith("ascend_audit/data/compat_torch_npu.csv:") for e in r["evidence"]
    )
