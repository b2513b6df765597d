"""A standalone JSON for `--additional-config` or `--compilation-config`."""

from __future__ import annotations

from ascend_audit.facts.serving_config.builder import Builder
from ascend_audit.facts.serving_config.model import ServingConfig


def parse_option_json(text: str, source: str, kind: str = "additional_config") -> ServingConfig:
    """Parse a standalone JSON for `--additional-config` or `--compilation-config`."""
    b = Builder(str(source))
    if kind not in ("additional_config", "compilation_config"):
        b.problems.append(f"unknown option kind {kind!r}")
        return b.build("vllm", None)
    if not isinstance(text, str) or not text.strip():
        b.problems.append(f"{source}: empty")
        return b.build("vllm", None)
    b.set(kind, text, 1, text.strip().splitlines()[0][:500] if text.strip() else "")
    return b.build("vllm", None)
