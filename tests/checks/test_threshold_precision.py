"""Thresholds print with the precision the policy gave them (0.005 is 0.5%, never 0%)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ascend_audit.checks.operator.aicpu import aicpu_operators
from ascend_audit.checks.operator.layout import layout_conversions
from ascend_audit.checks.wording import percent
from checkfacts import judge

from ascend_audit.facts.operator_inputs import PROFILER
from ascend_audit.gather.operator import read_traces
from ascend_audit.model import Status

HEADER = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\n"


def _traces(tmp_path: Path, rows: list[str]):
    out = tmp_path / "p_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out / "kernel_details.csv").write_text(HEADER + "".join(r + "\n" for r in rows))
    return read_traces([(str(out.parent), str(out.parent))])


@pytest.mark.parametrize(
    ("fraction", "shown"),
    [(0.05, "5%"), (0.005, "0.5%"), (0.0125, "1.25%"), (0.1, "10%"), (0.0001, "0.01%")],
)
def test_percent_keeps_the_digits_given(fraction, shown):
    assert percent(fraction) == shown


def test_aicpu_threshold_of_half_a_percent_prints_as_such(tmp_path):
    t = _traces(tmp_path, ["mm,MatMul,AI_CORE,0,990,0,1", "s,ArgSort,AI_CPU,990,10,0,1"])
    out = judge(aicpu_operators, {PROFILER: t}, "[operator]\naicpu_share_fail = 0.005\n")
    assert out.status is Status.FAIL
    assert "policy fails at 0.5%" in out.summary and "at 0%" not in out.summary


def test_layout_threshold_of_a_quarter_percent_prints_as_such(tmp_path):
    t = _traces(tmp_path, ["mm,MatMul,AI_CORE,0,990,0,1", "td,TransData,AI_CORE,990,10,0,1"])
    out = judge(layout_conversions, {PROFILER: t}, "[operator]\nlayout_share_warn = 0.0025\n")
    assert out.status is Status.WARN
    assert "policy warns above 0.25%" in out.summary
