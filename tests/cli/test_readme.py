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
    assert "pip install -q -e '.[test,lint]'" in ci and "pytest" in ci


def test_test_extra_holds_no_lint_tools_and_the_node_install_no_pyarrow():
    """[test] is what the tests need, [lint] what .ci/lint runs; pyarrow is the [arrow] extra."""
    import re

    from ascend_audit.registry import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]

    def names(reqs):
        return {re.split(r"[<>=;\[ ]", r, maxsplit=1)[0].lower() for r in reqs}

    lint_tools = {"ruff", "mypy", "vermin", "import-linter"}
    assert names(extras["lint"]) == lint_tools
    assert not names(extras["test"]) & lint_tools
    assert "pyarrow" not in names(project["dependencies"]) and "pyarrow" in names(extras["arrow"])
    lint = (root / ".ci" / "lint").read_text(encoding="utf-8")
    assert all(tool in lint for tool in ("ruff", "mypy", "lint-imports"))
