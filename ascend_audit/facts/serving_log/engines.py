"""Which engine wrote a log (vLLM, MindIE, or one not judged yet: SGLang, LMDeploy, TGI)."""

from __future__ import annotations

import re

from ascend_audit.facts.serving_log.values import Rules, group

RULES = Rules()
_rule = RULES.add

# Engine
_rule(
    "Platform plugin ascend is activated",
    r"Platform plugin ascend is activated",
    "ascend_platform",
    "engine_inits",
)
_rule(
    "server version",
    r"vLLM API server version ([\w.+\-]+)",
    "vllm_version",
    "engine_inits",
    group(),
)
# MindIE
_rule("Daemon start success", r"Daemon start success", "mindie_daemon_started", "mindie")
_rule("mindieservice_daemon", r"mindieservice_daemon", "mindie_daemon", "mindie")
_rule("MindIE", r"MindIE[-_ ]?(?:LLM|Service|Server)?", "mindie_line", "mindie", group(0))

ENGINE_RE = re.compile(r"Initializing an? (?:(V\d) )?LLM engine \(v([^)]+)\)")
ENGINES = (
    ("sglang", ("sglang", "SGLang")),
    ("lmdeploy", ("lmdeploy", "LMDeploy")),
    ("tgi", ("text_generation_launcher", "text-generation-launcher", "text_generation_server")),
    (
        "mindie",
        # names, and the daemon's own line grammar: "[llm] [INFO] …", "[38] [41] [server] [ERROR] …"
        (
            "mindie_llm",
            "mindie-service",
            "mindie_service",
            "mindieservice",
            "MindIE",
            "mindie server",
            "atb_llm",
            "LLMRuntime",
            "[llm] [",
            "] [server] [",
        ),
    ),
    (
        "vllm",
        ("vLLM", "vllm", "Platform plugin ascend", "non-default args", "LLM engine", "EngineCore"),
    ),
)


def engine_kind(votes: dict[str, int]) -> str | None:
    """The engine the votes name; a named other engine wins over vLLM mentions."""
    if not votes:
        return None
    vllm = votes.get("vllm", 0)
    for name, _ in ENGINES:
        n = votes.get(name, 0)
        if name != "vllm" and n >= 1 and (name == "mindie" or n >= vllm / 4):
            return name
    return "vllm" if "vllm" in votes else None
