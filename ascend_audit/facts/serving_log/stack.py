"""The software stack from a log or a pasted collect_env: faults, harmless warnings, versions."""

from __future__ import annotations

import re

from ascend_audit.facts.serving_log.values import Rules, group

RULES = Rules()
_rule = RULES.add

# Stack / versions
_rule(
    "Failed to load the backend extension",
    r"Failed to load the backend extension: (\w+)",
    "backend_extension_failed",
    "stack_errors",
    group(),
)
_rule(
    "cannot open shared object file",
    r"(lib(?:hccl|ascendcl|ascend_hal|atb|tbe_adapter|torch_npu|opapi|runtime)\S*?\.so)\S*"
    r": cannot open shared object file",
    "cann_lib_missing",
    "stack_errors",
    group(),
)
_rule(  # vllm._C is vLLM's CUDA extension: vllm-ascend never loads it, its import error is harmless
    "undefined symbol",
    r"^(?![^\n]*Failed to import from vllm\._C )[^\n]*?undefined symbol: (\S+)",
    "undefined_symbol",
    "stack_errors",
    group(),
)
_rule(
    "Two accelerators",
    r"Two accelerators cannot be used at the same time in PyTorch: npu and (\w+)",
    "two_accelerators",
    "stack_errors",
    group(),
)
_rule(
    "does not match the installed version's device type",
    r"Current device type: (.*?) does not match the installed version's device type: ([\w.-]+)",
    "device_type_mismatch",
    "stack_errors",
    group(2),
)
_rule(
    "of bin package does not match",
    r"the socversion (\S+) of bin package does not match the current device socverison (\S+)",
    "soc_version_mismatch",
    "stack_errors",
    group(1),
)
_rule(
    "AclrtGetDeviceInfo failed",
    r"AclrtGetDeviceInfo failed to get total global memory",
    "driver_too_old",
    "stack_errors",
)
_rule(
    "driver version is too old",
    r"driver version is too old or does not match CANN",
    "driver_too_old",
    "stack_errors",
)
_rule(
    "version is too low",
    r"maybe (your hdk|you cann) version is too low",
    "version_too_low",
    "stack_errors",
    lambda m: "hdk" if "hdk" in m.group(1) else "cann",
)
_rule(
    "Failed to infer device type",
    r"Failed to infer device type",
    "device_type_unknown",
    "stack_errors",
)
_rule("InvalidVersion", r"InvalidVersion", "invalid_version", "stack_errors")
_rule(
    "source set_env.sh", r"Please run 'source set_env\.sh'", "cann_env_not_sourced", "stack_errors"
)
# Stack: harmless warnings and faults
_rule(
    "vllm_ascend_C",
    r"vllm_ascend_C[^\n]{0,300}?(GLIBC_[\d.]+|GLIBCXX_[\d.]+)? not found|"
    r"(?:Failed to import|cannot import)[^\n]{0,80}vllm_ascend[._]C\b[^\n]{0,200}",
    "custom_ops_disabled",
    "stack_errors",
    group(0),
)
_rule(
    "custom ops will be disabled",
    r"custom ops? will be disabled",
    "custom_ops_disabled",
    "stack_errors",
    group(0),
)
_rule(
    "Failed to import from vllm._C",
    r"Failed to import from vllm\._C",
    "vllm_c_missing_harmless",
    "graph_notes",
)
# Resources that kill a start
_rule(
    "/dev/shm",
    r"(?:memory available in /dev/shm|/dev/shm[^\n]{0,80}(?:too small|insufficient|No space))",
    "dev_shm_too_small",
    "stack_errors",
    group(0),
)

# One grammar for a package and its version as people paste them: collect_env's `[pip3] torch==X`
# and `[conda] torch  X  pypi_0  pypi`, `pip freeze` (`torch==X`), `pip list` columns
# (`torch_npu    2.7.1rc1`), and the hand-written `torch-npu: 2.8.0` / `CANN: 8.1.rc1` lines of
# bug reports' "Your current environment". Anchored at the line start, so prose never matches.
_PKG = (
    r"^(?:\[(?:pip3?|conda)\]\s+)?(?:{name})(?:==|\s*:\s*|\s*=\s*|\s{{2,}})"
    r"v?(\d[\w.+\-]*)(?:\s+\S+){{0,3}}\s*$"
)
_PACKAGES = (
    ("torch", "torch", "torch"),
    ("torch", r"torch[-_]npu", "torch_npu"),
    ("vllm", "vllm", "vllm"),
    ("vllm", r"vllm[-_]ascend", "vllm_ascend"),
    ("mindie", r"mindie[-_]?llm|mindie", "mindie"),
    ("CANN", r"CANN(?: version)?", "cann"),
)

VERSION_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), name)
    for t, p, name in (
        ("PyTorch version", r"^PyTorch version\s*:\s*(\S+)", "torch"),
        *((t, _PKG.format(name=n), name) for t, n, name in _PACKAGES),
        ("vLLM Version", r"^vLLM Version\s*:\s*(\S+)", "vllm"),
        ("vLLM Ascend Version", r"^vLLM Ascend Version\s*:\s*(\S+)", "vllm_ascend"),
        ("API server version", r"vLLM API server version (\S+)", "vllm"),
        ("torch_npu_version", r"'torch_npu_version': '([^']+)'", "torch_npu"),
        ("npu-smi", r"npu-smi (\d\S*)\s+Version:", "driver"),
        ("/usr/local/Ascend/cann-", r"/usr/local/Ascend/cann-(\d[\w.\-]*?)/", "cann"),
    )
]
