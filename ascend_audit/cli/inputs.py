"""The options `run` and `collect` share, and the preflight that refuses unreadable inputs and
unwritable outputs before an audit starts."""

from __future__ import annotations

import os
from typing import Any

import click

from ascend_audit.cli.common import UsageError, complete_presets, lang_option


def common_inputs(fn: Any) -> Any:
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
            shell_complete=complete_presets,
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
    return lang_option(fn)


_FILE_INPUTS = (
    ("--serving-log", "serving_logs"),
    ("--serving-config", "serving_configs"),
    ("--bench-result", "bench_results"),
    ("--rank-table", "rank_table"),
    ("--weights-manifest", "weights_manifest"),
    ("--policy", "policy"),
)


def preflight_inputs(opts: dict[str, Any]) -> None:
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


def preflight_outputs(
    opts: dict[str, Any], record_to: str | None, record_flag: str = "--output"
) -> bool:
    """Refuse unwritable or unsafe outputs before the audit starts (exit 2 naming them);
    True when one of them is standard output."""
    from ascend_audit.safe_write import OutputError, check_outputs

    wanted = [(flag, opts.get(key) or "", kind) for flag, key, kind in _OUTPUT_OPTIONS]
    if record_to:
        is_tar = record_to.endswith((".tar.gz", ".tgz"))
        wanted.append((record_flag, record_to, "file" if is_tar else "dir"))
        if not is_tar:
            from ascend_audit.host.bundle import bundle_dir_problem

            why = bundle_dir_problem(record_to)
            if why:
                raise UsageError(f"{record_flag}: {why}")
    try:
        check_outputs(wanted)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    return any(path == "-" for _flag, path, _kind in wanted)
