"""Results of `vllm bench serve --save-result` (one JSON object, or JSON lines when appended)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BenchResult", "parse_bench_result"]

_MAX_TEXT = 256 * 1024 * 1024
_METRIC_RE = re.compile(r"^(mean|median|std|p\d{1,2}(?:\.\d{1,3})?)_(ttft|tpot|itl|e2el)_ms$")
_MAX_ERRORS_KEPT = 5


@dataclass(frozen=True)
class BenchResult:
    """Throughput, latency percentiles and success counts of one benchmark run."""

    source: str
    date: str | None = None
    backend: str | None = None
    model_id: str | None = None
    tokenizer_id: str | None = None
    num_prompts: int | None = None
    completed: int | None = None
    failed: int | None = None
    duration_s: float | None = None
    request_rate: float | None = None  # None when the run used an infinite rate
    max_concurrency: int | None = None
    total_input_tokens: int | None = None
    total_output_tokens: int | None = None
    request_throughput: float | None = None
    output_throughput: float | None = None
    total_token_throughput: float | None = None
    request_goodput: float | None = None
    mean_ttft_ms: float | None = None
    median_ttft_ms: float | None = None
    p99_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    p99_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    p99_itl_ms: float | None = None
    mean_e2el_ms: float | None = None
    p99_e2el_ms: float | None = None
    latency_ms: tuple[tuple[str, float], ...] = ()  # every "<stat>_<metric>_ms" key, sorted
    error_count: int = 0
    errors: tuple[str, ...] = ()  # first few non-empty request errors
    records: int = 1  # JSON-lines files hold one record per run; the last one is reported
    problems: tuple[str, ...] = ()

    @property
    def success_rate(self) -> float | None:
        """completed / num_prompts, when both are known."""
        if self.completed is None or not self.num_prompts:
            return None
        return self.completed / self.num_prompts

    def latency(self, stat: str, metric: str) -> float | None:
        """A latency value by stat (`mean`, `median`, `std`, `p99`, `p99.9`...) and metric."""
        return dict(self.latency_ms).get(f"{stat}_{metric}_ms")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "latency_ms":
                out[name] = dict(value)
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        out["success_rate"] = self.success_rate
        return out


def _num(v: Any, key: str, problems: list[str]) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str):
            try:
                f = float(v)
            except ValueError:
                problems.append(f"{key}: not a number ({v[:40]!r})")
                return None
            return _num(f, key, problems)
        problems.append(f"{key}: not a number ({type(v).__name__})")
        return None
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        if key != "request_rate":
            problems.append(f"{key}: {f} (no completed requests?)")
        return None
    return f


def _int(v: Any, key: str, problems: list[str]) -> int | None:
    f = _num(v, key, problems)
    if f is None:
        return None
    if not f.is_integer():
        problems.append(f"{key}: expected an integer, got {f}")
        return None
    return int(f)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _load(text: str) -> tuple[Any, int, list[str]]:
    """The last JSON record of a file: a single object or JSON lines."""
    problems: list[str] = []
    try:
        return json.loads(text), 1, problems
    except (ValueError, RecursionError) as exc:
        first_error = exc
    records: list[Any] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):
            problems.append(f"line {n}: not JSON")
            if len(problems) > 20:
                break
    if records and len(problems) == 0:
        return records[-1], len(records), problems
    return None, 0, [f"invalid JSON: {first_error}"]


def parse_bench_result(text: str, source: str) -> BenchResult:
    """Parse the JSON that `vllm bench serve --save-result` writes; never raises."""
    src = str(source)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        return BenchResult(source=src, problems=("empty benchmark result",))
    if len(text) > _MAX_TEXT:
        return BenchResult(source=src, problems=("benchmark result too large",))
    data, records, problems = _load(text)
    if data is None:
        return BenchResult(source=src, records=0, problems=tuple(problems))
    if not isinstance(data, dict):
        return BenchResult(
            source=src,
            records=records,
            problems=(f"expected a JSON object, got {type(data).__name__}",),
        )
    if records > 1:
        problems.append(f"{records} appended results; the last one is reported")

    latency: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(key, str) and _METRIC_RE.match(key):
            f = _num(value, key, problems)
            if f is not None:
                latency[key] = f

    errors_raw = data.get("errors")
    errors: list[str] = []
    error_count = 0
    if isinstance(errors_raw, list):
        for e in errors_raw:
            if e:
                error_count += 1
                if len(errors) < _MAX_ERRORS_KEPT:
                    errors.append(str(e)[:500])

    num_prompts = _int(data.get("num_prompts"), "num_prompts", problems)
    completed = _int(data.get("completed"), "completed", problems)
    failed = _int(data.get("failed"), "failed", problems)
    if failed is None and num_prompts is not None and completed is not None:
        failed = max(num_prompts - completed, 0)
    if completed is None:
        problems.append("no 'completed' count: not a vllm bench serve result?")
    elif num_prompts is not None and completed > num_prompts:
        problems.append(f"completed {completed} exceeds num_prompts {num_prompts}")

    rate = data.get("request_rate")
    if isinstance(rate, str) and rate.lower() in ("inf", "infinity"):
        rate = None
    max_conc = data.get("max_concurrency")

    return BenchResult(
        source=src,
        date=_str(data.get("date")),
        backend=_str(data.get("backend")) or _str(data.get("endpoint_type")),
        model_id=_str(data.get("model_id")),
        tokenizer_id=_str(data.get("tokenizer_id")),
        num_prompts=num_prompts,
        completed=completed,
        failed=failed,
        duration_s=_num(data.get("duration"), "duration", problems),
        request_rate=_num(rate, "request_rate", problems),
        max_concurrency=_int(max_conc, "max_concurrency", problems),
        total_input_tokens=_int(data.get("total_input_tokens"), "total_input_tokens", problems),
        total_output_tokens=_int(data.get("total_output_tokens"), "total_output_tokens", problems),
        request_throughput=_num(data.get("request_throughput"), "request_throughput", problems),
        output_throughput=_num(data.get("output_throughput"), "output_throughput", problems),
        total_token_throughput=_num(
            data.get("total_token_throughput"), "total_token_throughput", problems
        ),
        request_goodput=_num(data.get("request_goodput"), "request_goodput", problems),
        mean_ttft_ms=latency.get("mean_ttft_ms"),
        median_ttft_ms=latency.get("median_ttft_ms"),
        p99_ttft_ms=latency.get("p99_ttft_ms"),
        mean_tpot_ms=latency.get("mean_tpot_ms"),
        median_tpot_ms=latency.get("median_tpot_ms"),
        p99_tpot_ms=latency.get("p99_tpot_ms"),
        mean_itl_ms=latency.get("mean_itl_ms"),
        p99_itl_ms=latency.get("p99_itl_ms"),
        mean_e2el_ms=latency.get("mean_e2el_ms"),
        p99_e2el_ms=latency.get("p99_e2el_ms"),
        latency_ms=tuple(sorted(latency.items())),
        error_count=error_count,
        errors=tuple(errors),
        records=records,
        problems=tuple(p[:300] for p in problems[:100]),
    )
