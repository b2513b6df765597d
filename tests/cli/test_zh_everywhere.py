"""Chinese wherever an engineer reads: `explain`, `checks`, `--help` and the HTML host labels."""

from __future__ import annotations

import os
import re

from clirun import cli

from ascend_audit.i18n import messages

ZH = dict(os.environ, LANG="zh_CN.UTF-8", LC_ALL="zh_CN.UTF-8")
EN = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_explain_in_chinese_has_chinese_headings_and_words():
    out = cli("explain", "DRV-VER-001", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for key in ("explain.evidence", "explain.policy_keys", "explain.fix"):
        assert messages("zh")[key] in text, key
    assert "层级：驱动层" in text and "严重级别：严重" in text
    assert "每个 NPU 的驱动与固件版本相互兼容" in text
    for english in ("Why it matters", "Evidence it reads", "How to fix", "layer:", "severity:"):
        assert english not in text, english
    # a rationale with no Chinese yet says so in Chinese, never silently English
    assert ("为什么重要：" in text) or ("暂无中文说明" in text)


def test_explain_in_english_is_unchanged():
    out = cli("explain", "DRV-VER-001", "--lang", "en")
    assert "Why it matters:" in out.stdout and "How to fix:" in out.stdout
    assert not CJK.search(out.stdout.split("How to fix:")[0])


def test_checks_lists_chinese_titles_layers_and_severities():
    out = cli("checks", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and all(CJK.search(line) for line in lines), [
        line for line in lines if not CJK.search(line)
    ][:5]
    assert any(line.startswith("DRV-VER-001") and "驱动层" in line for line in lines)
    zh_by_locale = cli("checks", env=ZH)
    assert zh_by_locale.stdout == out.stdout  # LANG=zh_* is the default language


def test_help_speaks_the_locale_for_every_command():
    top = cli("--help", env=ZH)
    assert messages("zh")["help.main"] in top.stdout and "退出码" in top.stdout
    names = re.findall(r"^  ([a-z][a-z-]+)\s", top.stdout.split("Commands:")[1], re.M)
    assert len(names) >= 10
    for name in names:
        summary = messages("zh").get(f"help.cmd.{name}")
        assert summary, f"no Chinese summary for `{name}`"
        assert summary[:12] in " ".join(top.stdout.split()), name
        own = cli(name, "--help", env=ZH)
        assert own.returncode == 0 and summary in own.stdout, (name, own.stdout[:400])
    english = cli("--help", env=EN)
    assert not CJK.search(english.stdout)
    assert "Is this Ascend NPU node ready" in english.stdout


def test_html_host_labels_are_chinese(tmp_path):
    out = cli("run", "--example", "firmware-mismatch", "-q", "--lang", "zh", "-o", str(tmp_path))
    assert out.returncode in (0, 1), out.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<th>主机名</th>" in html and "<th>内核</th>" in html and "<th>操作系统</th>" in html
    assert "host.hostname" not in html


def test_a_translated_rationale_is_the_chinese_body_of_explain():
    out = cli("explain", "FWK-GRAPH-001", "--lang", "zh")
    assert "为什么重要：\n  在昇腾上，单算子模式" in out.stdout, out.stdout[:600]
    assert "暂无中文说明" not in out.stdout and "On Ascend, eager mode" not in out.stdout
