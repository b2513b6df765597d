# ruff: noqa: E501  (the synthetic log lines are data, as long as real ones)
"""Serving-log scan speed: the one-pass chunked scanner beside a plain Python line loop.

    python benchmarks/bench_serving_log.py [--mb 200] [--keep PATH]

Writes a synthetic vllm-ascend serving log (start-up, hours of access / metrics / request lines,
then a worker death), then times, in the same run and on the same file:
  * `plain loop`: `for line in open(path, "rb")` with one `in` test a line (the floor of any
    line-by-line Python scanner),
  * `scan_serving_log_file`: the audit's scanner (lifecycle, error codes, fallbacks, KV, graph),
and checks the scanner found the death. Prints MB/s and the peak RSS growth.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time

HEAD = """INFO 05-27 11:40:38 [__init__.py:238] Platform plugin ascend is activated
(APIServer pid=100) INFO 05-27 11:40:43 [api_server.py:1839] vLLM API server version 0.11.0
(APIServer pid=100) INFO 05-27 11:40:43 [utils.py:233] non-default args: {'model': '/models/Qwen3-8B', 'tensor_parallel_size': 2, 'max_model_len': 32768, 'additional_config': {'ascend_compilation_config': {'enable_npugraph_ex': True}}}
(EngineCore pid=200) INFO 05-27 11:40:44 [core.py:109] Initializing a V1 LLM engine (v0.11.0) with config: model='/models/Qwen3-8B', max_seq_len=32768, load_format=auto, tensor_parallel_size=2, enforce_eager=False, compilation_config={'mode': <CompilationMode.VLLM_COMPILE: 3>, 'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>}
(EngineCore pid=200) INFO 05-27 11:40:51 [default_loader.py:384] Loading weights took 4.61 seconds
(EngineCore pid=200) INFO 05-27 11:40:51 [model_runner_v1.py:3187] Loading model weights took 7.6512 GB
(EngineCore pid=200) INFO 05-27 11:41:02 [kv_cache_utils.py:1708] GPU KV cache size: 627,968 tokens
(EngineCore pid=200) INFO 05-27 11:41:12 [gpu_model_runner.py:6133] Graph capturing finished in 14 secs, took 0.46 GiB
(APIServer pid=100) INFO 05-27 11:41:20 [launcher.py:44] Route: /v1/chat/completions, Methods: POST
(APIServer pid=100) INFO:     Application startup complete.
"""
TAIL = """(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671] WorkerProc hit an exception.
(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671] Traceback (most recent call last):
(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671]   File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 2709, in execute_model
(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671]     out = self.model(**inputs)
(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671] RuntimeError: NPU function error: call failed, error code is 507015
(Worker_TP0 pid=300) ERROR 05-28 02:00:00 [multiproc_executor.py:671] [ERROR] 2026-05-28-02:00:00 (PID:300, Device:0, RankID:-1) ERR00100 PTA call acl api failed
"""
WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "you",
    "that",
    "it",
    "he",
    "was",
    "for",
    "on",
    "are",
    "as",
    "with",
    "his",
    "they",
    "at",
    "be",
    "this",
    "from",
    "have",
]


def write_log(path: str, mb: int, seed: int = 1) -> int:
    rnd = random.Random(seed)
    target = mb * 1_000_000
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(HEAD)
        size = len(HEAD)
        n = 0
        while size < target:
            n += 1
            r = rnd.random()
            if r < 0.55:
                line = (
                    f"(APIServer pid=100) INFO:     10.0.{n % 250}.{n % 7}:{40000 + n % 20000} - "
                    f'"POST /v1/chat/completions HTTP/1.1" 200 OK\n'
                )
            elif r < 0.93:
                prompt = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 40)))
                line = (
                    f"(APIServer pid=100) INFO 05-27 12:{n % 60:02d}:{n % 60:02d} [logger.py:41] "
                    f"Received request chatcmpl-{n:x}: prompt: '{prompt}', params: "
                    f"SamplingParams(n=1, temperature=0.7, max_tokens=512)\n"
                )
            elif r < 0.99:
                line = (
                    f"(APIServer pid=100) INFO 05-27 12:{n % 60:02d}:00 [loggers.py:123] Engine 000: "
                    f"Avg prompt throughput: {rnd.random() * 900:.1f} tokens/s, Avg generation "
                    f"throughput: {rnd.random() * 300:.1f} tokens/s, Running: {n % 17} reqs, "
                    f"Waiting: 0 reqs, GPU KV cache usage: {rnd.random() * 60:.1f}%, Prefix "
                    f"cache hit rate: {rnd.random() * 40:.1f}%\n"
                )
            else:
                line = (
                    '(APIServer pid=100) INFO:     10.0.0.1:5000 - "GET /metrics HTTP/1.1" 200 OK\n'
                )
            fh.write(line)
            size += len(line)
        fh.write(TAIL)
        size += len(TAIL)
    return size


def plain_loop(path: str) -> int:
    n = 0
    with open(path, "rb") as fh:
        for line in fh:
            if b"Traceback" in line:
                n += 1
    return n


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="size of the synthetic log (MB)")
    ap.add_argument("--keep", help="write the log here and keep it")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    ap.add_argument(
        "--line-scanner",
        action="store_true",
        help="also time every line through the full scanner (the pre-chunking way), once",
    )
    args = ap.parse_args(argv)
    from ascend_audit.facts.serving_log import scan_serving_log_file

    path = args.keep or tempfile.mktemp(suffix=".log")
    size = write_log(path, args.mb)
    try:
        with open(path, "rb") as fh:  # warm the page cache for both contenders alike
            while fh.read(1 << 24):
                pass
        base = rss_mb()
        best_plain = best_scan = cpu_plain = cpu_scan = float("inf")
        facts = None
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            plain_loop(path)
            best_plain = min(best_plain, time.perf_counter() - t)
            cpu_plain = min(cpu_plain, time.process_time() - c)
            t, c = time.perf_counter(), time.process_time()
            facts = scan_serving_log_file(path)
            best_scan = min(best_scan, time.perf_counter() - t)
            cpu_scan = min(cpu_scan, time.process_time() - c)
        grew = rss_mb() - base
        mbytes = size / 1e6
        line_s = None
        if args.line_scanner:
            from ascend_audit.facts.serving_log import read_text_lines, scan_serving_log

            t = time.perf_counter()
            scan_serving_log(read_text_lines(path), path)
            line_s = time.perf_counter() - t
        load = os.getloadavg()
        print(f"file: {mbytes:.0f} MB, {facts.lines_read:,} lines; load average {load[0]:.2f}")
        print(
            f"plain Python line loop : {mbytes / best_plain:7.0f} MB/s wall ({best_plain:.2f} s), "
            f"{mbytes / cpu_plain:7.0f} MB per CPU-second"
        )
        print(
            f"scan_serving_log_file  : {mbytes / best_scan:7.0f} MB/s wall ({best_scan:.2f} s), "
            f"{mbytes / cpu_scan:7.0f} MB per CPU-second"
        )
        if line_s is not None:
            print(f"every line, full rules : {mbytes / line_s:7.0f} MB/s ({line_s:.2f} s)")
        print(f"peak RSS growth        : {grew:.0f} MiB")
        print(
            f"found: stage {facts.stage}, died {facts.died} ({facts.final_exception}), "
            f"codes {[h.value for h in facts.error_codes]}, KV usage max {facts.kv_usage_max_pct}%"
        )
        if not facts.died or facts.stage != "serving":
            print("WRONG: the scanner missed the lifecycle", file=sys.stderr)
            return 1
    finally:
        if not args.keep:
            os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
