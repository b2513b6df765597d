"""Engine: layer order, gating, --no-gate, MISSING, ERROR isolation, waivers, timing."""

from __future__ import annotations

import datetime as dt

import pytest

from ascend_audit.context import Context
from ascend_audit.engine import Selection, exit_code, run_audit
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status, Verdict, fail, passed, skip, warn
from ascend_audit.policy import default_policy, parse_policy
from ascend_audit.registry import Registry, check


def _registry(*funcs) -> Registry:
    reg = Registry()
    for fn in funcs:
        reg.add_function(fn, "test")
    return reg


@check("T-DRV", layer="driver", title="driver probe")
def drv_ok(ctx):
    return passed("driver fine")


@check("T-DRV-BAD", layer="driver", title="driver broken")
def drv_bad(ctx):
    return fail("driver broken")


@check("T-OPR", layer="operator", title="operator probe")
def opr_ok(ctx):
    return passed("operator fine")


@check("T-OPR-SKIP", layer="operator", title="operator without input")
def opr_skip(ctx):
    return skip("no trace given")


@check("T-FWK", layer="framework", title="framework probe")
def fwk_warn(ctx):
    return warn("framework degraded")


@check("T-FWK-CRASH", layer="framework", title="crashes")
def fwk_crash(ctx):
    raise RuntimeError("boom in check")


def _ctx(tmp_path, policy=None) -> Context:
    return Context(LiveHost(str(tmp_path)), policy or default_policy())


def test_all_ready_is_exit_0(tmp_path):
    report = run_audit(
        _registry(drv_ok, opr_ok), _ctx(tmp_path), Selection(layers=("driver", "operator"))
    )
    assert [layer.verdict for layer in report.layers] == [
        Verdict.READY,
        Verdict.READY,
        Verdict.MISSING,
    ]
    assert report.layers[2].required is False
    assert report.verdict is Verdict.READY
    assert exit_code(report) == 0
    assert all(r.duration_ms >= 0 for r in report.results)


def test_lower_failure_blocks_upper_layers_naming_the_blocker(tmp_path):
    report = run_audit(_registry(drv_bad, opr_ok, fwk_warn), _ctx(tmp_path))
    assert report.layer("driver").verdict is Verdict.NOT_READY
    for name in ("operator", "framework"):
        layer = report.layer(name)
        assert layer.verdict is Verdict.BLOCKED
        assert layer.blocked_by == ["T-DRV-BAD"]
    assert report.result("T-OPR").status is Status.BLOCKED
    assert report.result("T-OPR").blocked_by == ["T-DRV-BAD"]
    assert exit_code(report) == 1


def test_no_gate_judges_upper_layers_but_marks_them(tmp_path):
    report = run_audit(_registry(drv_bad, opr_ok, fwk_warn), _ctx(tmp_path), Selection(gate=False))
    opr = report.result("T-OPR")
    assert opr.status is Status.PASS
    assert opr.on_broken_layer and opr.blocked_by == ["T-DRV-BAD"]
    assert report.layer("operator").verdict is Verdict.READY
    assert "broken layer" in report.layer("operator").reason
    assert report.verdict is Verdict.NOT_READY


def test_layer_with_only_skips_is_missing_and_fails_when_required(tmp_path):
    report = run_audit(
        _registry(drv_ok, opr_skip), _ctx(tmp_path), Selection(layers=("driver", "operator"))
    )
    assert report.layer("operator").verdict is Verdict.MISSING
    assert "no trace given" in report.layer("operator").reason
    assert report.verdict is Verdict.MISSING
    assert exit_code(report) == 1


def test_missing_layer_passes_when_policy_makes_it_optional(tmp_path):
    policy = parse_policy('[audit]\nrequired_layers = ["driver"]\n')
    report = run_audit(
        _registry(drv_ok, opr_skip),
        _ctx(tmp_path, policy),
        Selection(layers=("driver", "operator")),
    )
    assert report.layer("operator").verdict is Verdict.MISSING
    assert report.verdict is Verdict.READY
    assert exit_code(report) == 0


def test_crashing_check_is_error_with_traceback_and_audit_goes_on(tmp_path):
    report = run_audit(_registry(drv_ok, opr_ok, fwk_crash, fwk_warn), _ctx(tmp_path))
    crashed = report.result("T-FWK-CRASH")
    assert crashed.status is Status.ERROR
    assert "boom in check" in crashed.summary
    assert "Traceback" in crashed.evidence[0].excerpt
    assert report.result("T-FWK").status is Status.WARN  # ran after the crash
    assert report.layer("framework").verdict is Verdict.NOT_READY


def test_degraded_exits_0_unless_fail_on_warn(tmp_path):
    report = run_audit(_registry(drv_ok, opr_ok, fwk_warn), _ctx(tmp_path))
    assert report.verdict is Verdict.DEGRADED
    assert exit_code(report, "fail") == 0
    assert exit_code(report, "warn") == 1


def test_valid_waiver_waives_and_unblocks(tmp_path):
    policy = parse_policy(
        '[[waivers]]\ncheck = "T-DRV-BAD"\nreason = "card RMA booked"\nexpires = 2026-12-31\n'
    )
    report = run_audit(
        _registry(drv_bad, opr_ok),
        _ctx(tmp_path, policy),
        Selection(layers=("driver", "operator")),
        today=dt.date(2026, 11, 29),
    )
    res = report.result("T-DRV-BAD")
    assert res.status is Status.WAIVED
    assert res.waiver["reason"] == "card RMA booked" and res.waiver["active"]
    assert report.result("T-OPR").status is Status.PASS
    assert report.verdict is Verdict.READY


def test_expired_waiver_no_longer_waives_and_says_so(tmp_path):
    policy = parse_policy(
        '[[waivers]]\ncheck = "T-DRV-BAD"\nreason = "old"\nexpires = 2026-01-01\n'
    )
    report = run_audit(
        _registry(drv_bad, opr_ok), _ctx(tmp_path, policy), today=dt.date(2026, 11, 29)
    )
    res = report.result("T-DRV-BAD")
    assert res.status is Status.FAIL
    assert "waiver expired on 2026-01-01" in res.summary
    assert res.waiver["active"] is False
    assert report.result("T-OPR").status is Status.BLOCKED


def test_only_and_skip_select_checks(tmp_path):
    reg = _registry(drv_ok, drv_bad, opr_ok)
    report = run_audit(reg, _ctx(tmp_path), Selection(skip=frozenset({"T-DRV-BAD"})))
    assert [r.id for r in report.results] == ["T-DRV", "T-OPR"]
    report = run_audit(reg, _ctx(tmp_path), Selection(only=frozenset({"T-OPR"})))
    assert [r.id for r in report.results] == ["T-OPR"]


def test_secrets_in_outcomes_are_redacted(tmp_path):
    from ascend_audit.model import Evidence

    @check("T-LEAK", layer="driver", title="leaky")
    def leaky(ctx):
        return passed(
            "token hf_abcdefghijklmnopqrstuvwxyz0123",
            [
                Evidence(
                    "config",
                    "vllm --api-key=SEKRET123",
                    "password=hunter2",
                    {"url": "https://u:pw123@x/y", "api_key": "plainvalue42"},
                )
            ],
        )

    report = run_audit(_registry(leaky), _ctx(tmp_path), Selection(layers=("driver",)))
    text = str(report.to_dict())
    for secret in (
        "hf_abcdefghijklmnopqrstuvwxyz0123",
        "SEKRET123",
        "hunter2",
        "pw123",
        "plainvalue42",
    ):
        assert secret not in text


@check("T-DRV-STRKEY", layer="driver", title="asks for a fact by its name")
def drv_string_key(ctx):
    ctx.fact("topology")
    return passed("never")


def test_a_fact_asked_for_by_a_string_is_an_error_naming_the_key_type(tmp_path):
    ctx = Context(LiveHost(str(tmp_path)), default_policy())
    with pytest.raises(TypeError, match="FactKey"):
        ctx.fact("topology")  # type: ignore[arg-type]
    result = run_audit(_registry(drv_string_key), ctx).result("T-DRV-STRKEY")
    assert result.status is Status.ERROR and "FactKey" in result.summary
