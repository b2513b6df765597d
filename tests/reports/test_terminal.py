"""The terminal fits: width from COLUMNS, word wrap (CJK-aware), whole fixes, aligned ids,
grouped SKIP reasons, evidence excerpts with -v, and no control characters from the node."""

from __future__ import annotations

import io
import os

from ascend_audit.reports.terminal import (
    TerminalProgress,
    display_width,
    render_summary,
    wrap,
)
from clirun import cli as run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from report_samples import hostile_report, mixed_report

from ascend_audit.i18n import check_text, reflow
from ascend_audit.model import Status


def run_example(name: str, *args: str, columns: int = 80) -> str:
    out = run_cli(
        "run",
        "--example",
        name,
        *args,
        env={**os.environ, "COLUMNS": str(columns), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
    )
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def _words(text: str) -> str:
    return "".join(text.split())


def test_firmware_mismatch_in_chinese_fits_80_columns_with_the_fix_whole() -> None:
    text = run_example("firmware-mismatch", "--lang", "zh")
    assert "驱动层" in text and "未就绪" in text and "总结" in text
    lines = text.splitlines()
    too_wide = [x for x in lines if display_width(x) > 80]
    assert not too_wide, too_wide
    summary = text[text.index("总结") :]
    fix = reflow(check_text("DRV-VER-001", "remediation", "zh"))
    assert fix.startswith("安装同一 HDK 版本")
    assert _words(fix) in _words(summary)  # every character of the fix, in order


def test_firmware_mismatch_in_english_fits_80_columns_with_the_fix_whole() -> None:
    text = run_example("firmware-mismatch", "--lang", "en")
    assert all(display_width(x) <= 80 for x in text.splitlines())
    from ascend_audit.registry import load_registry

    spec = load_registry(entry_points=False, catalogue_only=True).get("DRV-VER-001")
    summary = text[text.index("SUMMARY") :]
    assert _words(spec.remediation) in _words(summary)
    assert "…" not in summary  # nothing ellipsised


def test_lang_defaults_from_the_locale() -> None:
    out = run_cli(
        "run",
        "--example",
        "firmware-mismatch",
        "-q",
        env={**os.environ, "LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""},
    )
    assert "总结" in out.stdout


def test_identical_skip_reasons_print_once_with_their_checks() -> None:
    text = run_example("firmware-mismatch", columns=100)
    reason = "hccn_tool not found"
    assert text.count(reason) == 1
    line = next(x for x in text.splitlines() if "DRV-NET-001" in x)
    assert "DRV-NET-002" in line and "DRV-NET-004" in line


def test_id_column_aligns() -> None:
    text = run_example("firmware-mismatch", columns=120)
    starts = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("PASS", "FAIL", "WARN") and "-" in parts[1]:
            starts.add(line.index(parts[2], line.index(parts[1]) + len(parts[1])))
    assert len(starts) == 1, starts


def test_verbose_shows_evidence_excerpts() -> None:
    r = mixed_report()
    out = io.StringIO()
    progress = TerminalProgress(out, colour=False, verbosity=1, width=80)
    progress.layer_started("driver")
    with_excerpt = next(x for x in r.results if any(e.excerpt for e in x.evidence))
    progress.result(with_excerpt)
    first = next(e.excerpt for e in with_excerpt.evidence if e.excerpt).strip().splitlines()[0]
    assert "│ " in out.getvalue()
    assert _words(first)[:20] in _words(out.getvalue())
    assert all(display_width(x) <= 80 for x in out.getvalue().splitlines())


def test_node_text_loses_its_control_characters() -> None:
    out = io.StringIO()
    report = hostile_report()
    render_summary(report, out, colour=False, width=80)
    progress = TerminalProgress(out, colour=False, width=80)
    for r in report.results:
        progress.result(r)
    text = out.getvalue()
    assert "\x1b" not in text and "\x01" not in text


def test_summary_prints_every_failure_fix_whole() -> None:
    report = mixed_report()
    out = io.StringIO()
    render_summary(report, out, width=60)
    text = out.getvalue()
    for r in report.results:
        if r.status in (Status.FAIL, Status.ERROR) and r.remediation:
            assert _words(r.remediation) in _words(text), r.id
    assert all(display_width(x) <= 60 for x in text.splitlines())


words = st.text(
    alphabet=st.sampled_from(list("abcdefghij/-_.,:") + list("驱动固件版本，。") + [" ", "\n"]),
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(words, st.integers(min_value=20, max_value=120))
def test_wrap_fits_and_loses_nothing(text: str, width: int) -> None:
    lines = wrap(text, width, "    ", "  ")
    assert all(display_width(x) <= width for x in lines), lines
    assert _words("".join(lines)) == _words(text)


def test_wrap_never_cuts_a_word_that_fits_a_line() -> None:
    text = "install the driver and firmware packages of one HDK release " * 3
    for width in range(30, 90):
        for line in wrap(text, width):
            for word in line.split():
                assert word in text.split(), (width, word)


def test_errors_with_one_cause_print_once_with_their_checks() -> None:
    """ERROR results that share a cause are grouped as SKIP and BLOCKED ones are (issue 28)."""
    from ascend_audit.model import LayerReport, Result, Verdict

    out = io.StringIO()
    progress = TerminalProgress(out, colour=False, width=100)
    progress.layer_started("driver")
    cause = "npu-smi timed out after 10 s (rc -9): the driver did not answer"
    for cid in ("DRV-NPU-001", "DRV-NPU-002", "DRV-HBM-001"):
        progress.result(Result(cid, "driver", Status.ERROR, "high", f"title {cid}", cause))
    progress.result(Result("DRV-VER-001", "driver", Status.ERROR, "high", "t", "other cause"))
    progress.layer_finished(LayerReport("driver", Verdict.NOT_READY, True, [], "errors"))
    text = out.getvalue()
    assert text.count(cause) == 1, text
    line = next(x for x in text.splitlines() if "DRV-NPU-001" in x)
    assert "DRV-NPU-002" in line and "DRV-HBM-001" in line
    assert text.count("other cause") == 1
