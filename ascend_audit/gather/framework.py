"""Framework gatherers: the serving interpreter's probe, serving configs, serving logs, benchmarks.

Each user input (`--serving-config`, `--serving-log`, `--bench-result`) is read through
`host.input_path` so a snapshot replays it; the probe runs through `host.run` so it is recorded.
"""

from __future__ import annotations

import posixpath
import time
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import (
    BENCH_RESULTS,
    PROBE,
    SERVING_CONFIGS,
    SERVING_LOGS,
    BenchInput,
    ConfigInput,
    LogInput,
    ProbeRun,
    ServingConfigs,
    first,
    kv_tokens,
)
from ascend_audit.host.base import ProcessInfo
from ascend_audit.safe_io import open_regular

CONFIG_CAP = 16 * 1024 * 1024
BENCH_CAP = 64 * 1024 * 1024
GARBAGE_SHARE = 0.10  # binary share of a log's first MiB above which it is not a text log
MINDIE_HOME = "/usr/local/Ascend/mindie/latest/mindie-service"


# ---------------------------------------------------------------------------------------------
# serving processes and the interpreter to probe


def is_serving(proc: ProcessInfo) -> str | None:
    """'vllm' or 'mindie' when a process is a serving engine, else None."""
    from ascend_audit.facts.serving_config.argv import is_vllm_argv

    if is_vllm_argv(proc.cmdline):
        return "vllm"
    head = " ".join([proc.name, proc.exe, *proc.cmdline[:2]]).lower()
    return "mindie" if "mindie" in head else None


def serving_processes(ctx: Context) -> list[ProcessInfo]:
    """Running vLLM / vllm-ascend / MindIE processes (none on a fake node or a bare snapshot)."""
    try:
        return [p for p in ctx.host.processes() if is_serving(p)]
    except Exception:
        return []


def _scan_gaps(ctx: Context) -> str:
    """The processes the scan could not read (a serving process may be among them)."""
    from ascend_audit.host.procscan import describe_gaps

    try:
        return describe_gaps(ctx.host.process_gaps())
    except Exception:
        return ""


def probe_argv(python: str, deep: bool) -> list[str]:
    """How the probe runs: no shell, isolated mode (-I: no user site, no PYTHON* variables),
    no bytecode written into the serving environment (-B)."""
    from ascend_audit.facts.probe import PROBE_SCRIPT

    return [python, "-I", "-B", "-c", PROBE_SCRIPT, *(["--deep"] if deep else [])]


@gatherer(PROBE, "framework")
def probe(ctx: Context) -> ProbeRun:
    """Run the probe in `--python`, else in the verified interpreter of a running serving
    process, as that process's user (see gather/interpreter.py)."""
    from ascend_audit.facts.probe import PROBE_ENV, parse_probe_output
    from ascend_audit.gather.interpreter import serving_interpreter

    python, origin, identity, refused = ctx.inputs.python, "--python", None, ""
    if not python:
        origin = ""
        for proc in serving_processes(ctx):
            found = serving_interpreter(ctx.host, proc)
            if found.python:
                python, identity, refused = found.python, found.identity, ""
                origin = f"process {proc.pid} ({' '.join(proc.cmdline)[:100]})"
                break
            refused = refused or found.refused
    if not python:
        return ProbeRun(None, origin, refused=refused, scan_gaps=_scan_gaps(ctx))
    timeout = float(ctx.policy.get("framework.probe_timeout") or 60.0)
    env = {**PROBE_ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    deep = ctx.inputs.deep  # the deep probe opens the NPU devices
    res = ctx.host.run_as(probe_argv(python, deep), timeout, identity, env, needs_devices=deep)
    facts = parse_probe_output(res.stdout, res.stderr, res.rc, res.status == "timeout")
    return ProbeRun(python, origin, res, facts, timeout, identity=identity)


# ---------------------------------------------------------------------------------------------
# serving configs


def _read_input(ctx: Context, path: str, cap: int) -> tuple[str | None, str | None]:
    """Text of a user input file (through the host, so snapshots replay it), or an error."""
    local = ctx.host.input_path(path)
    if local is None:
        return None, f"{path}: no such file"
    try:
        with open_regular(local) as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        return None, f"{path}: cannot read ({exc.strerror or type(exc).__name__})"
    if len(data) > cap:
        return None, f"{path}: larger than {cap // 2**20} MiB; not a serving config or result"
    return data.decode("utf-8", errors="replace"), None


_OPTION_KEYS = ("torchair_graph_config", "ascend_scheduler_config", "ascend_compilation_config")


def _parse_config_text(text: str, path: str, env: dict[str, str] | None = None) -> Any:
    """MindIE config.json, a standalone --additional-config JSON, a `vllm serve …` launch
    script or command line, or vLLM YAML / JSON."""
    from ascend_audit.facts.serving_config.config_file import parse_config_file
    from ascend_audit.facts.serving_config.launch_script import (
        is_launch_script,
        parse_launch_script,
    )
    from ascend_audit.facts.serving_config.option_json import parse_option_json

    head = text.lstrip()[:4096]
    if head.startswith("{") and '"model"' not in head and any(k in head for k in _OPTION_KEYS):
        return parse_option_json(text, path, "additional_config")
    if not head.startswith("{") and is_launch_script(text):
        return parse_launch_script(text, path, env)
    return parse_config_file(text, path, env)


def _unreadable(cfg: Any) -> str | None:
    """A config that yielded no value at all: the parser's first problem, naming the file."""
    if cfg.items or cfg.options:
        return None
    why = "; ".join(cfg.problems[:2]) or "no serving option found"
    if not why.startswith(cfg.source):
        why = f"{cfg.source}: {why}"
    return why + " (not a vLLM command line / YAML, --additional-config JSON or MindIE config.json)"


def _process_config(ctx: Context, proc: ProcessInfo, kind: str) -> ConfigInput:
    from ascend_audit.facts.serving_config.argv import parse_vllm_argv
    from ascend_audit.facts.serving_config.mindie import parse_mindie_config

    src = f"process {proc.pid} cmdline"
    env = dict(proc.environ)
    if kind == "vllm":
        cfg = parse_vllm_argv(proc.cmdline, src, env)
        if cfg.config_file:
            path = cfg.config_file
            if not path.startswith("/") and proc.cwd:
                path = posixpath.join(proc.cwd, path)
            read = ctx.host.read_text(path)
            if read.ok:
                cfg = parse_vllm_argv(proc.cmdline, src, env, read.text, path)
        return ConfigInput(src, cfg, None, proc.pid)
    homes = [env.get("MIES_INSTALL_PATH", "")]
    if proc.exe:
        homes.append(posixpath.dirname(posixpath.dirname(proc.exe)))
    homes.append(MINDIE_HOME)
    for home in dict.fromkeys(h for h in homes if h):
        path = posixpath.join(home, "conf/config.json")
        read = ctx.host.read_text(path)
        if read.ok and read.text:
            cfg = parse_mindie_config(read.text, path, env)
            return ConfigInput(path, cfg, _unreadable(cfg), proc.pid)
    return ConfigInput(src, None, None, proc.pid)


@gatherer(SERVING_CONFIGS, "framework")
def serving_configs(ctx: Context) -> ServingConfigs:
    """--serving-config files plus the command lines (and MindIE config) of serving processes."""
    inputs: list[ConfigInput] = []
    for path in ctx.inputs.serving_configs:
        text, err = _read_input(ctx, path, CONFIG_CAP)
        if text is None:
            inputs.append(ConfigInput(path, None, err))
            continue
        cfg = _parse_config_text(text, path)
        inputs.append(ConfigInput(path, cfg, _unreadable(cfg)))
    procs = serving_processes(ctx)
    for proc in procs:
        kind = is_serving(proc) or ""
        inputs.append(_process_config(ctx, proc, kind))
    inputs += _logged_args(ctx)
    return ServingConfigs(tuple(inputs), tuple(procs))


def _logged_args(ctx: Context) -> list[ConfigInput]:
    """The `non-default args: {...}` line of each serving log, read whole as a configuration."""
    from ascend_audit.facts.serving_config.args_dict import parse_vllm_args_dict

    out = []
    for item in ctx.fact(SERVING_LOGS) if ctx.inputs.serving_logs else ():
        f = item.facts
        if f is None or item.error or not f.launch_args:
            continue
        lineno, text = f.launch_args
        cfg = parse_vllm_args_dict(text, item.path, lineno)
        if cfg.items:
            out.append(ConfigInput(f"{item.path}:{lineno}", cfg, from_log=True))
    return out


# ---------------------------------------------------------------------------------------------
# serving logs


def _scan_with_progress(local: str, path: str) -> Any:
    """One scan of a log, with a progress bar on a TTY for inputs over 100 MB."""
    import os

    from ascend_audit.facts.serving_log import scan_serving_log_file
    from ascend_audit.progress import byte_progress

    size = os.stat(local).st_size
    with byte_progress(f"reading {path}", size) as advance:
        seen = [0]

        def moved(done: int, _total: int) -> None:
            advance(done - seen[0])
            seen[0] = done

        return scan_serving_log_file(local, path, moved)


@gatherer(SERVING_LOGS, "framework")
def serving_logs(ctx: Context) -> list[LogInput]:
    """Each --serving-log read once, in 1 MiB chunks and bounded memory; the operator layer's
    fallback warnings come from the same pass (`LogInput.facts.fallback`)."""
    out: list[LogInput] = []
    for path in ctx.inputs.serving_logs:
        local = ctx.host.input_path(path)
        if local is None:
            out.append(LogInput(path, None, f"{path}: no such file"))
            continue
        start = time.monotonic()
        try:
            facts = _scan_with_progress(local, path)
        except OSError as exc:
            out.append(LogInput(path, None, f"{path}: cannot read ({exc.strerror})"))
            continue
        took = time.monotonic() - start
        error = None
        if facts.binary_share > GARBAGE_SHARE:
            share = 100 * facts.binary_share
            error = f"{path}: not a text log ({share:.0f} % of its first MiB is binary)"
        elif facts.lines_read == 0:
            error = f"{path}: log is empty"
        elif not facts.recognised:
            error = (
                f"{path}: neither a serving log nor a collect_env output (no vLLM, MindIE, "
                f"torch_npu or CANN line in its {facts.lines_read:,} lines)"
            )
        out.append(LogInput(path, facts, error, took))
    return out


# ---------------------------------------------------------------------------------------------
# benchmark results


@gatherer(BENCH_RESULTS, "framework")
def bench_results(ctx: Context) -> list[BenchInput]:
    """Each --bench-result parsed (vllm bench serve --save-result JSON or JSON lines)."""
    from ascend_audit.facts.bench_result import parse_bench_result

    out: list[BenchInput] = []
    for path in ctx.inputs.bench_results:
        text, err = _read_input(ctx, path, BENCH_CAP)
        if text is None:
            out.append(BenchInput(path, None, err))
            continue
        res = parse_bench_result(text, path)
        bad = res.completed is None
        out.append(BenchInput(path, res, "; ".join(res.problems[:2]) if bad else None))
    return out


# ---------------------------------------------------------------------------------------------
# inventory


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Installed framework versions (from the probe) and the serving engine's effective settings."""
    inv: dict[str, Any] = {}
    run: ProbeRun | None = facts.get("probe")
    if run is not None and run.facts is not None and run.facts.ran:
        f = run.facts
        pk = dict(f.packages)
        inv["versions"] = {
            k: v
            for k, v in {
                "python": f.python_version,
                "torch": pk.get("torch"),
                "torch_npu": pk.get("torch_npu"),
                "vllm": pk.get("vllm"),
                "vllm_ascend": pk.get("vllm_ascend"),
                "mindie": pk.get("mindie") or pk.get("mindie_llm"),
            }.items()
            if v
        }
    fw: dict[str, Any] = {}
    if run is not None and run.python:
        fw["python"] = run.python
        if run.facts is not None and run.facts.ran:
            fw["torch_npu_import"] = run.facts.torch_npu_status
            if run.facts.deep:
                fw["devices"] = {
                    "count": run.facts.device_count,
                    "names": list(run.facts.device_names),
                    "mem_info": [list(m) if m else None for m in run.facts.mem_info],
                }
    cfgs: ServingConfigs | None = facts.get("serving_configs")
    good = cfgs.configs if cfgs else []
    scanned = [
        i.facts for i in facts.get("serving_logs") or [] if i.facts is not None and not i.error
    ]
    engine = (
        first(c.engine for c in good)
        or first(
            ("mindie" if f.engine == "mindie" else "vllm") if f.engine else None for f in scanned
        )
        or first(f.engine_kind for f in scanned)
    )
    if engine:
        fw["engine"] = engine
    modes = [f.graph_mode for f in scanned if f.graph_mode != "unknown"]
    if modes:
        fw["graph_mode"] = modes[-1]
    block = first([*(c.block_size for c in good), *(f.block_size for f in scanned)])
    if block is not None:
        fw["block_size"] = block
    tokens = first(kv_tokens(f) for f in scanned)
    if tokens is not None:
        fw["kv_tokens"] = tokens
    stages = [f for f in scanned if f.stage or f.died]
    if stages:
        fw["lifecycle"] = [
            {
                "log": f.source,
                "stage": f.stage,
                "died": f.died,
                "final_exception": f.final_exception,
                "exception_where": f.exception_where,
                "error_codes": [str(h.value) for h in f.error_codes],
            }
            for f in stages
        ]
    load = first(f.weights_load_seconds for f in scanned)
    if load is not None:
        fw["load_seconds"] = load
    if fw:
        inv["framework"] = fw
    return inv


_MOVED_TO_CHECKS = (
    "probe_problem",
    "probe_evidence",
    "no_evidence",
    "where",
    "item_evidence",
    "hit_evidence",
    "input_errors",
    "cannot_judge",
    "logs",
    "configs",
    "optional_fact",
    "engine_of",
    "serving_env",
    "graph_summary",
)


def __getattr__(name: str) -> Any:
    """Names that moved to checks/framework/inputs.py (issue 15); kept for this round's branches."""
    if name in _MOVED_TO_CHECKS:
        from ascend_audit.checks.framework import inputs

        return getattr(inputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
