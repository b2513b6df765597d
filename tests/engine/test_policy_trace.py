"""Thresholds you can trace: the report carries the effective policy values beside the digest,
and a command-line override makes a new policy (new digest) instead of changing one."""

from __future__ import annotations

import json

import pytest
from clirun import cli as run_cli

from ascend_audit.policy import PolicyError, default_policy, parse_policy

TEXT = "[operator]\naicpu_share_fail = 0.005\n"


def test_to_dict_carries_every_effective_value_with_the_digest():
    p = parse_policy(TEXT, "p.toml")
    d = p.to_dict()
    assert d["digest"] == p.digest and d["source"] == "p.toml"
    assert d["values"]["operator.aicpu_share_fail"] == 0.005  # as given
    assert d["values"]["operator.layout_share_warn"] == 0.05  # a default, shown too
    assert d["values"]["operator.aicpu_allowlist"] == []  # JSON data, not a tuple
    assert set(d["values"]) == set(p.values) and d["overrides"] == {}
    json.dumps(d)


def test_an_override_makes_a_new_policy_with_its_own_digest():
    p = parse_policy(TEXT, "p.toml")
    q = p.with_overrides({"audit.command_timeout": 3.0}, "--timeout")
    assert p["audit.command_timeout"] == 10.0 and p.overrides == {}  # unchanged
    assert q["audit.command_timeout"] == 3.0 and q.overrides == {
        "audit.command_timeout": "--timeout"
    }
    assert q.digest != p.digest
    assert q.digest == p.with_overrides({"audit.command_timeout": 3.0}, "--timeout").digest
    assert p.with_overrides({}, "--timeout") is p


def test_an_override_of_an_unknown_key_is_refused():
    with pytest.raises(PolicyError, match="no_such"):
        default_policy().with_overrides({"audit.no_such": 1}, "--x")


def _policy_of(tmp_path, *extra: str) -> dict:
    out = tmp_path / f"r{len(extra)}.json"
    run_cli("run", "--example", "atlas-800t-a2-ready", "--json", str(out), "-q", *extra)
    return json.loads(out.read_text())["policy"]


def test_the_cli_timeout_shows_in_the_report_as_an_override(tmp_path):
    plain, timed = _policy_of(tmp_path), _policy_of(tmp_path, "--timeout", "7")
    assert plain["values"]["audit.command_timeout"] == 10.0 and plain["overrides"] == {}
    assert timed["values"]["audit.command_timeout"] == 7.0
    # --timeout bounds npu-smi too (issue 12: a hung NPU ends within the documented bound)
    assert timed["overrides"] == {
        "audit.command_timeout": "--timeout",
        "driver.npu_smi_timeout": "--timeout",
    }
    assert timed["digest"] != plain["digest"]
