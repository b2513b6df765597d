"""Peer: the AI CPU operator types we report equal those `msprof-analyze advisor` reports.

msprof-analyze (PyPI `msprof-analyze`, CPU only) writes an HTML report whose "AICPU Issues" section
has an "Operator Type | Counts | Elapsed Time(us)" table. It lists AI CPU operators only when some
kernel of the profile lasts >= 20 us; every real fixture here passes that gate.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from shared_fixtures import fixture_cases, fixture_files
from standins import run_node

from ascend_audit.context import Inputs

PEER = "msprof-analyze"
KERNEL_FIXTURES = fixture_cases("msprof", "kernel_details_*.csv")


def peer() -> str:
    """Path of msprof-analyze; in CI its absence fails the test, elsewhere it skips."""
    beside = Path(sys.executable).parent / PEER  # pip's console script for this interpreter
    found = shutil.which(PEER) or (str(beside) if beside.is_file() else None)
    if found:
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{PEER} is not installed in CI (.ci/setup-peers installs it with pip)")
    pytest.skip(f"{PEER} not installed (pip install msprof-analyze)")


class _AicpuTable(HTMLParser):
    """Rows of the Operator Type / Counts / Elapsed Time tables in the AICPU Issues section."""

    def __init__(self) -> None:
        super().__init__()
        self.in_aicpu = False
        self.cells: list[str] = []
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.h2: list[str] | None = None

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        if tag == "h2":
            self.h2 = []
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag == "h2" and self.h2 is not None:
            self.in_aicpu = "".join(self.h2).strip() == "AICPU Issues"
            self.h2 = None
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.in_aicpu:
                if self.row[:1] == ["Operator Type"]:
                    self.header = self.row
                elif (
                    self.header
                    and len(self.row) == len(self.header)
                    and self.row[0] != "Description"
                ):
                    self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self.h2 is not None:
            self.h2.append(data)
        if self.cell is not None:
            self.cell.append(data)


def peer_aicpu(exe: str, profile: Path, out: Path) -> dict[str, tuple[int, float]]:
    """AI CPU operator type -> (count, elapsed us) as msprof-analyze reports them."""
    env = dict(os.environ, TMPDIR=str(out))  # its log file goes to $TMPDIR
    res = subprocess.run(
        [exe, "advisor", "computation", "-d", str(profile), "-l", "en", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    reports = sorted(out.glob("mstt_advisor_*.html"))
    assert reports, f"msprof-analyze wrote no HTML report:\n{res.stdout[-2000:]}"
    parser = _AicpuTable()
    parser.feed(reports[-1].read_text(encoding="utf-8", errors="replace"))
    return {r[0]: (int(r[1]), float(r[2])) for r in parser.rows}


@pytest.mark.parametrize("csv", KERNEL_FIXTURES)
def test_aicpu_types_match_msprof_analyze(tmp_path, csv):
    exe = peer()
    profile = tmp_path / "x_ascend_pt"
    (profile / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copyfile(csv, profile / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    theirs = peer_aicpu(exe, profile, tmp_path / "out")
    report = run_node(
        tmp_path / "root",
        tmp_path / "bin",
        "",
        layers=["operator"],
        inputs=Inputs(traces=(str(profile),)),
    )
    ours = report.result("OPR-AICPU-001")
    assert set(ours.metrics["aicpu_types"]) == set(theirs)
    by_type: dict[str, list[float]] = {}
    for op in ours.metrics["top_aicpu_ops"]:
        slot = by_type.setdefault(op["type"], [0, 0.0])
        slot[0] += op["count"]
        slot[1] += op["total_us"]
    for op_type, (count, elapsed) in theirs.items():
        assert by_type[op_type][0] == count
        assert by_type[op_type][1] == pytest.approx(elapsed, abs=0.01)


def test_2023_fixture_is_compared():
    found = fixture_files("msprof", "kernel_details_*.csv")
    if not found:
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    assert any("2023" in p.name for p in found)
