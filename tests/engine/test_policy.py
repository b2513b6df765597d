"""Policy: defaults, validation errors naming key and line, waivers."""

from __future__ import annotations

import datetime as dt

import pytest

from ascend_audit.policy import PolicyError, default_policy, load_policy, parse_policy


def test_defaults_cover_every_section():
    p = default_policy()
    assert p["audit.required_layers"] == ("driver", "operator", "framework")
    assert p["operator.aicpu_share_fail"] == 0.05
    assert p["framework.memory_utilization_warn"] == 0.92
    assert p["framework.memory_utilization_fail"] == 0.97


def test_valid_policy_is_read():
    p = parse_policy(
        """
[audit]
required_layers = ["driver", "framework"]
fail_on = "warn"

[driver]
expected_npu_count = 8
require_nvmeof = true

[[waivers]]
check = "DRV-NPU-002"
reason = "chip 3 replaced next week"
expires = 2027-01-15
""",
        "site.toml",
    )
    assert p["driver.expected_npu_count"] == 8
    assert p["audit.fail_on"] == "warn"
    assert p.waivers[0].expires == dt.date(2027, 1, 15)
    assert p.waiver_for("DRV-NPU-002").reason.startswith("chip 3")
    assert p.source == "site.toml" and len(p.digest) == 16


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "[driver]\nexpected_npu_count = 8\nexpectd_cann = '8.0'\n",
            "site.toml:3: unknown key 'expectd_cann'",
        ),
        (
            "[driver]\n\nexpected_npu_count = 0\n",
            "site.toml:3: bad value for driver.expected_npu_count",
        ),
        (
            "[operator]\naicpu_share_fail = 5\n",
            "site.toml:2: bad value for operator.aicpu_share_fail",
        ),
        ("[audit]\nrequired_layers = ['driver', 'kernel']\n", "unknown layer 'kernel'"),
        ("[audit]\nfail_on = 'never'\n", "expected one of warn, fail"),
        ("[gpu]\nx = 1\n", "site.toml:1: unknown section [gpu]"),
        ("[driver\n", "not valid TOML"),
        ("[[waivers]]\ncheck = 'X'\nreason = 'r'\n", "lacks 'expires'"),
        ("[[waivers]]\ncheck = 'X'\nreason = 'r'\nexpires = 'soon'\n", "expires must be a date"),
        (
            "[[waivers]]\ncheck = 'X'\nreason = 'r'\nexpires = 2027-01-01\nowner = 'me'\n",
            "unknown key 'owner'",
        ),
        (
            "[framework]\nmemory_utilization_warn = 0.98\nmemory_utilization_fail = 0.9\n",
            "must not exceed",
        ),
    ],
)
def test_bad_policies_name_key_and_line(text, needle):
    with pytest.raises(PolicyError) as exc:
        parse_policy(text, "site.toml")
    assert needle in str(exc.value)


def test_unreadable_and_binary_policy_files(tmp_path):
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(str(tmp_path / "absent.toml"))
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy(str(bad))
