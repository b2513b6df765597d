"""Serving configuration: vLLM argv, vLLM YAML, JSON option files, and MindIE config.json."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ascend_audit.redact import redact_text

__all__ = [
    "LEGACY_ADDITIONAL_KEYS",
    "RELEVANT_ENV",
    "ConfigItem",
    "ServingConfig",
    "cudagraph_name",
    "is_launch_script",
    "is_vllm_argv",
    "parse_config_file",
    "parse_launch_script",
    "parse_mindie_config",
    "parse_option_json",
    "parse_vllm_args_dict",
    "parse_vllm_argv",
    "parse_vllm_yaml",
]

LEGACY_ADDITIONAL_KEYS = ("torchair_graph_config", "ascend_scheduler_config", "enable_graph_mode")
RELEVANT_ENV = (
    "ASCEND_LAUNCH_BLOCKING",
    "TASK_QUEUE_ENABLE",
    "PYTORCH_NPU_ALLOC_CONF",
    "HCCL_OP_EXPANSION_MODE",
    "VLLM_USE_V1",
    "VLLM_ASCEND_ENABLE_NZ",
    "VLLM_VERSION",
    "VLLM_PLUGINS",
    "VLLM_ATTENTION_BACKEND",
    "ASCEND_RT_VISIBLE_DEVICES",
    "NPU_MEMORY_FRACTION",
    "TORCH_DEVICE_BACKEND_AUTOLOAD",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCEND_OPP_PATH",
    "MIES_CONFIG_JSON_PATH",
)
_MAX_TEXT = 16 * 1024 * 1024
_MAX_NODES = 20000
_MAX_DEPTH = 32
_SECRET_RE = re.compile(r"(api_?key|(?:^|_)token$|secret|passw(?:or)?d|credential)", re.IGNORECASE)
_REDACTED = "***"

# Flags that take no value (argparse store_true / BooleanOptionalAction).
_BOOL_FLAGS = frozenset(
    {
        "enforce_eager",
        "trust_remote_code",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "enable_expert_parallel",
        "enable_lora",
        "enable_sleep_mode",
        "enable_auto_tool_choice",
        "enable_reasoning",
        "enable_log_requests",
        "enable_log_outputs",
        "disable_log_stats",
        "disable_log_requests",
        "disable_custom_all_reduce",
        "disable_sliding_window",
        "disable_frontend_multiprocessing",
        "skip_tokenizer_init",
        "async_scheduling",
        "headless",
    }
)
_SHORT = {
    "tp": "tensor_parallel_size",
    "pp": "pipeline_parallel_size",
    "dp": "data_parallel_size",
    "q": "quantization",
    "cc": "compilation_config",
    "O": "compilation_config",
    "ac": "additional_config",
}
_JSON_FLAGS = frozenset(
    {
        "additional_config",
        "compilation_config",
        "speculative_config",
        "kv_transfer_config",
        "hf_overrides",
        "model_loader_extra_config",
    }
)
_CUDAGRAPH_INT = {0: "NONE", 1: "PIECEWISE", 2: "FULL"}
_CUDAGRAPH_PAIR = {(2, 0): "FULL_DECODE_ONLY", (2, 1): "FULL_AND_PIECEWISE"}
_MODE_NAMES = {0: "NONE", 1: "STOCK_TORCH_COMPILE", 2: "DYNAMO_TRACE_ONCE", 3: "VLLM_COMPILE"}


@dataclass(frozen=True)
class ConfigItem:
    """One configuration value and where it was read: file or argv, line or index, the text."""

    key: str
    value: Any
    source: str
    lineno: int | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "key": self.key,
            "value": self.value,
            "source": self.source,
            "lineno": self.lineno,
            "text": self.text,
        }


@dataclass(frozen=True)
class ServingConfig:
    """What a serving deployment asked for, normalised across vLLM and MindIE."""

    source: str
    engine: str | None = None  # "vllm" | "mindie"
    model: str | None = None
    model_path: str | None = None
    served_model_name: str | None = None
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    enforce_eager: bool | None = None
    cudagraph_mode: str | None = None
    compilation_mode: str | None = None
    full_cuda_graph: bool | None = None
    enable_prefix_caching: bool | None = None
    cpu_offload_gb: float | None = None
    kv_cache_memory_bytes: int | None = None
    load_format: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    data_parallel_size_local: int | None = None
    expert_parallel: bool | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    dtype: str | None = None
    speculative_config: dict[str, Any] = field(default_factory=dict, hash=False)
    quantization: str | None = None
    device: str | None = None
    config_file: str | None = None
    additional_config: dict[str, Any] = field(default_factory=dict, hash=False)
    compilation_config: dict[str, Any] = field(default_factory=dict, hash=False)
    legacy_keys: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    env: dict[str, str] = field(default_factory=dict, hash=False)
    # MindIE
    npu_device_ids: tuple[tuple[int, ...], ...] = ()
    world_size: int | None = None
    npu_mem_size: int | None = None
    cpu_mem_size: int | None = None
    max_input_token_len: int | None = None
    max_prefill_tokens: int | None = None
    max_batch_size: int | None = None
    max_prefill_batch_size: int | None = None
    backend_type: str | None = None
    model_instances: int | None = None
    items: tuple[ConfigItem, ...] = ()
    problems: tuple[str, ...] = ()

    def item(self, key: str) -> ConfigItem | None:
        """The item that set a key last (the evidence for it), or None."""
        found = None
        for it in self.items:
            if it.key == key or it.key.endswith("." + key):
                found = it
        return found

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "items":
                out[name] = [i.to_dict() for i in value]
            elif name == "npu_device_ids":
                out[name] = [list(g) for g in value]
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        return out


# --- helpers ----------------------------------------------------------------------------------


def _jsonable(obj: Any, budget: list[int], depth: int = 0) -> Any:
    """A JSON-able copy of parsed YAML/JSON, bounded in size and depth (aliases can loop)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise ValueError("structure too large or too deep")
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else str(obj)
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v, budget, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v, budget, depth + 1) for v in obj]
    return str(obj)


def _load_json_like(raw: str) -> tuple[Any, str | None]:
    """Parse a JSON (or Python-literal) option value; return (value, problem)."""
    text = raw.strip()
    if len(text) > _MAX_TEXT:
        return None, "value too large"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None, f"not valid JSON: {exc}"
    try:
        return _jsonable(value, [_MAX_NODES]), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)


def _scalar(raw: Any) -> Any:
    """Turn a command-line string into bool/int/float/None where it plainly is one."""
    if not isinstance(raw, str):
        return raw
    low = raw.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        f = float(raw)
    except ValueError:
        return raw
    return f if f == f else raw


def _as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        s = _scalar(v)
        return _as_int(s) if not isinstance(s, str) else None
    return None


def _as_float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = _scalar(v)
        return _as_float(s) if not isinstance(s, str) else None
    return None


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = _scalar(v)
        return s if isinstance(s, bool) else None
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    return None


def _as_str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    return str(v)


def cudagraph_name(value: Any) -> str | None:
    """Normalise a cudagraph_mode value (name, enum repr, int or [int, int]) to its name."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _CUDAGRAPH_INT.get(value, str(value))
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value):
        return _CUDAGRAPH_PAIR.get((value[0], value[1]), str(value))
    s = str(value).strip().strip("'\"")
    return s.rsplit(".", 1)[-1].upper() or None


def _mode_name(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return _MODE_NAMES.get(value, str(value))
    s = str(value).strip()
    if s.isdigit():
        return _MODE_NAMES.get(int(s), s)
    return s.rsplit(".", 1)[-1].upper() or None


def _norm_flag(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def _redact(key: str, value: Any) -> Any:
    return _REDACTED if _SECRET_RE.search(key) and value not in (None, True, False) else value


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    if not env:
        return {}
    try:
        return {k: str(env[k]) for k in RELEVANT_ENV if k in env}
    except Exception:
        return {}


class _Builder:
    """Collects option values with their evidence and then normalises them."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.options: dict[str, Any] = {}
        self.items: list[ConfigItem] = []
        self.problems: list[str] = []
        self.additional: dict[str, Any] = {}
        self.compilation: dict[str, Any] = {}

    def set(
        self, key: str, value: Any, lineno: int | None, text: str, source: str | None = None
    ) -> None:
        value = _redact(key, value)
        if isinstance(value, str):
            value = redact_text(value)  # a URL password or token inside any option's value
        if _SECRET_RE.search(key):
            text = re.sub(r"(\S*(?:=|\s))\S+$", r"\1" + _REDACTED, text) if text else text
        text = redact_text(text) if isinstance(text, str) else text
        if key in _JSON_FLAGS:
            value = self._json_value(key, value)
            if value is None:
                return
            if key == "additional_config" and isinstance(value, dict):
                self.additional.update(value)
                value = self.additional
            elif key == "compilation_config":
                if isinstance(value, int):  # `-O3`: a bare level
                    value = {"level": value}
                if isinstance(value, dict):
                    self.compilation.update(value)
                    value = self.compilation
        self.options[key] = value
        self.items.append(ConfigItem(key, value, source or self.source, lineno, text[:500]))

    def set_sub(self, key: str, sub: str, raw: Any, lineno: int | None, text: str) -> None:
        """`--compilation-config.cudagraph_mode=FULL`: one key of a JSON-valued option."""
        target = self.compilation if key == "compilation_config" else self.additional
        if key not in ("compilation_config", "additional_config"):
            self.options[f"{key}.{sub}"] = _scalar(raw)
            return
        value = raw
        if isinstance(raw, str):
            loaded, problem = _load_json_like(raw)
            value = loaded if problem is None else _scalar(raw)
        node = target
        parts = sub.split(".")
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = {}
                node[p] = nxt
            node = nxt
        node[parts[-1]] = value
        self.options[key] = target
        self.items.append(ConfigItem(f"{key}.{sub}", value, self.source, lineno, text[:500]))

    def _json_value(self, key: str, value: Any) -> Any:
        if isinstance(value, str):
            if key == "compilation_config" and value.strip().isdigit():
                return int(value.strip())
            loaded, problem = _load_json_like(value)
            if problem:
                self.problems.append(f"{key}: {problem}")
                return None
            value = loaded
        if value is None:
            return None
        if key in ("additional_config", "compilation_config") and not isinstance(
            value, (dict, int)
        ):
            self.problems.append(f"{key}: expected a JSON object, got {type(value).__name__}")
            return None
        return value

    def build(
        self, engine: str | None, env: Mapping[str, str] | None, **extra: Any
    ) -> ServingConfig:
        o = self.options
        comp = self.compilation
        add = self.additional
        model = _as_str(o.get("model"))
        cudagraph = cudagraph_name(comp.get("cudagraph_mode"))
        mode = comp.get("mode", comp.get("level"))
        legacy = [k for k in LEGACY_ADDITIONAL_KEYS if k in add]
        prefix = o.get("enable_prefix_caching")
        cfg = ServingConfig(
            source=self.source,
            engine=engine,
            model=model,
            model_path=model if model and model.startswith(("/", ".", "~")) else None,
            served_model_name=_as_str(o.get("served_model_name")),
            block_size=_as_int(o.get("block_size")),
            gpu_memory_utilization=_as_float(o.get("gpu_memory_utilization")),
            max_model_len=_as_int(o.get("max_model_len")),
            enforce_eager=_as_bool(o.get("enforce_eager")),
            cudagraph_mode=cudagraph,
            compilation_mode=_mode_name(mode),
            full_cuda_graph=_as_bool(comp.get("full_cuda_graph")),
            enable_prefix_caching=_as_bool(prefix),
            cpu_offload_gb=_as_float(o.get("cpu_offload_gb")),
            kv_cache_memory_bytes=_as_int(o.get("kv_cache_memory_bytes", o.get("kv_cache_memory"))),
            load_format=_as_str(o.get("load_format")),
            tensor_parallel_size=_as_int(o.get("tensor_parallel_size")),
            pipeline_parallel_size=_as_int(o.get("pipeline_parallel_size")),
            data_parallel_size=_as_int(o.get("data_parallel_size")),
            data_parallel_size_local=_as_int(o.get("data_parallel_size_local")),
            expert_parallel=_as_bool(o.get("enable_expert_parallel")),
            max_num_seqs=_as_int(o.get("max_num_seqs")),
            max_num_batched_tokens=_as_int(o.get("max_num_batched_tokens")),
            dtype=_as_str(o.get("dtype")),
            speculative_config=dict(o["speculative_config"])
            if isinstance(o.get("speculative_config"), dict)
            else {},
            quantization=_as_str(o.get("quantization")),
            device=_as_str(o.get("device")),
            config_file=_as_str(o.get("config")),
            additional_config=dict(add),
            compilation_config=dict(comp),
            legacy_keys=tuple(legacy),
            options=dict(o),
            env=_env(env),
            items=tuple(self.items),
            problems=tuple(p[:300] for p in self.problems[:100]),
        )
        return replace(cfg, **extra) if extra else cfg


_MAX_KEY_SCANS = 64
_TOP_KEY = re.compile(r"""^\s*["']?([^\s"':#][^"':]*?)["']?\s*:""")


def _top_level_keys(lines: list[str]) -> dict[str, tuple[int, str]]:
    """First line of each `key:` that starts a line, in one pass (evidence positions)."""
    found: dict[str, tuple[int, str]] = {}
    for i, line in enumerate(lines, 1):
        m = _TOP_KEY.match(line)
        if m and m.group(1) not in found:
            found[m.group(1)] = (i, line.strip()[:500])
    return found


def _find_lineno(lines: list[str], key: str) -> tuple[int | None, str]:
    """First line mentioning a key (as `key:` / `"key"`), for evidence; linear in the text."""
    pat = re.compile(r"(^|[\s\"'{,])" + re.escape(key) + r"[\"']?\s*:")
    for i, line in enumerate(lines, 1):
        if key in line and pat.search(line):
            return i, line.strip()[:500]
    return None, ""


# --- vLLM command lines -----------------------------------------------------------------------


def is_vllm_argv(argv: Sequence[str]) -> bool:
    """True when an argv looks like a vLLM server (vllm serve / the OpenAI api_server module)."""
    try:
        toks = [str(t) for t in argv]
    except TypeError:
        return False
    for i, t in enumerate(toks):
        base = t.rsplit("/", 1)[-1]
        if base == "vllm" and i + 1 < len(toks) and toks[i + 1] == "serve":
            return True
        if t.startswith("vllm.entrypoints"):
            return True
    return False


def _argv_start(toks: list[str]) -> tuple[int, str | None]:
    """Index of the first option token after the program, and the positional model if any."""
    for i, t in enumerate(toks):
        base = t.rsplit("/", 1)[-1]
        if base == "vllm" and i + 1 < len(toks) and toks[i + 1] == "serve":
            j = i + 2
            if j < len(toks) and not toks[j].startswith("-"):
                return j + 1, toks[j]
            return j, None
        if t.startswith("vllm.entrypoints"):
            return i + 1, None
    return 0, None


def parse_vllm_argv(
    argv: Sequence[str],
    source: str = "cmdline",
    env: Mapping[str, str] | None = None,
    config_text: str | None = None,
    config_source: str | None = None,
) -> ServingConfig:
    """Parse a vLLM server argv; `config_text` is the YAML that `--config` names, if read."""
    b = _Builder(str(source))
    try:
        toks = [t if isinstance(t, str) else str(t) for t in argv]
    except TypeError:
        return ServingConfig(source=str(source), env=_env(env), problems=("argv is not a list",))
    engine = "vllm" if is_vllm_argv(toks) else None
    if engine is None:
        b.problems.append("not a recognisable vLLM command line (vllm serve / vllm.entrypoints)")
    start, positional = _argv_start(toks)
    if config_text is not None:
        _apply_yaml(b, config_text, config_source or "config.yaml")
    if positional is not None:
        b.set("model", positional, start - 1, f"serve {positional}")
    i = start
    while i < len(toks):
        tok = toks[i]
        fi = i  # argv index of the flag: the evidence position
        i += 1
        if not tok.startswith("-") or tok in ("-", "--"):
            continue
        name, eq, inline = tok.partition("=")
        bare = name.lstrip("-")
        if (
            name.startswith("-O")
            and not name.startswith("--")
            and len(bare) > 1
            and bare[1:].isdigit()
        ):
            b.set("compilation_config", int(bare[1:]), fi, tok)
            continue
        head, dot, sub = bare.partition(".")
        key = _SHORT.get(head, _norm_flag(head))
        if dot and not eq and i < len(toks) and not toks[i].startswith("--"):
            b.set_sub(key, sub, toks[i], fi, f"{tok} {toks[i]}")
            i += 1
            continue
        if dot:
            b.set_sub(key, sub, inline if eq else True, fi, tok)
            continue
        if eq:
            value: Any = inline
            text = tok
        elif key.startswith("no_"):
            key, value, text = key[3:], False, tok
        elif key in _BOOL_FLAGS or key.startswith(("enable_", "disable_")) or i >= len(toks):
            value, text = True, tok
            if i < len(toks) and toks[i].lower() in ("true", "false"):
                value, text = toks[i].lower() == "true", f"{tok} {toks[i]}"
                i += 1
        elif toks[i].startswith("--") or (toks[i].startswith("-") and not _is_number(toks[i])):
            value, text = True, tok
        else:
            value, text = toks[i], f"{tok} {toks[i]}"
            i += 1
        if key == "config" and isinstance(value, str) and config_text is None:
            b.set("config", value, fi, text)
            continue
        b.set(key, value if key in _JSON_FLAGS else _scalar(value), fi, text)
    return b.build(engine, env)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# --- vLLM YAML --------------------------------------------------------------------------------


def _safe_yaml(text: str) -> tuple[Any, str | None]:
    if len(text) > _MAX_TEXT:
        return None, "file too large"
    try:
        import yaml  # lazy: only configs need it
    except ImportError:
        return None, "PyYAML is not installed"
    try:
        data = yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError and friends, with line info in the message
        return None, f"invalid YAML: {str(exc)[:200]}"
    try:
        return _jsonable(data, [_MAX_NODES]), None
    except (ValueError, RecursionError) as exc:
        return None, f"invalid YAML: {exc}"


def _apply_yaml(b: _Builder, text: str, source: str) -> None:
    if not isinstance(text, str):
        b.problems.append(f"{source}: not text")
        return
    data, problem = _safe_yaml(text)
    if problem:
        b.problems.append(f"{source}: {problem}")
        return
    if data is None:
        b.problems.append(f"{source}: empty config")
        return
    if not isinstance(data, dict):
        b.problems.append(f"{source}: expected a mapping of options, got {type(data).__name__}")
        return
    lines = text.splitlines()
    first = _top_level_keys(lines)
    scans = 0
    lineno: int | None
    for raw_key, value in data.items():
        key = _SHORT.get(raw_key, _norm_flag(raw_key))
        if raw_key in first:
            lineno, line = first[raw_key]
        elif scans < _MAX_KEY_SCANS:  # rare (flow style, odd quoting): bounded full scans
            scans += 1
            lineno, line = _find_lineno(lines, raw_key)
        else:
            lineno, line = None, ""
        if key.startswith("no_") and value is True:
            key, value = key[3:], False
        b.set(key, value, lineno, line or f"{raw_key}: {value}", source)


def parse_vllm_yaml(text: str, source: str, env: Mapping[str, str] | None = None) -> ServingConfig:
    """Parse a `vllm serve --config` YAML file on its own."""
    b = _Builder(str(source))
    _apply_yaml(b, text, str(source))
    return b.build("vllm", env)


def parse_option_json(text: str, source: str, kind: str = "additional_config") -> ServingConfig:
    """Parse a standalone JSON for `--additional-config` or `--compilation-config`."""
    b = _Builder(str(source))
    if kind not in ("additional_config", "compilation_config"):
        b.problems.append(f"unknown option kind {kind!r}")
        return b.build("vllm", None)
    if not isinstance(text, str) or not text.strip():
        b.problems.append(f"{source}: empty")
        return b.build("vllm", None)
    b.set(kind, text, 1, text.strip().splitlines()[0][:500] if text.strip() else "")
    return b.build("vllm", None)


# --- MindIE config.json -----------------------------------------------------------------------


def parse_mindie_config(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """Parse MindIE Service's config.json (BackendConfig / ModelDeployConfig / ScheduleConfig)."""
    src = str(source)
    b = _Builder(src)
    if not isinstance(text, str) or not text.strip():
        return ServingConfig(source=src, engine="mindie", env=_env(env), problems=("empty config",))
    if len(text) > _MAX_TEXT:
        return ServingConfig(
            source=src, engine="mindie", env=_env(env), problems=("file too large",)
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return ServingConfig(
            source=src, engine="mindie", env=_env(env), problems=(f"invalid JSON: {exc}",)
        )
    if not isinstance(data, dict):
        return ServingConfig(
            source=src,
            engine="mindie",
            env=_env(env),
            problems=("config.json is not a JSON object",),
        )
    lines = text.splitlines()
    problems: list[str] = []

    def section(obj: Any, name: str) -> dict[str, Any]:
        v = obj.get(name) if isinstance(obj, dict) else None
        if not isinstance(v, dict):
            problems.append(f"missing section {name}")
            return {}
        return v

    backend = section(data, "BackendConfig")
    deploy = section(backend, "ModelDeployConfig") if backend else {}
    sched = section(backend, "ScheduleConfig") if backend else {}
    models = deploy.get("ModelConfig") if deploy else None
    model: dict[str, Any] = {}
    if isinstance(models, list) and models and isinstance(models[0], dict):
        model = models[0]
        if len(models) > 1:
            problems.append(f"{len(models)} ModelConfig entries; the first is reported")
    elif deploy:
        problems.append("ModelDeployConfig.ModelConfig is missing or empty")

    def take(obj: dict[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            return None
        value = obj[key]
        lineno, line = _find_lineno(lines, key)
        b.items.append(ConfigItem(f"{path}.{key}", _jsonable_safe(value), src, lineno, line))
        b.options[key] = _jsonable_safe(value)
        return value

    ids_raw = take(backend, "npuDeviceIds", "BackendConfig")
    groups: list[tuple[int, ...]] = []
    if isinstance(ids_raw, list):
        for g in ids_raw:
            if isinstance(g, list) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in g
            ):
                groups.append(tuple(g))
            else:
                problems.append(f"npuDeviceIds entry is not a list of integers: {str(g)[:50]}")
    elif ids_raw is not None:
        problems.append("npuDeviceIds is not a list of lists")
    instances = _as_int(take(backend, "modelInstanceNumber", "BackendConfig"))
    take(backend, "multiNodesInferEnabled", "BackendConfig")
    max_seq = _as_int(take(deploy, "maxSeqLen", "ModelDeployConfig"))
    max_in = _as_int(take(deploy, "maxInputTokenLen", "ModelDeployConfig"))
    mc = "ModelDeployConfig.ModelConfig[0]"
    name = take(model, "modelName", mc)
    path = take(model, "modelWeightPath", mc)
    world = _as_int(take(model, "worldSize", mc))
    npu_mem = _as_int(take(model, "npuMemSize", mc))
    cpu_mem = _as_int(take(model, "cpuMemSize", mc))
    backend_type = take(model, "backendType", mc)
    block = _as_int(take(sched, "cacheBlockSize", "ScheduleConfig"))
    max_prefill_tokens = _as_int(take(sched, "maxPrefillTokens", "ScheduleConfig"))
    max_batch = _as_int(take(sched, "maxBatchSize", "ScheduleConfig"))
    max_prefill_batch = _as_int(take(sched, "maxPrefillBatchSize", "ScheduleConfig"))
    take(sched, "maxIterTimes", "ScheduleConfig")
    if world is not None and groups and any(len(g) != world for g in groups):
        problems.append(
            f"worldSize {world} differs from npuDeviceIds group sizes {[len(g) for g in groups]}"
        )
    b.problems.extend(problems)
    return b.build(
        "mindie",
        env,
        model=_as_str(name),
        model_path=_as_str(path),
        block_size=block,
        max_model_len=max_seq,
        npu_device_ids=tuple(groups),
        world_size=world,
        npu_mem_size=npu_mem,
        cpu_mem_size=cpu_mem,
        max_input_token_len=max_in,
        max_prefill_tokens=max_prefill_tokens,
        max_batch_size=max_batch,
        max_prefill_batch_size=max_prefill_batch,
        backend_type=_as_str(backend_type),
        model_instances=instances,
    )


def _jsonable_safe(value: Any) -> Any:
    try:
        return _jsonable(value, [_MAX_NODES])
    except (ValueError, RecursionError):
        return str(value)[:200]


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


# --- launch scripts and logged argument dicts ---------------------------------------------------

_LAUNCH_RE = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?vllm\s+serve\b|vllm\.entrypoints\.")
_SHELL_STOP = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>>", "&>", "|&"})
_ASSIGN_RE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def is_launch_script(text: str) -> bool:
    """True when a text holds a `vllm serve …` or `python -m vllm.entrypoints…` command."""
    if not isinstance(text, str):
        return False
    return any(
        _LAUNCH_RE.search(line)
        for line in text[:1_000_000].splitlines()
        if not line.lstrip().startswith("#")
    )


def _logical_lines(text: str, problems: list[str]) -> list[tuple[int, str]]:
    r"""(first physical line, joined text) of each shell command; `\` continuations joined.
    A comment after a continuation backslash is dropped (what its author meant), with a note."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        m = re.search(r"\\\s+#.*$", line)
        if m:
            problems.append(
                f"line {n}: a comment after the line-continuation backslash; the shell would end "
                "the command here (read as if the comment were not there)"
            )
            line = line[: m.start()] + "\\"
        if not buf:
            start = n
            if line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(b.strip() for b in buf)))
        buf = []
    if buf:
        out.append((start, " ".join(b.strip() for b in buf)))
    return out


def parse_launch_script(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """A shell script or pasted command line that runs `vllm serve …` (or the api_server module):
    continuations joined, shell variables left as they are, `export X=…` lines as environment."""
    import shlex

    src = str(source)
    problems: list[str] = []
    if not isinstance(text, str) or not text.strip():
        return ServingConfig(source=src, problems=(f"{src}: empty",))
    env_seen: dict[str, str] = dict(env or {})
    commands: list[tuple[int, list[str]]] = []
    for lineno, line in _logical_lines(text[:_MAX_TEXT], problems):
        try:
            toks = shlex.split(line, comments=True, posix=True)
        except ValueError as exc:  # an unclosed quote: read what splits
            problems.append(f"line {lineno}: {exc}")
            toks = line.split()
        while (toks and _ASSIGN_RE.match(toks[0])) or toks[:1] == ["export"]:
            if toks[0] == "export":
                toks = toks[1:]
                continue
            m = _ASSIGN_RE.match(toks[0])
            if m:
                env_seen[m.group(1)] = m.group(2)
            toks = toks[1:]
        if is_vllm_argv(toks):
            cut = next(
                (i for i, t in enumerate(toks) if t in _SHELL_STOP or t.startswith(">")), None
            )
            commands.append((lineno, toks[:cut]))
    if not commands:
        return ServingConfig(
            source=src, env=_env(env_seen), problems=(f"{src}: no vllm serve command found",)
        )
    if len(commands) > 1:
        problems.append(
            f"{len(commands)} vllm commands (lines {', '.join(str(c[0]) for c in commands[:8])}); "
            f"the first (line {commands[0][0]}) is judged"
        )
    first_line, argv = commands[0]
    cfg = parse_vllm_argv(argv, src, env_seen)
    lines = text.splitlines()
    items = []
    for item in cfg.items:
        flag = (item.text.split() or [""])[0].split("=", 1)[0]
        where = first_line
        for n in range(first_line, min(len(lines), first_line + 400) + 1):
            if flag and flag in lines[n - 1]:
                where = n
                break
        items.append(replace(item, lineno=where))
    return replace(
        cfg,
        items=tuple(items),
        problems=tuple(p[:300] for p in (*cfg.problems, *problems)[:100]),
    )


def parse_vllm_args_dict(
    text: str, source: str, lineno: int | None = None, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """vLLM's logged `non-default args: {...}` (a Python dict repr, nested dicts included)."""
    b = _Builder(str(source))
    start = text.find("{") if isinstance(text, str) else -1
    if start < 0:
        b.problems.append("no argument dict")
        return b.build("vllm", env)
    value, problem = _load_json_like(text[start:])
    if problem or not isinstance(value, dict):
        b.problems.append(f"non-default args: {problem or 'not a dict'}")
        return b.build("vllm", env)
    line = text.strip()
    for raw_key, v in value.items():
        key = _norm_flag(str(raw_key))
        if key == "model_tag":
            continue
        b.set(key, v, lineno, _arg_text(line, str(raw_key), v))
    return b.build("vllm", env)


def _arg_text(line: str, key: str, value: Any) -> str:
    """The `'key': value` part of a logged dict line (the whole line when it is short)."""
    at = line.find(f"'{key}'")
    if len(line) <= 300 or at < 0:
        return line[:500]
    return line[at : at + 200]
