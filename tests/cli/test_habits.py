"""CLI habits: -V, checks --layer/--tag, shell completion of examples, presets and check ids."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from clirun import cli as run_cli

from ascend_audit import __version__


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env={**os.environ, **(env or {})})


def complete(words: str) -> list[str]:
    """What bash completion offers for the last of WORDS (click's bash_complete protocol)."""
    argv = words.split()
    out = subprocess.run(
        [sys.executable, "-c", "from ascend_audit.cli import main; main(prog_name='ascend-audit')"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "_ASCEND_AUDIT_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(argv) - (0 if words.endswith(" ") else 1)),
        },
    )
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line]


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_short_and_long(flag: str) -> None:
    out = cli(flag)
    assert out.returncode == 0 and __version__ in out.stdout


def test_checks_by_layer_and_tag() -> None:
    out = cli("checks", "--layer", "driver")
    assert out.returncode == 0
    rows = out.stdout.splitlines()
    assert rows and all(r.split()[1] == "driver" for r in rows)
    net = cli("checks", "--tag", "network").stdout.splitlines()
    assert net and all(r.startswith("DRV-NET-") for r in net)
    crit = cli("checks", "--layer", "driver", "--tag", "critical").stdout.splitlines()
    assert crit and all(r.split()[2] == "critical" for r in crit)
    both = cli("checks", "--tag", "network,storage").stdout
    assert "DRV-NET-001" in both and "DRV-STOR-001" in both
    bad = cli("checks", "--tag", "no-such-tag")
    assert bad.returncode == 2 and "no-such-tag" in bad.stderr and "network" in bad.stderr


def test_completion_offers_examples_presets_and_check_ids() -> None:
    assert complete("ascend-audit run --example fi") == ["firmware-mismatch"]
    assert "a3-vllm-decode" in complete("ascend-audit run --preset a3-")
    assert complete("ascend-audit explain DRV-VER-") == ["DRV-VER-001", "DRV-VER-002"]
    only = complete("ascend-audit run --only DRV-NPU-001,DRV-VER-")
    assert only == ["DRV-NPU-001,DRV-VER-001", "DRV-NPU-001,DRV-VER-002"]
    assert "checks" in complete("ascend-audit ch")
    assert "network" in complete("ascend-audit checks --tag net")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script(shell: str) -> None:
    out = cli("completion", shell)
    assert out.returncode == 0 and "_ASCEND_AUDIT_COMPLETE" in out.stdout
