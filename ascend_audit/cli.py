"""Command line: run, collect, checks, explain. Heavy modules are imported inside commands only."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from ascend_audit import __version__

EXIT_READY, EXIT_NOT_READY, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(click.UsageError):
    """A usage error: exit 2 with a message naming the option or file."""


def _split(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(v.strip() for raw in values for v in raw.split(",") if v.strip())


def _complete_examples(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.examples_index import list_examples

    return [n for n, _ in list_examples() if n.startswith(incomplete)] + (
        ["list"] if "list".startswith(incomplete) else []
    )


def _complete_presets(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.presets import preset_names

    return [n for n in preset_names() if n.startswith(incomplete)]


def _complete_check_ids(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """Check ids; in a comma list (--only A,B) the last item is completed."""
    from ascend_audit.registry import load_registry

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    try:
        ids = [s.id for s in load_registry(entry_points=False, catalogue_only=True).all()]
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [prefix + i for i in ids if i.upper().startswith(last.upper())]


def _complete_tags(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.registry import load_registry

    try:
        specs = load_registry(entry_points=False, catalogue_only=True).all()
    except Exception:
        return []
    tags = sorted({t for s in specs for t in s.all_tags})
    return [t for t in tags if t.startswith(incomplete.lower())]


def _lang_option(fn: Any) -> Any:
    return click.option(
        "--lang",
        type=click.Choice(["zh", "en"]),
        help="Language of the terminal, HTML, Markdown and JUnit outputs (default: zh when "
        "LC_ALL / LC_MESSAGES / LANG is zh_*, else en). The JSON keeps English and records it.",
    )(fn)


def _lang(opts: dict[str, Any]) -> str:
    from ascend_audit.i18n import detect_lang

    return opts.get("lang") or detect_lang()


def _common_inputs(fn: Any) -> Any:
    """Options shared by `run` and `collect`: where the node is and what the user hands over."""
    options = [
        click.option(
            "--sysroot",
            default="/",
            show_default=True,
            type=click.Path(file_okay=False, exists=True),
            help="Read /sys, /proc, /dev, /etc and /usr/local/Ascend under this directory.",
        ),
        click.option(
            "--policy",
            type=click.Path(dir_okay=False),
            help="Policy TOML: required layers, thresholds, expected versions, waivers.",
        ),
        click.option(
            "--trace",
            "traces",
            multiple=True,
            type=click.Path(),
            help="Profiler output (torch_npu *_ascend_pt, msprof PROF_*, or a CSV). Repeatable.",
        ),
        click.option(
            "--serving-log",
            "serving_logs",
            multiple=True,
            type=click.Path(),
            help="vLLM / vllm-ascend / MindIE log file. Repeatable.",
        ),
        click.option(
            "--serving-config",
            "serving_configs",
            multiple=True,
            type=click.Path(),
            help="vLLM YAML/args, additional-config JSON or MindIE config.json. Repeatable.",
        ),
        click.option(
            "--bench-result",
            "bench_results",
            multiple=True,
            type=click.Path(),
            help="JSON written by `vllm bench serve --save-result`. Repeatable.",
        ),
        click.option(
            "--python",
            "python",
            help="Serving environment's interpreter to probe (default: a running server's).",
        ),
        click.option(
            "--deep", is_flag=True, help="Probe attaches to the NPUs (device count, memory)."
        ),
        click.option(
            "--checks-dir",
            "checks_dirs",
            multiple=True,
            type=click.Path(file_okay=False),
            help="Also load checks from the *.py files of this directory. Repeatable.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            help="Seconds each node command may take (default 10, or the policy's).",
        ),
        click.option(
            "--preset",
            shell_complete=_complete_presets,
            help="Bundled policy for a hardware and serving scenario (`ascend-audit presets`); "
            "not together with --policy.",
        ),
        click.option(
            "--rank-table",
            "rank_table",
            type=click.Path(dir_okay=False),
            help="Rank table (hccl.json) to check (default: the service's RANK_TABLE_FILE).",
        ),
        click.option(
            "--model-dir",
            "model_dir",
            type=click.Path(file_okay=False),
            help="Model directory whose safetensors shards to check (default: driver.weights_path "
            "or the serving process's model).",
        ),
        click.option(
            "--verify-weights",
            is_flag=True,
            help="Also compare SHA-256 of sampled blocks with a weights manifest.",
        ),
        click.option(
            "--weights-manifest",
            "weights_manifest",
            type=click.Path(dir_okay=False),
            help="Manifest from `ascend-audit weights-manifest` (default: "
            "ascend-audit-manifest.json in the model directory).",
        ),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return _lang_option(fn)


_FILE_INPUTS = (
    ("--serving-log", "serving_logs"),
    ("--serving-config", "serving_configs"),
    ("--bench-result", "bench_results"),
    ("--rank-table", "rank_table"),
    ("--weights-manifest", "weights_manifest"),
    ("--policy", "policy"),
)


def _preflight_inputs(opts: dict[str, Any]) -> None:
    """Refuse, before the audit starts, inputs that cannot be read without blocking: a FIFO,
    socket or device given as a file, or a --trace that does not exist (exit 2 naming it)."""
    import stat

    def values(key: str) -> list[str]:
        v = opts.get(key)
        return [] if not v else [v] if isinstance(v, str) else list(v)

    for flag, key in (*_FILE_INPUTS, ("--trace", "traces"), ("--model-dir", "model_dir")):
        for path in values(key):
            try:
                mode = os.stat(path).st_mode  # stat never opens, so a FIFO cannot block it
            except FileNotFoundError:
                if key == "traces":
                    raise UsageError(f"--trace: {path}: no such file or directory") from None
                continue
            except OSError as exc:
                raise UsageError(f"{flag}: {path}: {exc.strerror}") from None
            if stat.S_ISREG(mode) or (stat.S_ISDIR(mode) and key in ("traces", "model_dir")):
                continue
            from ascend_audit.safe_io import kind_of

            raise UsageError(f"{flag}: {path} is {kind_of(mode)}, not a regular file")


_OUTPUT_OPTIONS = (
    ("--json", "json_path", "file"),
    ("--output-dir", "output_dir", "dir"),
    ("--html", "html_path", "file"),
    ("--junit", "junit_path", "file"),
    ("--markdown", "markdown_path", "file"),
    ("--prometheus", "prometheus_path", "file"),
)


def _preflight_outputs(opts: dict[str, Any], record_to: str | None) -> bool:
    """Refuse unwritable or unsafe outputs before the audit starts (exit 2 naming them);
    True when one of them is standard output."""
    from ascend_audit.safe_write import OutputError, check_outputs

    wanted = [(flag, opts.get(key) or "", kind) for flag, key, kind in _OUTPUT_OPTIONS]
    if record_to:
        is_tar = record_to.endswith((".tar.gz", ".tgz"))
        wanted.append(("--output", record_to, "file" if is_tar else "dir"))
        if not is_tar:
            from ascend_audit.host.snapshot import bundle_dir_problem

            why = bundle_dir_problem(record_to)
            if why:
                raise UsageError(f"--output: {why}")
    try:
        check_outputs(wanted)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    return any(path == "-" for _flag, path, _kind in wanted)


def _load_policy(path: str | None, fallback_text: str | None = None) -> Any:
    from ascend_audit.policy import PolicyError, load_policy, parse_policy

    try:
        if path is None and fallback_text is not None:
            return parse_policy(fallback_text, "policy bundled with the snapshot")
        return load_policy(path)
    except PolicyError as exc:
        raise UsageError(f"--policy: {exc}") from None


def _preset_policy(name: str, policy: str | None) -> str:
    """The path of a bundled preset; refuse --preset with --policy (which one would win?)."""
    from ascend_audit.presets import preset_names, preset_path

    if policy:
        raise UsageError(
            "--preset and --policy together: use one; to adjust a preset, "
            f"`ascend-audit presets --show {name} > policy.toml`, edit, and pass --policy"
        )
    path = preset_path(name)
    if path is None:
        raise UsageError(f"--preset: no preset {name!r}; choose one of {', '.join(preset_names())}")
    return path


def _load_registry(
    checks_dirs: tuple[str, ...],
    catalogue_only: bool = False,
    layers: tuple[str, ...] | None = None,
) -> Any:
    from ascend_audit.registry import RegistryError, load_registry

    try:
        return load_registry(checks_dirs, catalogue_only=catalogue_only, layers=layers)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None


def _check_selection(registry: Any, only: frozenset[str], skip: frozenset[str]) -> None:
    for flag, ids in (("--only", only), ("--skip", skip)):
        unknown = sorted(i for i in ids if registry.get(i) is None)
        if unknown:
            raise UsageError(
                f"{flag}: unknown check id {unknown[0]}; `ascend-audit checks` lists them"
            )


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="ascend-audit")
def main() -> None:
    """Is this Ascend NPU node ready for LLM inference? Judged layer by layer:
    driver, then operator, then framework; a layer that is not ready blocks those above.

    \b
    Examples:
      ascend-audit run --example atlas-800t-a2-ready     audit a bundled example node
      ascend-audit run --json report.json                 audit this node
      ascend-audit run --trace ./prof_ascend_pt --serving-log vllm.log --policy policy.toml
      ascend-audit collect -o node.tar.gz                 record this node for later
      ascend-audit run --snapshot node.tar.gz             replay a recorded node
      ascend-audit explain DRV-NPU-001                    what a check judges and how to fix it

    Exit codes: 0 ready, 1 not ready, 2 usage error, 3 the auditor itself failed.
    """


@main.command()
@_common_inputs
@click.option(
    "--snapshot",
    type=click.Path(exists=True),
    help="Replay a bundle written by `ascend-audit collect` instead of reading this node.",
)
@click.option(
    "--example",
    shell_complete=_complete_examples,
    help="Audit a bundled example node; `--example list` shows the choices.",
)
@click.option(
    "--only",
    multiple=True,
    shell_complete=_complete_check_ids,
    help="Run only these check ids (comma list, repeatable).",
)
@click.option(
    "--skip",
    multiple=True,
    shell_complete=_complete_check_ids,
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
def run(**opts: Any) -> None:
    """Audit a node (this one, a --sysroot tree, a --snapshot or an --example).

    \b
    Examples:
      ascend-audit run
      ascend-audit run --policy policy.toml --json report.json
      ascend-audit run --sysroot /mnt/node --layers driver
      ascend-audit run --example list
    """
    sys.exit(_run(opts, record_to=None))


@main.command()
@_common_inputs
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


def _run(opts: dict[str, Any], record_to: str | None) -> int:
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, exit_code, run_audit
    from ascend_audit.host.live import LiveHost
    from ascend_audit.host.snapshot import RecordingHost, SnapshotError, SnapshotHost
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
    only, skip = _split(opts["only"]), _split(opts["skip"])
    registry = _load_registry(opts["checks_dirs"], layers=layers)
    _check_selection(registry, only, skip)

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
        opts["policy"] = _preset_policy(opts["preset"], opts.get("policy"))
    if not opts.get("snapshot"):
        _preflight_inputs(opts)
    to_stdout = _preflight_outputs(opts, record_to)
    if opts.get("snapshot"):
        try:
            host = SnapshotHost(opts["snapshot"])
        except SnapshotError as exc:
            raise UsageError(f"--snapshot: {exc}") from None
        recorded = host.manifest.get("run_inputs") or {}
        if inputs.empty:
            inputs = Inputs.from_dict(recorded)
        snapshot_policy = host.policy_text()
    else:
        host = LiveHost(opts["sysroot"])
        if record_to:
            host = RecordingHost(host)
    policy = _load_policy(opts["policy"], snapshot_policy)
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
    live = host.inner if isinstance(host, RecordingHost) else host
    if isinstance(live, LiveHost):
        live.timeout = policy["audit.command_timeout"]
    fail_on = opts.get("fail_on") or policy["audit.fail_on"]

    colour = None if not opts.get("no_color") and "NO_COLOR" not in os.environ else False
    verbosity = -1 if opts.get("quiet") else (1 if opts.get("verbose") else 0)
    from ascend_audit import progress as byte_bars

    byte_bars.configure(quiet=bool(opts.get("quiet")))
    lang = _lang(opts)
    id_width = max((len(spec.id) for spec in registry.all()), default=14)
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


@main.command("checks")
@click.option("--layer", type=click.Choice(["driver", "operator", "framework"]))
@click.option(
    "--tag",
    "tags",
    multiple=True,
    shell_complete=_complete_tags,
    help="Only checks with this tag: its concern (network, storage, versions, …), id family "
    "(npu, ver, net, …), severity (critical, high, …) or a tag its metadata gives. Repeatable: "
    "any of them.",
)
@click.option("--checks-dir", "checks_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
def checks_cmd(
    layer: str | None, tags: tuple[str, ...], checks_dirs: tuple[str, ...], as_json: bool
) -> None:
    """List every check: id, layer, severity, title.

    \b
    Examples:
      ascend-audit checks
      ascend-audit checks --layer driver
      ascend-audit checks --tag network --tag storage
      ascend-audit checks --checks-dir ./site-checks --json
    """
    registry = _load_registry(checks_dirs, catalogue_only=True)
    wanted = {t.strip().lower() for t in _split(tags)}
    specs = [
        s
        for s in registry.all()
        if (layer is None or s.layer == layer) and (not wanted or wanted & set(s.all_tags))
    ]
    if wanted and not specs:
        known = sorted({t for s in registry.all() for t in s.all_tags})
        raise UsageError(
            f"--tag: no check has tag {', '.join(sorted(wanted))}; tags: " + ", ".join(known)
        )
    if as_json:
        import json

        click.echo(json.dumps([s.to_dict() for s in specs], indent=2, ensure_ascii=False))
        return
    for s in specs:
        click.echo(f"{s.id:<16} {s.layer:<10} {s.severity:<9} {s.title}")


@main.command()
@click.argument("check_id", shell_complete=_complete_check_ids)
@click.option("--checks-dir", "checks_dirs", multiple=True, type=click.Path(file_okay=False))
@_lang_option
def explain(check_id: str, checks_dirs: tuple[str, ...], lang: str | None) -> None:
    """Explain one check: why it matters, what evidence it reads, how to fix a failure.

    \b
    Example:
      ascend-audit explain DRV-NPU-001
    """
    registry = _load_registry(checks_dirs, catalogue_only=True)
    spec = registry.get(check_id.strip().upper()) or registry.get(check_id.strip())
    if spec is None:
        raise UsageError(f"unknown check id {check_id}; `ascend-audit checks` lists them")
    from ascend_audit.i18n import check_text, detect_lang

    lang = lang or detect_lang()
    title = check_text(spec.id, "title", lang, spec.title)
    fix = check_text(spec.id, "remediation", lang, spec.remediation)
    click.echo(f"{spec.id} — {title}\nlayer: {spec.layer}   severity: {spec.severity}\n")
    click.echo("Why it matters:\n  " + (spec.rationale or "(not documented)").replace("\n", "\n  "))
    if spec.evidence:
        click.echo("\nEvidence it reads:")
        for item in spec.evidence:
            click.echo(f"  - {item}")
    if spec.policy_keys:
        from ascend_audit.policy import SCHEMA

        click.echo("\nPolicy keys it reads (default):")
        for key in spec.policy_keys:
            section, _, name = key.partition(".")
            _v, default, text = SCHEMA.get(section, {}).get(name, (None, None, "plug-in setting"))
            shown = "unset" if default is None else repr(default)
            click.echo(f"  - {key} = {shown}  ({text})")
    click.echo("\nHow to fix:\n  " + (fix or "(not documented)").replace("\n", "\n  "))


@main.command("policy-keys")
def policy_keys() -> None:
    """Print every policy key with its default and meaning.

    \b
    Example:
      ascend-audit policy-keys > policy.toml.reference
    """
    from ascend_audit.policy import describe_schema

    click.echo(describe_schema())


def _terminal_text(text: str) -> str:
    """Report text for the terminal: node-supplied control characters removed, and what the
    terminal's encoding cannot show replaced."""
    from ascend_audit.textsafe import encodable, printable

    return encodable(printable(text), sys.stdout)


def _read_report(path: str) -> Any:
    """Load one JSON report for render/diff/merge; unreadable or invalid → usage error (exit 2)."""
    from ascend_audit.reports.diff import ReportInputError, load_report

    try:
        return load_report(path)
    except ReportInputError as exc:
        raise UsageError(str(exc)) from None


@main.command()
@click.argument("report_json", type=click.Path(dir_okay=False))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML.")
@click.option(
    "--markdown", "markdown_path", type=click.Path(dir_okay=False), help="Write a Markdown summary."
)
@_lang_option
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


@main.command()
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
            click.echo(_terminal_text(warning), err=True)
        click.echo(text, nl=False)
    else:
        click.echo(_terminal_text(render_diff_text(result)), nl=False)
        if json_path:
            write_atomic(json_path, text)
    sys.exit(EXIT_NOT_READY if result["got_worse"] else EXIT_READY)


@main.command()
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
    click.echo(_terminal_text(render_fleet_text(fleet)), nl=False, err=to_stdout)
    sys.exit(fleet_exit_code(fleet))


@main.command("presets")
@click.option(
    "--show",
    "show",
    metavar="NAME",
    shell_complete=_complete_presets,
    help="Print one preset's policy TOML.",
)
def presets_cmd(show: str | None) -> None:
    """List the bundled policy presets, or print one to copy and edit.

    \b
    Examples:
      ascend-audit presets
      ascend-audit presets --show a3-vllm-decode > policy.toml
      ascend-audit run --preset a2-vllm
    """
    from ascend_audit.presets import list_presets, preset_names, preset_text

    if show:
        text = preset_text(show)
        if text is None:
            raise UsageError(
                f"--show: no preset {show!r}; choose one of {', '.join(preset_names())}"
            )
        click.echo(text, nl=False)
        return
    for name, description in list_presets():
        click.echo(f"{name:<18} {description}")


@main.command("weights-manifest")
@click.argument("model_dir", type=click.Path(file_okay=False, exists=True))
@click.option(
    "-o", "--output", default="-", show_default=True, help="Manifest file to write ('-': stdout)."
)
@click.option("--samples", default=8, show_default=True, type=click.IntRange(min=1))
@click.option("--block-size", default=1024 * 1024, show_default=True, type=click.IntRange(min=4096))
@click.option("--full", is_flag=True, help="Also hash every file completely (slow).")
def weights_manifest_cmd(
    model_dir: str, output: str, samples: int, block_size: int, full: bool
) -> None:
    """Write a weights manifest (sizes, header and sampled-block SHA-256) of a known-good copy.

    \b
    Examples:
      ascend-audit weights-manifest /models/Qwen3-8B -o qwen3-8b.manifest.json
      ascend-audit run --model-dir /models/Qwen3-8B --verify-weights \\
          --weights-manifest qwen3-8b.manifest.json
    """
    import json

    from ascend_audit.facts.weights import write_manifest
    from ascend_audit.progress import byte_progress, tree_bytes
    from ascend_audit.reports.json_report import write_atomic

    with byte_progress("hashing weights", tree_bytes(model_dir) if full else None) as advance:
        manifest = write_manifest(
            model_dir, block_size=block_size, samples=samples, full=full, progress=advance
        )
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    if output == "-":
        click.echo(text, nl=False)
        return
    write_atomic(output, text)
    mb = manifest["total_bytes"] / 1e6
    click.echo(
        f"wrote {output}: {len(manifest['files'])} files, {mb:.1f} MB, {manifest['seconds']:.2f} s",
        err=True,
    )
    if manifest["problems"]:
        click.echo("problems: " + "; ".join(manifest["problems"][:5]), err=True)
        sys.exit(EXIT_NOT_READY)


@main.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script (commands, options, example names, presets, check ids).

    \b
    Examples:
      eval "$(ascend-audit completion bash)"                   # this shell
      ascend-audit completion bash > /etc/bash_completion.d/ascend-audit
      ascend-audit completion zsh > "${fpath[1]}/_ascend-audit"
      ascend-audit completion fish > ~/.config/fish/completions/ascend-audit.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click knows all three
        raise UsageError(f"no completion for {shell}")
    click.echo(cls(main, {}, "ascend-audit", "_ASCEND_AUDIT_COMPLETE").source())


EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + SIGINT, 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so every `finally` (snapshots, staging dirs) runs."""


def _on_sigterm(_signum: int, _frame: Any) -> None:
    raise Terminated()


def _interrupted(exc: BaseException | None) -> None:
    """End the child process groups still running and exit 130 (Ctrl-C) or 143 (SIGTERM)."""
    from ascend_audit.host.live import kill_running_children

    kill_running_children()
    terminated = isinstance(exc, Terminated) or isinstance(
        getattr(exc, "__context__", None), Terminated
    )
    click.echo("terminated" if terminated else "interrupted", err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def entry() -> None:
    """Console entry: usage errors exit 2, internal failures exit 3 without a traceback dump,
    Ctrl-C 130 and SIGTERM 143 after ending child process groups and removing temporary dirs."""
    import signal

    from ascend_audit.safe_write import OutputError

    with contextlib.suppress(ValueError, OSError):  # not the main thread
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except OutputError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except click.Abort as exc:  # click's form of KeyboardInterrupt
        _interrupted(exc)
    except SystemExit:
        raise
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except Exception as exc:
        click.echo(
            f"ascend-audit: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in ascend-audit; set ASCEND_AUDIT_DEBUG=1 for the traceback.",
            err=True,
        )
        if os.environ.get("ASCEND_AUDIT_DEBUG"):
            raise
        sys.exit(EXIT_INTERNAL)
