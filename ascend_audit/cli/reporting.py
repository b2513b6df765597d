"""`render`, `diff` and `merge`: work on JSON reports written earlier."""

from __future__ import annotations

import sys
from typing import Any

import click

from ascend_audit.cli.common import (
    EXIT_NOT_READY,
    EXIT_READY,
    UsageError,
    lang_option,
    terminal_text,
)


def _read_report(path: str) -> Any:
    """Load one JSON report for render/diff/merge; unreadable or invalid → usage error (exit 2)."""
    from ascend_audit.reports.diff import ReportInputError, load_report

    try:
        return load_report(path)
    except ReportInputError as exc:
        raise UsageError(str(exc)) from None


@click.command()
@click.argument("report_json", type=click.Path(dir_okay=False))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML.")
@click.option(
    "--markdown", "markdown_path", type=click.Path(dir_okay=False), help="Write a Markdown summary."
)
@lang_option
def render(
    report_json: str,
    html_path: str | None,
    junit_path: str | None,
    markdown_path: str | None,
    lang: str | None,
) -> None:
    """Regenerate HTML, JUnit XML or Markdown from a JSON report.

    \b
    Examples:
      ascend-audit render report.json --html report.html
      ascend-audit render report.json --junit junit.xml --markdown summary.md
      ascend-audit render report.json --html report.zh.html --lang zh

    The language is --lang, else the report's own (`lang` in its JSON).
    """
    if not (html_path or junit_path or markdown_path):
        raise UsageError("render: give at least one of --html, --junit, --markdown")
    report, text = _read_report(report_json)
    from ascend_audit.reports.html import json_sha256, write_html
    from ascend_audit.reports.junit import write_junit
    from ascend_audit.reports.markdown import write_markdown

    if html_path:
        write_html(report, html_path, text, lang)
        click.echo(f"wrote {html_path}", err=html_path == "-")
    if junit_path:
        write_junit(report, junit_path, lang)
        click.echo(f"wrote {junit_path}", err=junit_path == "-")
    if markdown_path:
        write_markdown(report, markdown_path, json_sha256(text), lang)
        click.echo(f"wrote {markdown_path}", err=markdown_path == "-")


@click.command()
@click.argument("before", type=click.Path(dir_okay=False))
@click.argument("after", type=click.Path(dir_okay=False))
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write the diff as JSON ('-': stdout).",
)
def diff(before: str, after: str, json_path: str | None) -> None:
    """What changed between two audits of a node; exit 1 when something got worse.

    \b
    Examples:
      ascend-audit diff before.json after.json
      ascend-audit diff before.json after.json --json - | jq .worse
    """
    import json

    from ascend_audit.reports.diff import diff_reports, host_warning, render_diff_text
    from ascend_audit.reports.json_report import write_atomic

    old, _ = _read_report(before)
    new, _ = _read_report(after)
    result = diff_reports(old, new)
    text = json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n"
    if json_path == "-":
        warning = host_warning(result)
        if warning:
            click.echo(terminal_text(warning), err=True)
        click.echo(text, nl=False)
    else:
        click.echo(terminal_text(render_diff_text(result)), nl=False)
        if json_path:
            write_atomic(json_path, text)
    sys.exit(EXIT_NOT_READY if result["got_worse"] else EXIT_READY)


@click.command()
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the fleet HTML.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the fleet JSON.")
def merge(reports: tuple[str, ...], html_path: str | None, json_path: str | None) -> None:
    """Roll node reports up into a fleet view; exit 1 when a node is not ready or nodes disagree.

    \b
    Examples:
      ascend-audit merge reports/*.json --html fleet.html --json fleet.json
    """
    import json

    from ascend_audit.reports.json_report import write_atomic
    from ascend_audit.reports.merge import fleet_exit_code, merge_reports, render_fleet_text

    loaded = [(path, _read_report(path)[0]) for path in reports]
    fleet = merge_reports(loaded)
    to_stdout = "-" in (json_path, html_path)
    if json_path:
        write_atomic(json_path, json.dumps(fleet, indent=2, ensure_ascii=False, default=str) + "\n")
    if html_path:
        from ascend_audit.reports.html import render_fleet_html

        write_atomic(html_path, render_fleet_html(fleet))
    # the files first: a terminal that fails cannot cost them
    click.echo(terminal_text(render_fleet_text(fleet)), nl=False, err=to_stdout)
    sys.exit(fleet_exit_code(fleet))
