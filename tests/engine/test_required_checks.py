"""audit.required_checks: a required check that SKIPs makes its layer NOT_READY with the reason."""

from __future__ import annotations

import pytest
from clirun import cli as run_cli

from ascend_audit.context import Context
from ascend_audit.engine import Selection, exit_code, run_audit
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status, Verdict, passed, skip
from ascend_audit.policy import PolicyError, parse_policy
from ascend_audit.presets import preset_text
from ascend_audit.registry import Registry, check


@check("TST-NET-001", layer="driver", title="RoCE stand-in")
def net_skip(ctx):
    return skip("hccn_tool not found")


@check("TST-DRV-001", layer="driver", title="driver probe")
def drv_ok(ctx):
    return passed("driver fine")


@check("TST-OPR-001", layer="operator", title="operator probe")
def opr_ok(ctx):
    return passed("operator fine")


def audit(tmp_path, policy: str):
    reg = Registry()
    for fn in (net_skip, drv_ok, opr_ok):
        reg.add_function(fn, "test")
    ctx = Context(LiveHost(str(tmp_path)), parse_policy(policy))
    return run_audit(reg, ctx, Selection(layers=("driver", "operator")))


def test_a_skip_is_fine_when_not_required(tmp_path):
    report = audit(tmp_path, "")
    assert report.layer("driver").verdict is Verdict.READY


def test_required_check_that_skips_makes_its_layer_not_ready_naming_why(tmp_path):
    report = audit(tmp_path, '[audit]\nrequired_checks = ["TST-NET-001"]\n')
    r = report.result("TST-NET-001")
    assert r.status is Status.FAIL
    assert r.summary == "required check TST-NET-001 could not run: hccn_tool not found"
    driver = report.layer("driver")
    assert driver.verdict is Verdict.NOT_READY
    assert "required check TST-NET-001 could not run: hccn_tool not found" in driver.reason
    assert report.layer("operator").verdict is Verdict.BLOCKED
    assert exit_code(report) == 1


@pytest.mark.parametrize("bad", ['["drv-net-1"]', '"DRV-NET-001"', "[1]"])
def test_required_checks_are_validated(bad):
    with pytest.raises(PolicyError):
        parse_policy(f"[audit]\nrequired_checks = {bad}\n")


@pytest.mark.parametrize(
    ("preset", "required"),
    [
        ("a2-mindie", True),
        ("a3-mindie", True),
        ("a2-vllm-prefill", True),
        ("a3-vllm-decode", True),
        ("a2-vllm", False),
    ],
)
def test_multi_node_presets_require_roce_and_rank_table(preset, required):
    checks = set(parse_policy(preset_text(preset) or "")["audit.required_checks"])
    want = {"DRV-NET-001", "DRV-NET-002", "DRV-RANK-001"}
    assert (checks >= want) is required


def test_unknown_required_check_is_a_usage_error(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[audit]\nrequired_checks = ["DRV-NOPE-001"]\n')
    proc = run_cli("run", "--example", "atlas-800t-a2-ready", "--policy", str(p))
    assert proc.returncode == 2, proc.stderr
    assert "DRV-NOPE-001" in proc.stderr and "Traceback" not in proc.stderr
