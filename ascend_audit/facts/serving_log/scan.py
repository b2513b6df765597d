"""The line scanner: every signature over each line read, frozen into ServingLogFacts."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ascend_audit.facts.serving_log import engines, graph, stack, weights_kv
from ascend_audit.facts.serving_log.engines import ENGINE_RE
from ascend_audit.facts.serving_log.graph import CUDAGRAPH_RE, LEVEL_RE, cudagraph_name
from ascend_audit.facts.serving_log.lifecycle import Life
from ascend_audit.facts.serving_log.model import (
    CATEGORIES,
    HITS_PER_SIGNAL,
    MAX_LINE_CHARS,
    MAX_PROBLEMS,
    STAGES,
    LogHit,
    Scalar,
    ServingLogFacts,
)
from ascend_audit.facts.serving_log.values import as_int, as_num, excerpt, literal
from ascend_audit.facts.serving_log.weights_kv import KV_RE, USAGE_RE

# Per category the rules keep their order: the first graph_fallbacks match of a line wins.
RULES = (*graph.RULES, *weights_kv.RULES, *stack.RULES, *engines.RULES)


class Scan:
    """Mutable accumulator for one scan; frozen into ServingLogFacts at the end."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.cats: dict[str, list[LogHit]] = {c: [] for c in CATEGORIES}
        self.kept: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        self.values: dict[str, Scalar] = {}
        self.problems: list[str] = []
        self.engine: str | None = None
        self.usage: LogHit | None = None
        self.life = Life(self)
        self.launch_args: tuple[int, str] | None = None

    def problem(self, msg: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(msg[:300])

    def hit(self, signal: str, category: str, value: Scalar, lineno: int, text: str) -> None:
        self.counts[signal] = self.counts.get(signal, 0) + 1
        h = LogHit(signal, value, self.source, lineno, text)
        bucket = self.cats[category]
        n = self.kept.get(signal, 0)
        if n < HITS_PER_SIGNAL:
            bucket.append(h)
            self.kept[signal] = n + 1
        else:
            # Replace this signal's newest kept hit so `last()` stays true.
            for i in range(len(bucket) - 1, -1, -1):
                if bucket[i].signal == signal:
                    bucket[i] = h
                    break
        self.values[signal] = value

    def amend(self, category: str, old: LogHit, new: LogHit) -> None:
        """Replace a kept hit whose value a later line completed."""
        bucket = self.cats[category]
        for i in range(len(bucket) - 1, -1, -1):
            if bucket[i] == old:
                bucket[i] = new
                self.values[new.signal] = new.value
                return

    def config_line(self, line: str, lineno: int, from_engine: bool) -> None:
        for m in KV_RE.finditer(line):
            key, value = m.group(1), literal(m.group(2))
            if key == "max_seq_len":
                key = "max_model_len"
            self.hit(f"config_{key}", "config", value, lineno, excerpt(line, m.start(1), m.end()))
        graph = CUDAGRAPH_RE.search(line)
        if graph:
            mode = cudagraph_name(graph.group(1))
            sig = "config_cudagraph_mode" if from_engine else "args_cudagraph_mode"
            self.hit(sig, "config", mode, lineno, excerpt(line, graph.start(), graph.end()))
            if mode == "NONE" and from_engine:
                self.hit(
                    "engine_cudagraph_none",
                    "eager",
                    mode,
                    lineno,
                    excerpt(line, graph.start(), graph.end()),
                )
        lv = LEVEL_RE.search(line)
        if lv:
            level = literal(lv.group(1))
            if isinstance(level, str) and level.startswith("<"):  # <CompilationMode.X: 3>
                level = as_int(level.rstrip(">").rsplit(":", 1)[-1].strip())
            if isinstance(level, str):
                level = {"NONE": 0, "VLLM_COMPILE": 3}.get(level.rsplit(".", 1)[-1])
            self.hit(
                "config_compilation_level",
                "config",
                level,
                lineno,
                excerpt(line, lv.start(), lv.end()),
            )
        ee = re.search(r"enforce_eager['\"]?\s*[=:]\s*True", line)
        if ee:
            self.hit(
                "engine_enforce_eager", "eager", True, lineno, excerpt(line, ee.start(), ee.end())
            )

    def line(self, lineno: int, line: str) -> None:
        self.life.line(lineno, line)
        if "LLM engine" in line:
            m = ENGINE_RE.search(line)
            if m:
                kind = m.group(1) or "V0"
                self.engine = kind
                self.values["vllm_version"] = m.group(2)
                self.hit(
                    "engine_init", "engine_inits", kind, lineno, excerpt(line, m.start(), m.end())
                )
                if "with config:" in line:
                    self.config_line(line, lineno, from_engine=True)
        elif "args: Namespace(" in line or "non-default args:" in line:
            self.config_line(line, lineno, from_engine=False)
            if "non-default args:" in line:
                self.launch_args = (lineno, line[line.index("non-default args:") :])
        if "KV cache usage" in line:
            m = USAGE_RE.search(line)
            if m:
                pct = as_num(m.group(1))
                self.counts["kv_usage_pct"] = self.counts.get("kv_usage_pct", 0) + 1
                if pct is not None and (self.usage is None or pct > (self.usage.value or 0)):  # type: ignore[operator]
                    self.usage = LogHit(
                        "kv_usage_pct", pct, self.source, lineno, excerpt(line, m.start(), m.end())
                    )
        fallback_seen = False
        said: set[str] = set()
        for trigger, rx, signal, category, conv in RULES:
            if trigger in line:
                if (fallback_seen and category == "graph_fallbacks") or signal in said:
                    continue  # one downgrade line, one fallback hit; one hit a signal a line
                m = rx.search(line)
                if m:
                    said.add(signal)
                    fallback_seen = fallback_seen or category == "graph_fallbacks"
                    self.hit(signal, category, conv(m), lineno, excerpt(line, m.start(), m.end()))
                    if signal == "max_concurrency":
                        self.values["max_concurrency_tokens"] = as_int(m.group(1))
                    elif signal == "graph_capture_finished":
                        self.values["graph_capture_gib"] = as_num(m.group(2))
                    elif signal == "npu_blocks":
                        self.values["cpu_blocks"] = as_int(m.group(3))
                    elif signal == "model_loading":
                        self.values["weights_gb"] = as_num(m.group(1))
                        self.values["weights_load_seconds"] = as_num(m.group(2))

    def graph_mode(self) -> str:
        return graph.graph_mode(self.cats)

    def freeze(self, lines_read: int, long_lines: int) -> ServingLogFacts:
        if self.usage is not None:
            self.cats["kv"].append(self.usage)
        v = self.values
        engine = self.engine
        if engine is None and (self.cats["mindie"]):
            engine = "mindie"
        if long_lines:
            self.problem(f"{long_lines} lines longer than {MAX_LINE_CHARS} characters were cut")
        for sig, n in self.counts.items():
            if n > HITS_PER_SIGNAL:
                self.problem(f"{sig}: {n} matching lines, {HITS_PER_SIGNAL} kept (first and last)")
        cudagraph = v.get("config_cudagraph_mode")
        level = v.get("config_compilation_level")

        def f(key: str) -> float | None:
            x = v.get(key)
            return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None

        def i(key: str) -> int | None:
            x = v.get(key)
            if isinstance(x, bool):
                return None
            if isinstance(x, float) and x.is_integer():
                return int(x)
            return x if isinstance(x, int) else None

        def s(key: str) -> str | None:
            x = v.get(key)
            return x if isinstance(x, str) else None

        ee = v.get("config_enforce_eager")
        gmu = f("config_gpu_memory_utilization")
        block = i("config_block_size")
        forced = i("block_size_forced") or i("block_size_forced_128")
        if forced and self.counts.get("kernel_block_size_mismatch", 0) == 0:
            block = forced  # the engine overrode the asked-for block size
        life = self.life
        life.finish()
        died = life.dead()
        cause = life.cause if died and life.death is not None else None
        if cause is not None and cause.lineno == life.death.lineno:  # type: ignore[union-attr]
            cause = None  # the death line says why itself
        if cause is not None and life.op_failure is None:
            life.failed_operator(cause.lineno, cause.text)  # a cause before the death may state it
        load_s = f("weights_load_seconds")
        if load_s is None and self.counts.get("weights_progress"):
            load_s = max(
                (
                    float(h.value)
                    for h in self.cats["weights"]
                    if h.signal == "weights_progress" and isinstance(h.value, (int, float))
                ),
                default=None,
            )
        by_category: dict[str, Any] = {
            c: tuple(sorted(self.cats[c], key=lambda h: h.lineno)) for c in CATEGORIES
        }
        return ServingLogFacts(
            source=self.source,
            lines_read=lines_read,
            long_lines=long_lines,
            engine=engine,
            vllm_version=s("vllm_version"),
            graph_mode=self.graph_mode(),
            enforce_eager=ee if isinstance(ee, bool) else None,
            cudagraph_mode=cudagraph if isinstance(cudagraph, str) else None,
            requested_cudagraph_mode=s("args_cudagraph_mode"),
            compilation_level=level if isinstance(level, int) else None,
            graph_capture_seconds=f("graph_capture_finished"),
            graph_capture_gib=f("graph_capture_gib"),
            npu_blocks=i("npu_blocks"),
            cpu_blocks=i("cpu_blocks"),
            num_gpu_blocks_override=i("num_gpu_blocks_override"),
            kv_cache_tokens=i("kv_cache_tokens"),
            max_concurrency=f("max_concurrency"),
            max_concurrency_tokens=i("max_concurrency_tokens"),
            available_kv_gib=f("available_kv_gib"),
            kv_usage_max_pct=self.usage.value if self.usage else None,  # type: ignore[arg-type]
            block_size=block,
            max_model_len=i("config_max_model_len"),
            gpu_memory_utilization=gmu,
            alloc_conf=s("alloc_conf"),
            weights_load_seconds=load_s,
            weights_gb=f("weights_gb"),
            checkpoint_format=s("checkpoint_format"),
            load_format=s("config_load_format"),
            model=s("config_model"),
            model_path=s("model_path"),
            cpu_offload_gb=f("config_cpu_offload_gb"),
            tensor_parallel_size=i("config_tensor_parallel_size"),
            quantization=s("config_quantization"),
            engine_kind=life.engine_kind(),
            stage=STAGES[life.stage_idx] if life.stage_idx >= 0 else None,
            died=died,
            death=life.death if died else None,
            final_exception=str(life.exc.value) if died and life.exc else None,
            exception_where=life.exc_where if died and life.exc else None,
            first_cause=cause,
            first_cause_where=life.cause_where if cause is not None else None,
            failed_operators=tuple(life.operators) if died or life.codes else (),
            operator_failure=life.op_failure if died else None,
            serving_lines=life.serving,
            models_404=life.models_404,
            shut_down=life.shutdown,
            collect_env=life.collect_env,
            launch_args=self.launch_args,
            signal_counts=tuple(sorted(self.counts.items())),
            problems=tuple(self.problems),
            **by_category,
        )


def scan_serving_log(lines: Iterable[tuple[int, str]], source: str) -> ServingLogFacts:
    """Scan (lineno, text) pairs of a serving log in one pass and bounded memory."""
    scan = Scan(str(source))
    lines_read = 0
    long_lines = 0
    lineno = 0
    try:
        for item in lines:
            try:
                lineno, text = item
                lineno = int(lineno)
            except (TypeError, ValueError):
                scan.problem(f"input item {lines_read + 1} is not a (lineno, text) pair")
                lines_read += 1
                continue
            lines_read += 1
            if isinstance(text, (bytes, bytearray)):
                text = bytes(text[: MAX_LINE_CHARS * 4]).decode("utf-8", errors="replace")
            elif not isinstance(text, str):
                scan.problem(f"line {lineno}: not text ({type(text).__name__})")
                continue
            if len(text) > MAX_LINE_CHARS:
                long_lines += 1
                text = text[:MAX_LINE_CHARS]
            if "\x00" in text:
                text = text.replace("\x00", "")
            scan.line(lineno, text.rstrip("\r\n"))
    except Exception as exc:  # a failing iterator (I/O error) must not crash the audit
        scan.problem(f"reading stopped after line {lineno}: {type(exc).__name__}: {exc}")
    if lines_read == 0:
        scan.problem("log is empty")
    return scan.freeze(lines_read, long_lines)
