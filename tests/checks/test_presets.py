"""Bundled presets: every one is a valid policy, listed with its description, usable by --preset."""

from __future__ import annotations

import subprocess

import pytest
from clirun import cli as run_cli

from ascend_audit.policy import parse_policy
from ascend_audit.presets import list_presets, preset_names, preset_text

WANTED = {"a2-vllm", "a3-vllm", "a2-mindie", "a3-mindie", "a3-vllm-prefill", "a3-vllm-decode"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def test_scenarios_are_bundled_with_descriptions():
    assert set(preset_names()) >= WANTED
    assert all(desc for _name, desc in list_presets())


@pytest.mark.parametrize("name", preset_names())
def test_each_preset_is_a_valid_policy(name):
    policy = parse_policy(preset_text(name) or "", name)
    assert policy["driver.expected_chip_count"] in (8, 16)


def test_a3_and_pd_roles_differ_where_they_should():
    dec = parse_policy(preset_text("a3-vllm-decode") or "")
    pre = parse_policy(preset_text("a3-vllm-prefill") or "")
    assert (pre["cluster.hccl_buffsize_mb"], dec["cluster.hccl_buffsize_mb"]) == (512, 1024)
    assert parse_policy(preset_text("a3-vllm") or "")["driver.expected_chip_count"] == 16


def test_presets_command_lists_and_shows():
    proc = cli("presets")
    assert proc.returncode == 0 and "a3-vllm-decode" in proc.stdout
    shown = cli("presets", "--show", "a2-vllm")
    assert shown.stdout.startswith("# description:")
    assert parse_policy(shown.stdout)["driver.expected_npu_count"] == 8
    assert cli("presets", "--show", "nope").returncode == 2


def test_run_with_preset_and_refusals(tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "run",
        "--sysroot",
        str(tmp_path),
        "--layers",
        "driver",
        "--only",
        "DRV-HOST-002",
        "--preset",
        "a3-vllm",
        "--json",
        str(out),
    )
    assert out.is_file(), proc.stderr
    assert "a3-vllm.toml" in out.read_text()
    both = cli("run", "--preset", "a2-vllm", "--policy", str(out))
    assert both.returncode == 2 and "--preset and --policy together" in both.stderr
    unknown = cli("run", "--preset", "h100")
    assert unknown.returncode == 2 and "no preset 'h100'" in unknown.stderr
