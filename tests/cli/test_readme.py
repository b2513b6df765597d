"""The README's examples stay true: its policy parses, its commands name real options."""

from __future__ import annotations

import re
from pathlib import Path

from ascend_audit.policy import parse_policy

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_readme_policy_example_is_a_valid_policy():
    block = re.search(r"```toml\n(.*?)```", README, re.S)
    assert block, "the README lost its policy example"
    policy = parse_policy(block.group(1), "README.md")
    assert policy["driver.expected_npu_count"] == 8
    assert policy.waivers and policy.waivers[0].check == "DRV-TOPO-001"


def test_readme_has_the_two_fresh_machine_commands():
    assert "pip install . && ascend-audit run --example atlas-800t-a2-ready" in README
    assert "pip install -e '.[test]' && pytest" in README
    # Debian 12 / Ubuntu 24.04 refuse a system-wide pip install: both commands make a venv first
    assert README.count("python3 -m venv .venv && . .venv/bin/activate && pip install") == 2
    ci = (Path(__file__).resolve().parents[2] / ".ci/run").read_text(encoding="utf-8")
    assert "pip install -q -e '.[test]'" in ci and "pytest" in ci
