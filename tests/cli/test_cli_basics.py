"""The command line on a machine without NPUs: exit codes, usage errors, no tracebacks."""

from __future__ import annotations

import json
import os
import time

import jsonschema
from ascend_audit.reports.json_report import schema
from clirun import cli as run_cli
from clirun import cli_process


def audit(*args, env=None, timeout=120):
    full_env = dict(os.environ, **(env or {}))
    return run_cli(*args, env=full_env)


def test_plain_run_without_npu_fails_driver_and_blocks_the_rest(tmp_path):
    empty_root = tmp_path / "root"
    empty_root.mkdir()
    start = time.monotonic()
    out = audit(
        "run",
        "--sysroot",
        str(empty_root),
        "--json",
        str(tmp_path / "r.json"),
        env={"PATH": "/usr/bin:/bin"},
    )
    assert time.monotonic() - start < 30
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert "no npu-smi" in out.stdout and "no /dev/davinci" in out.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, schema())
    verdicts = {layer["name"]: layer["verdict"] for layer in report["layers"]}
    assert verdicts == {"driver": "NOT_READY", "operator": "BLOCKED", "framework": "BLOCKED"}


def test_help_and_version_exit_0():
    out = audit("--help")
    assert out.returncode == 0 and "Exit codes" in out.stdout
    out = audit("--version")
    assert out.returncode == 0 and "ascend-audit" in out.stdout


def test_usage_errors_exit_2_and_name_the_option(tmp_path):
    bad_policy = tmp_path / "p.toml"
    bad_policy.write_text("[driver]\nexpected_npus = 8\n")
    cases = [
        (("run", "--policy", str(bad_policy)), "unknown key 'expected_npus'"),
        (("run", "--layers", "driver,gpu"), "--layers"),
        (("run", "--only", "NOPE-1"), "--only: unknown check id NOPE-1"),
        (("run", "--example", "no-such-example"), "--example"),
        (("run", "--fail-on", "sometimes"), "--fail-on"),
        (("explain", "NOPE-1"), "unknown check id"),
        (("run", "--snapshot", str(bad_policy)), "--snapshot"),
    ]
    for args, needle in cases:
        out = audit(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert needle in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_internal_failure_exits_3_without_traceback(tmp_path):
    # an unwritable output is a usage error now (exit 2, checked before the audit); a bug in
    # the engine itself is what exit 3 is for: a drop-in (trusted code) breaks the engine
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "breaks_engine.py").write_text(
        "import ascend_audit.engine as engine\nengine.overall_verdict = lambda layers: 1 / 0\n"
    )
    out = cli_process(
        "run",
        "--sysroot",
        str(tmp_path),
        "--checks-dir",
        str(checks),
        env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert out.returncode == 3
    assert "internal error" in out.stderr and "Traceback" not in out.stderr


def test_checks_and_explain_teach(tmp_path):
    out = audit("checks")
    assert out.returncode == 0 and "DRV-NPU-001" in out.stdout
    out = audit("explain", "DRV-NPU-001")
    assert out.returncode == 0
    assert "Why it matters" in out.stdout and "How to fix" in out.stdout
