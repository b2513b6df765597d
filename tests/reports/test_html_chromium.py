"""The HTML reports in real headless Chromium: no console errors, no network, no injected script."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ascend_audit.reports.html import render_fleet_html, render_html
from ascend_audit.reports.merge import merge_reports
from clirun import cli as run_cli
from report_samples import HOSTILE_IMG, HOSTILE_SCRIPT, SAMPLES, big_fleet_reports, ready_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

selenium = pytest.importorskip(
    "selenium", reason="selenium is not installed (pip install selenium)"
)
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("headless Chromium or chromedriver is absent", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("chromium")  # one worker starts the module's browser once

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module, logging console and network events."""
    profile = tempfile.mkdtemp(prefix="ascend-audit-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        f"--user-data-dir={profile}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    except Exception as exc:  # pragma: no cover - depends on the machine
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"Chromium would not start under chromedriver: {exc}")
    driver.set_page_load_timeout(30)
    driver.get("about:blank")  # let the start-up page settle before any report is opened
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _load(driver: Any, path: Path) -> dict[str, Any]:
    """Open a file, then return its console errors, network requests and resource entries."""
    driver.get_log("browser")
    driver.get_log("performance")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
    driver.get(path.as_uri())
    page = path.as_uri()
    console = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
    requests = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            url = msg["params"]["request"]["url"]
            from_page = msg["params"].get("documentURL") == page
            external = url.split(":", 1)[0].lower() in ("http", "https", "ws", "wss", "ftp")
            if url != page and (from_page or external):
                requests.append(url)
    resources = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function(e){return e.name})"
    )
    return {"console": console, "requests": requests, "resources": resources}


def _screenshot(driver: Any, path: Path) -> None:
    """A full-page PNG, for a person to look at."""
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))


def _print_checks(driver: Any, pdf: Path) -> dict[str, Any]:
    """Under print media evidence (<details> bodies) is collapsed and no <pre> is clipped; writes
    an A4 PDF (the stylesheet's @page size) and counts its pages."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    state = driver.execute_script(
        """
        var shown = 0, clipped = 0;
        document.querySelectorAll('details').forEach(function (d) {
          Array.prototype.forEach.call(d.children, function (c) {
            if (c.tagName !== 'SUMMARY' && c.getClientRects().length > 0) shown++;
          });
        });
        document.querySelectorAll('pre').forEach(function (p) {
          if (p.getClientRects().length && p.scrollWidth > p.clientWidth + 1) clipped++;
        });
        return {details: document.querySelectorAll('details').length, shown: shown,
                clipped: clipped};
        """
    )
    out = driver.execute_cdp_cmd(
        "Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}
    )
    data = base64.b64decode(out["data"])
    pdf.write_bytes(data)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
    state["pages"] = len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
    boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)", data)
    state["a4"] = bool(boxes) and all(
        abs(float(w) - 595.3) < 2 and abs(float(h) - 841.9) < 2 for w, h in boxes
    )
    return state


def _page_texts(pdf: Path) -> list[str] | None:
    """Text of each PDF page (poppler's pdftotext), or None when it is not installed."""
    if shutil.which("pdftotext") is None:
        return None
    import subprocess

    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, timeout=60)
    return out.stdout.decode("utf-8", "replace").split("\f")


def _no_sideways_scroll(driver: Any, page: Path, width: int) -> list[str]:
    """Elements wider than a WIDTH-pixel phone screen (outside their own scroll boxes)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        driver.get(page.as_uri())
        return driver.execute_script(
            "var w = window.innerWidth, o = [];"
            "if (document.documentElement.scrollWidth > w) o.push('page ' +"
            " document.documentElement.scrollWidth);"
            "document.querySelectorAll('body *').forEach(function (e) {"
            "  var r = e.getBoundingClientRect();"
            "  if (r.right > w + 1 && !e.closest('.scroll')) o.push(e.tagName + '.' + e.className);"
            "});"
            "return o.slice(0, 10);"
        )
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_renders_cleanly_in_chromium(browser, tmp_path, name):
    report = SAMPLES[name]()
    page = tmp_path / f"{name}.html"
    page.write_text(render_html(report), encoding="utf-8")
    seen = _load(browser, page)
    assert seen["console"] == [], seen["console"]
    assert seen["requests"] == [], seen["requests"]
    assert seen["resources"] == [], seen["resources"]
    assert browser.execute_script("return document.scripts.length") == 1
    assert browser.execute_script("return document.images.length") == 0
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    overall = browser.execute_script("return document.querySelector('.overall .big').innerText")
    assert report.verdict.value in overall
    bands = browser.execute_script(
        "return Array.from(document.querySelectorAll('.stack .band')).map(function(b){return ["
        "b.querySelector('.lname').innerText.toLowerCase(), b.getBoundingClientRect().top]})"
    )
    tops = {n: top for n, top in bands}
    assert tops["driver"] > tops["operator"] > tops["framework"], (
        "driver must be drawn at the bottom"
    )
    _screenshot(browser, tmp_path / f"{name}.png")
    state = _print_checks(browser, tmp_path / f"{name}.pdf")
    assert state["shown"] == 0, state  # evidence collapsed in print
    assert state["clipped"] == 0 and state["a4"], state
    assert _no_sideways_scroll(browser, page, 360) == []
    print(f"screenshot: {tmp_path / f'{name}.png'}")


def test_injected_markup_is_shown_as_text_and_never_runs(browser, tmp_path):
    report = SAMPLES["hostile"]()
    page = tmp_path / "hostile.html"
    page.write_text(render_html(report), encoding="utf-8")
    seen = _load(browser, page)
    assert seen["console"] == [], seen["console"]
    title = browser.execute_script("return document.title")
    assert title == f"ascend-audit: evil{HOSTILE_SCRIPT} — NOT_READY"  # as text, not run
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    text = browser.execute_script("return document.body.innerText")
    assert HOSTILE_SCRIPT in text
    assert HOSTILE_IMG in text
    assert "\ufffd\ufffd" in text and "Ã©tÃ©" in text and "b'\\xff\\xfe\\x00'" in text
    # Text inside the SVG pictures is text too (the NIC name and the AI CPU op type).
    svg_text = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg title')).map(function(t){"
        "return t.textContent}).join('\\n')"
    )
    assert HOSTILE_SCRIPT in svg_text
    assert (
        browser.execute_script("return document.querySelectorAll('svg script, svg img').length")
        == 0
    )


def test_fleet_page_renders_cleanly(browser, tmp_path):
    fleet = merge_reports(
        [
            ("a.json", ready_report("node-a01")),
            ("b.json", ready_report("node-a02", cann="8.1.RC1")),
            ("c.json", SAMPLES["mixed"]()),
            ("d.json", SAMPLES["hostile"]()),
        ]
    )
    page = tmp_path / "fleet.html"
    page.write_text(render_fleet_html(fleet), encoding="utf-8")
    seen = _load(browser, page)
    assert seen["console"] == [] and seen["requests"] == [] and seen["resources"] == []
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    text = browser.execute_script("return document.body.innerText")
    assert "cann" in text and "differs" in text
    _screenshot(browser, tmp_path / "fleet.png")
    print(f"screenshot: {tmp_path / 'fleet.png'}")


def _example_names() -> list[str]:
    from ascend_audit.examples_index import list_examples

    return [name for name, _ in list_examples()]


@pytest.mark.parametrize("example", _example_names())
def test_every_bundled_example_report_renders_cleanly(browser, tmp_path, example):
    """The HTML of each `run --example` audit, as a ticket would carry it."""
    out = tmp_path / "out"
    run_cli("run", "--example", example, "-q", "-o", str(out))
    page = out / "report.html"
    seen = _load(browser, page)
    assert seen["console"] == [], seen["console"]
    assert seen["requests"] == [], seen["requests"]
    assert seen["resources"] == [], seen["resources"]
    verdict = json.loads((out / "report.json").read_text())["verdict"]
    overall = browser.execute_script("return document.querySelector('.overall .big').innerText")
    assert verdict in overall.replace(" ", "_")
    topology = browser.execute_script("return document.querySelectorAll('svg, .numa').length")
    assert topology > 0, "the topology picture is missing"
    _screenshot(browser, tmp_path / f"{example}.png")
    state = _print_checks(browser, tmp_path / f"{example}.pdf")
    assert state["shown"] == 0 and state["clipped"] == 0 and state["a4"], state
    assert _no_sideways_scroll(browser, page, 360) == []
    print(f"screenshot: {tmp_path / f'{example}.png'}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failing_node_prints_on_four_a4_pages_at_most_with_the_fix_on_page_one(
    browser, tmp_path, lang
):
    out = tmp_path / "out"
    run_cli("run", "--example", "firmware-mismatch", "-q", "--lang", lang, "-o", str(out))
    page = out / "report.html"
    _load(browser, page)
    fix_first = browser.execute_script(
        "var s = document.querySelector('.fixfirst'); return s ? s.innerText : ''"
    )
    fix = {"en": "Install the driver and firmware packages", "zh": "安装同一 HDK 版本的驱动包"}
    assert "DRV-VER-001" in fix_first and fix[lang] in fix_first
    assert "/usr/local/Ascend/driver/version.info" in fix_first  # its key evidence line
    state = _print_checks(browser, tmp_path / "print.pdf")
    assert state["a4"] and 1 <= state["pages"] <= 4, state
    pages = _page_texts(tmp_path / "print.pdf")
    if pages is None:
        pytest.skip("pdftotext (poppler-utils) is not installed: page-1 text not checked")
    first = "".join(pages[0].split())
    assert "DRV-VER-001" in first and "".join(fix[lang].split()) in first, pages[0][:2000]


def test_fleet_matrix_reads_at_1366_px(browser, tmp_path):
    long_names = [f"ascend-a2-prod-rack{i:02d}-node{i + 6:02d}.dc1.example.com" for i in range(4)]
    fleet = merge_reports(
        [(f"{n}.json", ready_report(n)) for n in long_names[:3]] + [("m.json", SAMPLES["mixed"]())]
    )
    page = tmp_path / "fleet.html"
    page.write_text(render_fleet_html(fleet), encoding="utf-8")
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1366, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        browser.get(page.as_uri())
        state = browser.execute_script(
            "var line = parseFloat(getComputedStyle(document.querySelector('td.node')).lineHeight)"
            " || 20;"
            "return {page: document.documentElement.scrollWidth, w: window.innerWidth,"
            " tall: Array.from(document.querySelectorAll('td.node, th.node')).filter(function(e)"
            " {return e.querySelector('b, span') ? e.querySelector('b, span').getClientRects()"
            ".length > 1 : false}).length,"
            " clipped: Array.from(document.querySelectorAll('th')).filter(function(e)"
            " {return e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1})"
            ".map(function(e){return e.innerText})}"
        )
        _screenshot(browser, tmp_path / "fleet-1366.png")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert state["page"] <= state["w"], state  # the page never scrolls sideways
    assert state["tall"] == 0, state  # every hostname on one line
    assert state["clipped"] == [], state  # headers unclipped
    assert _no_sideways_scroll(browser, page, 360) == []


# A4 portrait at the stylesheet's @page margins (12 mm × 11 mm): 188 mm of line = 710.6 CSS px.
A4_LINE_PX = 188 / 25.4 * 96


def test_a_64_node_fleet_names_every_failing_check_on_screen_and_on_a4(browser, tmp_path):
    """The go-live ticket's page: every node's verdict with its failing or missing proofs, in the
    Nodes table on screen and in the printed PDF's text, and every one of 70 check columns."""
    reports = big_fleet_reports(64, 70)
    fleet = merge_reports(reports)
    page = tmp_path / "fleet.html"
    page.write_text(render_fleet_html(fleet), encoding="utf-8")
    expected = {
        n["node"]: [c for c, v in n["cells"].items() if v["status"] in ("FAIL", "ERROR")]
        for n in fleet["nodes"]
    }
    missing = {n["node"] for n in fleet["nodes"] if "MISSING" in n["layers"].values()}
    assert all(expected.values()) and missing  # the sample has both kinds on many nodes
    seen = _load(browser, page)
    assert seen["console"] == [] and seen["requests"] == [] and seen["resources"] == []
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.nodes tbody tr')).map(function(r){"
        "return [r.querySelector('td.node').innerText, r.querySelector('td.proofs').innerText]})"
    )
    assert len(rows) == 64
    for node, proofs in rows:
        assert all(c in proofs for c in expected[node]), (node, proofs)
        assert ("framework MISSING" in proofs) == (node in missing), (node, proofs)
    # Under print media at the width of an A4 line nothing sticks out past the page's edge.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": int(A4_LINE_PX), "height": 1000, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        over = browser.execute_script(
            "var w = document.documentElement.clientWidth, o = [];"
            "document.querySelectorAll('body *').forEach(function (e) {"
            "  var r = e.getBoundingClientRect();"
            "  if (r.width > 0 && r.right > w + 1) o.push(e.tagName + '.' + e.className + ' '"
            "   + Math.round(r.right) + ' > ' + w);"
            "});"
            "return o.slice(0, 10);"
        )
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
    assert over == [], over
    state = _print_checks(browser, tmp_path / "fleet.pdf")
    assert state["a4"] and state["clipped"] == 0, state
    pages = _page_texts(tmp_path / "fleet.pdf")
    if pages is None:
        pytest.skip("pdftotext (poppler-utils) is not installed: the printed text is not checked")
    text = "".join("".join(pages).split())
    head, _, matrix = text.partition("Checks×nodes")
    table, _, by_node = head.partition("Failingandmissingproofs,bynode")
    assert matrix and by_node, "the printed page lacks the findings or the matrix"
    names = list(expected)
    for i, node in enumerate(names):
        start = by_node.find(node)
        assert start >= 0, f"{node} is not named with its findings on paper"
        end = by_node.find(names[i + 1]) if i + 1 < len(names) else len(by_node)
        for c in expected[node]:
            assert c in by_node[start:end], f"{node}'s failing {c} is not on paper"
            assert c in table, f"{c} is not in the printed Nodes table"
        assert ("frameworklayer" in by_node[start:end]) == (node in missing), node
    for c in fleet["checks"]:
        assert c["id"] in matrix, f"check column {c['id']} is cut off the printed matrix"
    print(f"fleet: {state['pages']} A4 pages; pdf: {tmp_path / 'fleet.pdf'}")


def test_printed_type_scale_reads_on_a4(browser, tmp_path):
    """Under print media: headings > check titles > text > findings, nothing under 9.5 px
    (7 pt) — a check title never as large as a section heading (issue 28)."""
    out = tmp_path / "out"
    run_cli("run", "--example", "firmware-mismatch", "-q", "-o", str(out))
    _load(browser, out / "report.html")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        size = browser.execute_script(
            "function px(sel){var e=document.querySelector(sel);"
            " return e ? parseFloat(getComputedStyle(e).fontSize) : null}"
            "var small = 1e9; document.querySelectorAll('body *').forEach(function (e) {"
            "  if (e.getClientRects().length && e.childNodes.length &&"
            "      Array.prototype.some.call(e.childNodes, function (n) {"
            "        return n.nodeType === 3 && n.textContent.trim(); }))"
            "    small = Math.min(small, parseFloat(getComputedStyle(e).fontSize)); });"
            "return {h2: px('h2'), h3: px('h3'), title: px('.check h4'), body: px('body'),"
            " finding: px('.check.s-PASS .summary'), smallest: small}"
        )
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
    assert size["h2"] > size["h3"] > size["title"] > size["body"] >= size["finding"], size
    assert size["smallest"] >= 9.5, size
