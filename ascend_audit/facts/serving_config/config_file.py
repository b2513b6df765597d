"""A config file of unknown kind: MindIE config.json, else vLLM YAML."""

from __future__ import annotations

from collections.abc import Mapping

from ascend_audit.facts.serving_config.mindie import parse_mindie_config
from ascend_audit.facts.serving_config.model import ServingConfig
from ascend_audit.facts.serving_config.vllm_yaml import parse_vllm_yaml


def parse_config_file(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """Parse a config file of unknown kind: MindIE config.json, else vLLM YAML (JSON is YAML)."""
    if not isinstance(text, str):
        return ServingConfig(source=str(source), problems=("not text",))
    head = text[:65536]
    if '"BackendConfig"' in head or '"ServerConfig"' in head:
        return parse_mindie_config(text, source, env)
    return parse_vllm_yaml(text, source, env)
