"""`ascend-audit diff` as a person reads it: fits COLUMNS, wraps on words, one line per change."""

from __future__ import annotations

import os

import pytest
from ascend_audit.reports.diff import _ranges, grouped_versions
from ascend_audit.reports.terminal import display_width
from clirun import cli


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    for name, example in (("a", "atlas-800t-a2-ready"), ("b", "firmware-mismatch")):
        out = cli("run", "--example", example, "-q", "--json", str(tmp / f"{name}.json"))
        assert out.returncode in (0, 1), out.stderr
    return tmp / "a.json", tmp / "b.json"


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_diff_fits_columns_and_wraps_on_words(pair, columns):
    out = cli("diff", str(pair[0]), str(pair[1]), env=dict(os.environ, COLUMNS=str(columns)))
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    too_wide = [x for x in lines if display_width(x) > columns]
    assert too_wide == [], too_wide
    text = " ".join(out.stdout.split())
    # wrapped on words: the summary reads whole once the line breaks are spaces again
    assert "do not accept each other: driver 24.1.rc1 is outside firmware range" in text


def test_one_driver_change_is_one_line_and_one_cause_one_group(pair):
    out = cli("diff", str(pair[0]), str(pair[1]), env=dict(os.environ, COLUMNS="200"))
    versions = out.stdout.split("version changes:")[1].strip().splitlines()
    assert len(versions) == 3, versions  # driver (+ npu_smi_driver, NPUs 0–7), inner, firmware
    assert versions[0].strip().startswith("driver: 25.5.1 → 24.1.rc1 (also npu_smi_driver")
    assert "software on NPUs 0–7" in versions[0]
    assert not any(x.strip().startswith("npus.") for x in versions)
    status = out.stdout.split("status changes:")[1].split("version changes:")[0]
    assert status.count("BLOCKED") == 1 and "19 checks → BLOCKED" in status


def test_version_grouping_and_ranges():
    changes = [
        {"key": "driver", "before": "1", "after": "2"},
        *({"key": f"npus.{i}.software", "before": "1", "after": "2"} for i in (0, 1, 2, 5)),
        {"key": "npus.3.software", "before": "1", "after": "3"},
    ]
    assert grouped_versions(changes) == [
        ("driver", "1", "2", ["software on NPUs 0–2, 5"]),
        ("software on NPUs 3", "1", "3", []),
    ]
    assert _ranges([7, 0, 1, 2, 4, 5]) == "0–2, 4–5, 7"
