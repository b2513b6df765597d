"""Peer on SQLite: msprof-analyze and ascend-audit name the same AI CPU operators on the same .db.

The .db is written from a real kernel_details.csv's rows in the unified msprof DB schema
(tests/profiler_db_writer.py cites it); msprof-analyze's advisor reads it through its OpSummaryDB
(`COMPUTE_TASK_INFO ⋈ TASK ON globalTaskId`, STRING_IDS for the names).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from peers.test_msprof_analyze import peer, peer_aicpu
from profiler_db_writer import csv_to_db
from shared_fixtures import fixture_cases
from standins import run_node

from ascend_audit.context import Inputs

KERNEL_FIXTURES = fixture_cases("msprof", "kernel_details_*.csv")


def _ours(tmp_path: Path, trace: Path) -> dict[str, tuple[int, float]]:
    report = run_node(
        tmp_path / "root",
        tmp_path / "bin",
        "",
        layers=["operator"],
        inputs=Inputs(traces=(str(trace),)),
    )
    r = report.result("OPR-AICPU-001")
    out: dict[str, tuple[int, float]] = {}
    for op in r.metrics.get("top_aicpu_ops", []):
        c, t = out.get(op["type"], (0, 0.0))
        out[op["type"]] = (c + op["count"], t + op["total_us"])
    assert set(r.metrics.get("aicpu_types", [])) == set(out)
    return out


@pytest.mark.parametrize("csv", KERNEL_FIXTURES)
def test_aicpu_operators_of_a_db_match_msprof_analyze(tmp_path, csv):
    exe = peer()
    profile = tmp_path / "x_ascend_pt"
    db = profile / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    csv_to_db(csv, db)
    try:
        theirs = peer_aicpu(exe, profile, tmp_path / "out")
    except AssertionError as exc:  # no report at all: it found nothing to suggest
        assert "no optimization suggestions" in str(exc), exc
        theirs = {}
    ours = _ours(tmp_path, profile)
    assert set(ours) == set(theirs)
    for op_type, (count, elapsed) in theirs.items():
        assert ours[op_type][0] == count
        assert ours[op_type][1] == pytest.approx(elapsed, abs=0.01)


@pytest.mark.parametrize("csv", KERNEL_FIXTURES)
def test_db_and_csv_give_the_same_operator_verdict(tmp_path, csv):
    profile = tmp_path / "db_ascend_pt"
    csv_to_db(csv, profile / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db")
    as_csv = tmp_path / "csv_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    as_csv.mkdir(parents=True)
    (as_csv / "kernel_details.csv").write_bytes(csv.read_bytes())
    for cid in ("OPR-AICPU-001",):
        a = run_node(
            tmp_path / "r1",
            tmp_path / "b1",
            "",
            layers=["operator"],
            inputs=Inputs(traces=(str(as_csv.parent),)),
        ).result(cid)
        b = run_node(
            tmp_path / "r2",
            tmp_path / "b2",
            "",
            layers=["operator"],
            inputs=Inputs(traces=(str(profile),)),
        ).result(cid)
        assert (a.status, a.metrics.get("aicpu_types")) == (b.status, b.metrics.get("aicpu_types"))
        assert a.metrics.get("aicpu_share") == pytest.approx(b.metrics.get("aicpu_share"), abs=1e-9)
