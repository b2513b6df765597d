"""Streaming scanner for vLLM / vllm-ascend / MindIE serving logs: what took effect at startup,
how far the service got, and how it died."""

from __future__ import annotations

from ascend_audit.facts.serving_log.filescan import read_text_lines, scan_serving_log_file
from ascend_audit.facts.serving_log.graph import proves_graph
from ascend_audit.facts.serving_log.model import MAX_LINE_CHARS, STAGES, LogHit, ServingLogFacts
from ascend_audit.facts.serving_log.scan import scan_serving_log

__all__ = [
    "MAX_LINE_CHARS",
    "STAGES",
    "LogHit",
    "ServingLogFacts",
    "proves_graph",
    "read_text_lines",
    "scan_serving_log",
    "scan_serving_log_file",
]
