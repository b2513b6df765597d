"""HTML, JUnit and Markdown renderers on the sample reports: content, escaping, validity, size."""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from ascend_audit.reports.html import render_html
from ascend_audit.reports.json_report import report_json, write_report
from ascend_audit.reports.junit import render_junit
from ascend_audit.reports.markdown import render_markdown
from ascend_audit.reports.outputs import render_outputs
from report_samples import HOSTILE_IMG, HOSTILE_SCRIPT, SAMPLES, mixed_report, validate

from ascend_audit.model import Evidence, LayerReport, Report, Result, Status, Verdict


class _Tags(HTMLParser):
    """Collects start tags and attribute values of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    p = _Tags()
    p.feed(html)
    return p.tags


def test_samples_validate_against_the_schema(sample):
    _, report = sample
    validate(report_json(report))


def test_html_is_self_contained(sample):
    _, report = sample
    html = render_html(report)
    tags = _tags(html)
    names = [t for t, _ in tags]
    assert names.count("script") == 1 and "link" not in names and "img" not in names
    assert "iframe" not in names and "object" not in names and "embed" not in names
    for _, attrs in tags:
        for key in ("src", "href", "action", "srcset", "poster"):
            value = attrs.get(key)
            if value is not None:
                assert value.startswith("#"), (key, value)
    assert "@import" not in html and "url(" not in html
    csp = [a["content"] for t, a in tags if t == "meta" and a.get("http-equiv")]
    assert csp and csp[0].startswith("default-src 'none';")


def test_html_top_shows_identity_and_digests(tmp_path):
    report = mixed_report()
    text = write_report(report, str(tmp_path / "r.json"))
    html = render_html(report, text)
    assert hashlib.sha256(text.encode()).hexdigest() in html
    assert "9f2c4e1ab37d0c55" in html and "node-a01" in html and "0.1.0" in html
    assert "NOT_READY" in html and "DEGRADED" in html and "BLOCKED" in html
    assert "vendor upgrade window in Q3" in html and "2099-12-31" in html
    for status in ("PASS", "WARN", "FAIL", "ERROR", "SKIP", "BLOCKED", "WAIVED"):
        assert f"s-{status}" in html
    assert "exit code <b>0</b>" in html and "42 ms" in html
    assert "<details>" in html and "NUMA node 0" in html and "DEGRADED" in html
    assert "GatherV2" in html and "AI_CORE" in html


def test_html_escapes_node_data():
    html = render_html(SAMPLES["hostile"]())
    names = [t for t, _ in _tags(html)]
    assert names.count("script") == 1 and "img" not in names
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned=1" in html
    assert "\x01" not in html and "\x1b" not in html
    assert "\ufffd" in html


def test_html_size_stays_small_with_100_long_results():
    report = mixed_report()
    long = ("E" * 119 + "\n") * 2000  # 240 kB of log each
    report.results = [
        Result(
            f"DRV-GEN-{i:03d}",
            "driver",
            Status.FAIL if i % 7 == 0 else Status.PASS,
            "high",
            f"Generated {i}",
            "summary " * 20,
            "fix " * 50,
            [
                Evidence("log", f"/var/log/x{i}.log", long, {"k": list(range(500))})
                for _ in range(3)
            ],
        )
        for i in range(100)
    ]
    html = render_html(report)
    assert len(html.encode()) < 2 * 1024 * 1024
    assert "characters omitted here" in html


def _junit(report: Report) -> ET.Element:
    return ET.fromstring(render_junit(report).encode())


def test_junit_structure_and_status_mapping():
    root = _junit(mixed_report())
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["driver", "operator", "framework"]
    cases = {c.get("name").split()[0]: c for c in root.iter("testcase")}
    assert cases["DRV-NPU-001"].get("classname") == "driver"
    assert cases["DRV-NPU-001"].get("name") == "DRV-NPU-001 NPUs visible and healthy"
    fail = cases["OPR-PROF-001"].find("failure")
    assert fail is not None and fail.get("message").startswith("AI CPU operators take 31%")
    assert "Replace AI CPU fallbacks" in fail.text and "kernel_details.csv" in fail.text
    assert cases["OPR-TRACE-002"].find("failure").get("type") == "ERROR"
    assert "operator" in cases["FWK-VER-001"].find("skipped").get("message")
    assert cases["DRV-HCCN-004"].find("skipped") is not None
    warn = cases["DRV-PCIE-002"]
    assert warn.find("failure") is None and warn.find("skipped") is None
    assert "WARNING" in warn.find("system-out").text
    assert "OPS-1234" in cases["DRV-FW-003"].find("system-out").text
    assert root.get("tests") == "9" and root.get("failures") == "2" and root.get("skipped") == "3"


def test_junit_is_valid_xml_whatever_the_node_said():
    report = SAMPLES["hostile"]()
    report.results[4].summary = "bad \x00\x07\x0b\x1f\ud800 chars \ufffe <![CDATA[ ]]> &amp;"
    text = render_junit(report)
    root = ET.fromstring(text.encode())
    msg = next(iter(root.iter("failure"))).get("message")
    assert "<![CDATA[ ]]> &amp;" in msg and "\x00" not in msg
    for empty in (SAMPLES["empty"](), SAMPLES["driver_down"]()):
        assert len(_junit(empty).findall("testsuite")) == 3


def test_markdown_summary():
    md = render_markdown(mixed_report(), "ab" * 32)
    assert md.startswith("## ascend-audit: node-a01")
    assert "| operator | ✗ NOT_READY | yes |" in md
    assert "### Failures (2)" in md and "fix: Replace AI CPU fallbacks" in md
    assert "### Warnings (1)" in md and "### Waived (1)" in md
    assert "http" not in md


def test_markdown_escapes_node_data():
    report = SAMPLES["hostile"]()
    report.results[4].summary = "see http://evil.example/x | `rm -rf` <b>bold</b> [link](http://x)"
    md = render_markdown(report)
    assert "<script>" not in md and "<b>" not in md and "<img" not in md
    assert not re.search(r"(?<!\\)`", md) and "\\`rm -rf\\`" in md
    assert "\\|" in md
    assert "http://" not in md and "](" not in md.replace("\\](", "")
    # Tables stay tables: every layer row has exactly 5 unescaped pipes.
    for line in md.splitlines():
        if line.startswith("| operator"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 5


def test_outputs_directory_gets_every_format(tmp_path):
    report = SAMPLES["mixed"]()
    out = tmp_path / "out"
    written = render_outputs(
        report,
        str(tmp_path / "r.json"),
        str(out),
        html_path=str(tmp_path / "x.html"),
        junit_path=str(tmp_path / "x.xml"),
        markdown_path=str(tmp_path / "x.md"),
    )
    names = sorted(p.name for p in out.iterdir())
    assert names == ["report.html", "report.json", "report.junit.xml", "report.md"]
    assert len(written) == 8
    text = (out / "report.json").read_text()
    validate(text)
    assert hashlib.sha256(text.encode()).hexdigest() in (out / "report.html").read_text()
    ET.fromstring((out / "report.junit.xml").read_bytes())


def test_missing_layers_and_odd_shapes_do_not_break_rendering():
    report = Report(
        tool={"name": "ascend-audit", "version": "0"},
        host={"hostname": "h", "kernel": "", "os": ""},
        started_at="",
        finished_at="",
        inputs={},
        verdict=Verdict.MISSING,
        layers=[LayerReport("driver", Verdict.MISSING)],
        results=[],
        inventory={
            "npus": [{"npu_id": 0, "chip_id": None, "name": "x", "health": "OK", "bus_id": None}],
            "topology": {
                "numa_map": [{"node": -1}, "junk"],
                "pci_npus": [{"bdf": "b", "link": None}, "junk"],
                "rdma": ["ib0"],
                "nvme": None,
            },
            "operator": {"time_by_core_us": {"0": "12.5", "1": None}, "top_aicpu_ops": ["x", {}]},
            "versions": {"cann": {"toolkit": "8.0", "nnae": None}},
        },
    )
    validate(report)
    html = render_html(report)
    assert "NUMA node unknown" in html and "NIC ib0" in html and "link unknown" in html
    assert "Device time per accelerator core" in html
    assert "cann.toolkit" in html
    assert render_junit(report) and render_markdown(report)


def test_script_and_img_injection_not_in_svg_raw():
    html = render_html(SAMPLES["hostile"]())
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert svgs
    for s in svgs:
        assert HOSTILE_SCRIPT not in s and HOSTILE_IMG not in s
