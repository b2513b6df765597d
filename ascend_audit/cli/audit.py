"""`run` and `collect`: audit a node (live, a --sysroot tree, a snapshot or an example) and
write its report and, for collect, its bundle."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ascend_audit.cli.common import (
    EXIT_READY,
    UsageError,
    check_selection,
    complete_check_ids,
    complete_examples,
    lang_of,
    preset_policy,
    read_policy,
    read_registry,
    split_list,
)
from ascend_audit.cli.inputs import common_inputs, preflight_inputs, preflight_outputs


@click.command()
@common_inputs
@click.option(
    "--snapshot",
    type=click.Path(exists=True),
    help="Replay a bundle written by `ascend-audit collect` instead of reading this node.",
)
@click.option(
    "--example",
    shell_complete=complete_examples,
    help="Audit a bundled example node; `--example list` shows the choices.",
)
@click.option(
    "--only",
    multiple=True,
    shell_complete=complete_check_ids,
    help="Run only these check ids (comma list, repeatable).",
)
@click.option(
    "--skip",
    multiple=True,
    shell_complete=complete_check_ids,
    help="Do not run these check ids (comma list, repeatable).",
)
@click.option(
    "--layers",
    default="driver,operator,framework",
    show_default=True,
    help="Layers to judge, comma separated.",
)
@click.option("--no-gate", is_flag=True, help="Judge upper layers even when a lower one fails.")
@click.option(
    "--fail-on",
    type=click.Choice(["warn", "fail"]),
    help="Exit 1 on warnings too with 'warn' (default: the policy's, else 'fail').",
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the JSON report.")
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False),
    help="Write report.json (and the other formats) into this directory.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@click.option("-v", "--verbose", is_flag=True, help="Print evidence sources and timings too.")
@click.option("--no-color", is_flag=True, help="Never colour the output.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML.")
@click.option(
    "--markdown", "markdown_path", type=click.Path(dir_okay=False), help="Write a Markdown summary."
)
@click.option(
    "--prometheus",
    "prometheus_path",
    type=click.Path(dir_okay=False),
    help="Write node_exporter textfile metrics (atomically), e.g. into its textfile directory.",
)
@click.option(
    "--record",
    "record_path",
    type=click.Path(),
    help="Also record every answer of this audit into a bundle (NAME.tar.gz or a directory), "
    "as `collect -o` does: one audit gives the report and the bundle.",
)
def run(**opts: Any) -> None:
    """Audit a node (this one, a --sysroot tree, a --snapshot or an --example).

    \b
    Examples:
      ascend-audit run
      ascend-audit run --policy policy.toml --json report.json
      ascend-audit run --json report.json --record node.tar.gz
      ascend-audit run --sysroot /mnt/node --layers driver
      ascend-audit run --example list
    """
    record_to = opts.pop("record_path", None)
    if record_to and (opts.get("snapshot") or opts.get("example")):
        raise UsageError("--record records a live audit: not with --snapshot or --example")
    sys.exit(_run(opts, record_to=record_to, record_flag="--record"))


@click.command()
@common_inputs
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(),
    help="Bundle to write: NAME.tar.gz, or a directory.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Also write the JSON report."
)
def collect(**opts: Any) -> None:
    """Audit this node and record every answer into a bundle for later replay.

    \b
    Examples:
      ascend-audit collect -o node.tar.gz
      ascend-audit collect -o node.tar.gz --trace ./prof_ascend_pt --serving-log vllm.log
      ascend-audit run --snapshot node.tar.gz        # later, anywhere: same report
    """
    opts.update(
        snapshot=None,
        example=None,
        only=(),
        skip=(),
        layers="driver,operator,framework",
        no_gate=False,
        fail_on=None,
        output_dir=None,
        html_path=None,
        junit_path=None,
        markdown_path=None,
        prometheus_path=None,
        verbose=False,
        no_color=True,
    )
    sys.exit(_run(opts, record_to=opts.pop("output")))


def _run(opts: dict[str, Any], record_to: str | None, record_flag: str = "--output") -> int:
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, exit_code, run_audit
    from ascend_audit.host.live import LiveHost
    from ascend_audit.inventory import build_inventory
    from ascend_audit.model import LAYERS
    from ascend_audit.reports.outputs import render_outputs
    from ascend_audit.reports.terminal import TerminalProgress, render_summary
    from ascend_audit.safe_write import OutputError

    if opts.get("example"):
        from ascend_audit.examples_index import example_path, list_examples

        if opts["example"] == "list":
            for name, description in list_examples():
                click.echo(f"{name:<24} {description}")
            return EXIT_READY
        path = example_path(opts["example"])
        if path is None:
            names = ", ".join(n for n, _ in list_examples())
            raise UsageError(f"--example: no example {opts['example']!r}; choose one of {names}")
        opts["snapshot"] = path

    layers = tuple(x for x in (s.strip() for s in opts["layers"].split(",")) if x)
    bad = [x for x in layers if x not in LAYERS]
    if bad or not layers:
        raise UsageError(f"--layers: unknown layer {bad[0] if bad else '(none)'}; use {LAYERS}")
    only, skip = split_list(opts["only"]), split_list(opts["skip"])
    registry = read_registry(opts["checks_dirs"], layers=layers)
    check_selection(registry, only, skip)

    host: Any
    snapshot_policy = None
    inputs = Inputs(
        tuple(opts["traces"]),
        tuple(opts["serving_logs"]),
        tuple(opts["serving_configs"]),
        tuple(opts["bench_results"]),
        opts["python"],
        bool(opts["deep"]),
        opts.get("rank_table"),
        opts.get("model_dir"),
        bool(opts.get("verify_weights")),
        opts.get("weights_manifest"),
    )
    if opts.get("preset"):
        opts["policy"] = preset_policy(opts["preset"], opts.get("policy"))
    if not opts.get("snapshot"):
        preflight_inputs(opts)
    to_stdout = preflight_outputs(opts, record_to, record_flag)
    live: LiveHost | None = None
    if opts.get("snapshot"):
        # the bundle reader (tarfile, gzip) and the recorder are imported only where used
        from ascend_audit.host.bundle import SnapshotError
        from ascend_audit.host.snapshot import SnapshotHost

        try:
            host = SnapshotHost(opts["snapshot"])
        except SnapshotError as exc:
            raise UsageError(f"--snapshot: {exc}") from None
        recorded = host.manifest.get("run_inputs") or {}
        if inputs.empty:
            inputs = Inputs.from_dict(recorded)
        snapshot_policy = host.policy_text()
    else:
        host = live = LiveHost(opts["sysroot"])
        if record_to:
            from ascend_audit.host.recording import RecordingHost

            host = RecordingHost(live)
    policy = read_policy(opts["policy"], snapshot_policy)
    unknown = [c for c in policy["audit.required_checks"] if registry.get(c) is None]
    if unknown:
        raise UsageError(
            f"policy audit.required_checks: unknown check id {unknown[0]}; "
            "`ascend-audit checks` lists them"
        )
    if opts.get("timeout"):
        timeout = float(opts["timeout"])
        # a hung npu-smi is bounded by --timeout too (its own key defaults to the same 10 s)
        policy = policy.with_overrides(
            {
                "audit.command_timeout": timeout,
                "driver.npu_smi_timeout": min(timeout, float(policy["driver.npu_smi_timeout"])),
            },
            "--timeout",
        )
    if live is not None:
        live.timeout = policy["audit.command_timeout"]
    fail_on = opts.get("fail_on") or policy["audit.fail_on"]

    colour = None if not opts.get("no_color") and "NO_COLOR" not in os.environ else False
    verbosity = -1 if opts.get("quiet") else (1 if opts.get("verbose") else 0)
    from ascend_audit import progress as byte_bars

    byte_bars.configure(quiet=bool(opts.get("quiet")))
    lang = lang_of(opts)
    # the id column fits every check's id; -q prints no check line, so it asks for none of them
    # (a run of some layers then never reads the other layers' metadata)
    id_width = max((len(s.id) for s in registry.all()), default=14) if verbosity >= 0 else 0
    from ascend_audit.textsafe import SafeStream

    # With an output on standard output (`--json -`), the terminal lines go to standard error.
    terminal: Any = SafeStream(sys.stderr if to_stdout else sys.stdout)
    progress = TerminalProgress(
        out=terminal, colour=colour, verbosity=verbosity, lang=lang, id_width=id_width
    )
    ctx = Context(host, policy, inputs)
    # collect records every layer's questions, even those a failing layer blocks.
    selection = Selection(
        only, skip, layers, gate=not opts["no_gate"], gather_blocked=record_to is not None
    )
    try:
        report = run_audit(registry, ctx, selection, progress, inventory=build_inventory)
        if opts.get("snapshot"):
            report.inputs["snapshot"] = opts["snapshot"]
        report.lang = lang
        # the report files are written before anything is printed: a terminal that fails
        # cannot cost the report
        try:
            render_outputs(
                report,
                opts.get("json_path"),
                opts.get("output_dir"),
                html_path=opts.get("html_path"),
                junit_path=opts.get("junit_path"),
                markdown_path=opts.get("markdown_path"),
            )
            if opts.get("prometheus_path"):
                from ascend_audit.reports.prometheus import write_prometheus

                write_prometheus(report, opts["prometheus_path"])
            if record_to:
                host.write_bundle(
                    record_to,
                    report.tool,
                    run_inputs=inputs.to_dict(),
                    policy_path=opts["policy"],
                )
        except OutputError as exc:
            raise UsageError(str(exc)) from None
        render_summary(report, terminal, progress.colour, lang)
        if record_to:
            terminal.write(f"\nsnapshot written to {record_to}\n")
    finally:
        host.close()
    return exit_code(report, fail_on)
