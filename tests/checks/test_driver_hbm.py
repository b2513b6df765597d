"""DRV-HBM-001 on facts built directly: real npu-smi tables, a mixed-card node, no HBM column."""

from __future__ import annotations

import pytest
from ascend_audit.checks.driver.hbm import same_hbm
from checkfacts import judge
from fakenode import atlas_800_a2, npu_smi_info
from shared_fixtures import fixture_cases

from ascend_audit.facts.driver_scan import NPU_SMI, NpuSmiRun
from ascend_audit.facts.npu_smi import parse_info
from ascend_audit.host.base import CommandResult
from ascend_audit.model import Status


def _run(text: str) -> NpuSmiRun:
    result = CommandResult(("npu-smi", "info"), "ok", 0, text)
    return NpuSmiRun(result, parse_info(text) if text.strip() else None)


@pytest.mark.parametrize("path", fixture_cases("npu_smi_info", "*.txt"))
def test_real_tables_pass_with_one_hbm_size_or_skip_without_the_column(path):
    out = judge(same_hbm, {NPU_SMI: _run(path.read_text(errors="replace"))})
    if path.name.startswith("310P"):  # Memory-Usage only: no HBM to compare
        assert out.status is Status.SKIP and "no HBM capacity" in out.summary
    else:
        assert out.status is Status.PASS, out.summary
        assert "each with" in out.summary and "MB HBM" in out.summary


def test_a_swapped_smaller_card_warns_naming_it():
    npus = atlas_800_a2(8)
    npus[5].hbm_total = 32768
    out = judge(same_hbm, {NPU_SMI: _run(npu_smi_info(npus))})
    assert out.status is Status.WARN
    assert "32768 MB, 65536 MB" in out.summary and "NPU 5 chip 0 with 32768 MB" in out.summary
    assert out.metrics == {"max_hbm_mb": 65536, "min_hbm_mb": 32768}
    assert out.evidence[0].values["hbm_total_mb"]["NPU 5 chip 0"] == 32768


def test_no_table_skips():
    out = judge(same_hbm, {NPU_SMI: _run("")})
    assert out.status is Status.SKIP and "no chip table" in out.summary
