"""Core checks (`core = true`): a layer judged on other evidence is not READY while its core
check SKIPs; a layer with no evidence at all stays MISSING; a waiver can accept the gap."""

from __future__ import annotations

import datetime as dt

import pytest

from ascend_audit.context import Context
from ascend_audit.engine import Selection, exit_code, run_audit
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status, Verdict, passed, skip
from ascend_audit.policy import parse_policy
from ascend_audit.registry import Registry, RegistryError, check, load_registry

DAY = dt.date(2026, 12, 2)


def _registry(core_result, other_result=None):
    @check("TST-CORE-001", layer="driver", title="the core proof", core=True)
    def core(ctx):
        return core_result

    reg = Registry()
    reg.add_function(core, "test")
    if other_result is not None:

        @check("TST-SIDE-001", layer="driver", title="a side check")
        def side(ctx):
            return other_result

        reg.add_function(side, "test")
    return reg


def _audit(tmp_path, reg, policy=""):
    ctx = Context(LiveHost(str(tmp_path)), parse_policy(policy))
    return run_audit(reg, ctx, Selection(layers=("driver",)), today=DAY)


def test_core_skip_beside_a_pass_fails_the_layer_naming_the_gap(tmp_path):
    report = _audit(tmp_path, _registry(skip("no serving log"), passed("versions fine")))
    r = report.result("TST-CORE-001")
    assert r.status is Status.FAIL
    assert r.summary == (
        "required check TST-CORE-001 could not run (the driver layer is READY only on its "
        "proof): no serving log"
    )
    assert "ascend-audit explain TST-CORE-001" in r.remediation
    assert report.layer("driver").verdict is Verdict.NOT_READY
    assert "TST-CORE-001" in report.layer("driver").reason
    assert exit_code(report) == 1


def test_core_pass_is_ready(tmp_path):
    report = _audit(tmp_path, _registry(passed("engine up"), passed("versions fine")))
    assert report.layer("driver").verdict is Verdict.READY


def test_nothing_to_judge_stays_missing(tmp_path):
    report = _audit(tmp_path, _registry(skip("no serving log"), skip("no versions")))
    assert report.result("TST-CORE-001").status is Status.SKIP
    assert report.layer("driver").verdict is Verdict.MISSING


def test_a_waiver_accepts_the_gap_with_its_reason(tmp_path):
    policy = (
        '[[waivers]]\ncheck = "TST-CORE-001"\nreason = "engine starts after go-live"\n'
        'expires = "2027-01-01"\n'
    )
    report = _audit(tmp_path, _registry(skip("no serving log"), passed("ok")), policy)
    r = report.result("TST-CORE-001")
    assert r.status is Status.WAIVED and "engine starts after go-live" in r.summary
    assert report.layer("driver").verdict is Verdict.READY


def test_core_must_be_a_boolean():
    @check("TST-CORE-002", layer="driver", title="t", core="yes")
    def bad(ctx):
        return passed("x")

    with pytest.raises(RegistryError, match="core must be true or false"):
        Registry().add_function(bad, "test")


def test_the_framework_layer_rests_on_the_lifecycle_check():
    reg = load_registry()
    assert [s.id for s in reg.all() if s.core] == ["FWK-LIFE-001"]
    assert reg.get("FWK-LIFE-001").to_dict()["core"] is True
