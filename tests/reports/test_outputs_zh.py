"""Chinese HTML, Markdown and JUnit: headings, verdict words and fixes from the catalog; the
JSON stays English and `render --lang` re-renders either language from it."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from ascend_audit.reports.html import render_html
from ascend_audit.reports.junit import render_junit
from ascend_audit.reports.markdown import render_markdown
from clirun import cli as run_cli
from report_samples import SAMPLES, mixed_report

from ascend_audit.i18n import check_text, reflow
from ascend_audit.model import Report


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_renders_in_chinese(name: str) -> None:
    report = SAMPLES[name]()
    html = render_html(report, lang="zh")
    assert '<html lang="zh-CN">' in html and "总体结论" in html
    md = render_markdown(report, lang="zh")
    assert "| 层 | 结论 | 必需 | 原因 |" in md and "驱动层" in md
    root = ET.fromstring(render_junit(report, lang="zh"))  # still well-formed XML
    assert root.tag == "testsuites"


def _firmware_mismatch_json(dest, env: dict) -> None:
    """Audit the firmware-mismatch example into DEST as report.json, in ENV's locale."""
    argv = ["run", "--example", "firmware-mismatch", "-q", "--json", str(dest)]
    run_cli(*argv, env=env)


def test_chinese_outputs_carry_the_translated_fix(tmp_path) -> None:
    src = tmp_path / "r.json"
    _firmware_mismatch_json(src, dict(os.environ))
    report = Report.from_dict(json.loads(src.read_text(encoding="utf-8")))
    fix = reflow(check_text("DRV-VER-001", "remediation", "zh"))
    first_words = fix[:12]
    assert first_words in render_markdown(report, lang="zh")
    assert first_words in render_junit(report, lang="zh")
    html = render_html(report, lang="zh")
    assert "优先修复" in html and first_words in html
    assert check_text("DRV-VER-001", "title", "zh") in html


def test_english_is_the_default_and_unchanged() -> None:
    report = mixed_report()
    assert "| layer | verdict | required | why |" in render_markdown(report)
    assert '<html lang="en">' in render_html(report) and "Fix first" in render_html(report)


def test_render_lang_rerenders_an_english_report(tmp_path) -> None:
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": ""}
    src = tmp_path / "r.json"
    _firmware_mismatch_json(src, env)
    assert json.loads(src.read_text())["lang"] == "en"
    out = run_cli(
        "render",
        str(src),
        "--lang",
        "zh",
        "--markdown",
        str(tmp_path / "s.md"),
        "--html",
        str(tmp_path / "r.html"),
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "未就绪" in (tmp_path / "s.md").read_text(encoding="utf-8")
    assert "优先修复" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_fix_first_key_evidence_is_a_line_with_a_value() -> None:
    from ascend_audit.reports.html import key_evidence

    r = {
        "status": "FAIL",
        "evidence": [
            {"kind": "trace", "source": "prof", "excerpt": "type count total_us\nArgSort 60 5330"}
        ],
    }
    assert key_evidence(r) == {"kind": "trace", "source": "prof", "line": "ArgSort 60 5330"}
    assert key_evidence({"evidence": [{"kind": "file", "source": "x", "excerpt": ""}]}) is None
