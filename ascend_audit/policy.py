"""Policy: a validated TOML file of required layers, thresholds, expectations and waivers."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ascend_audit.model import LAYERS
from ascend_audit.safe_io import open_regular

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class PolicyError(Exception):
    """A policy file that cannot be used; the message names the file, key and line."""


Validator = Callable[[Any], Any]


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("expected true or false")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise ValueError("expected a non-empty string")
    return v


def _pos_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError("expected a whole number >= 1")
    return v


def _nonneg_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError("expected a whole number >= 0")
    return v


def _pos_num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise ValueError("expected a number > 0")
    return float(v)


def _fraction(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise ValueError("expected a fraction between 0 and 1 (5 % is 0.05)")
    return float(v)


def _str_list(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError("expected a list of strings")
    return tuple(v)


def _layers(v: Any) -> tuple[str, ...]:
    items = _str_list(v)
    bad = [x for x in items if x not in LAYERS]
    if bad:
        raise ValueError(f"unknown layer {bad[0]!r}; layers are {', '.join(LAYERS)}")
    return items


_CHECK_ID_RE = re.compile(r"^[A-Z]{2,8}(?:-[A-Z0-9]{2,12})+-\d{3}$")


def _check_ids(v: Any) -> tuple[str, ...]:
    items = _str_list(v)
    bad = [x for x in items if not _CHECK_ID_RE.match(x)]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a check id (like DRV-NET-001)")
    return items


def _choice(*options: str) -> Validator:
    def check(v: Any) -> str:
        if v not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return v

    return check


# section -> key -> (validator, default, help). Later issues add keys here, nowhere else.
SCHEMA: dict[str, dict[str, tuple[Validator, Any, str]]] = {
    "audit": {
        "required_layers": (_layers, LAYERS, "layers whose verdict decides the exit code"),
        "fail_on": (_choice("warn", "fail"), "fail", "exit 1 on warnings too when 'warn'"),
        "command_timeout": (_pos_num, 10.0, "seconds each node command may take"),
        "check_timeout": (
            _pos_num,
            30.0,
            "seconds a plug-in check (--checks-dir, entry point) may run before it is an ERROR",
        ),
        "required_checks": (
            _check_ids,
            (),
            "checks that must run (a SKIP fails the layer)",
        ),
    },
    "driver": {
        "expected_npu_count": (_pos_int, None, "NPUs (cards) the node must show"),
        "expected_chip_count": (_pos_int, None, "chips the node must show (A3: 2 per NPU)"),
        "expected_driver_version": (_str, None, "driver (HDK) version, e.g. 24.1.rc3"),
        "expected_firmware_version": (_str, None, "firmware version, e.g. 7.5.0.1.129"),
        "expected_cann_version": (_str, None, "CANN toolkit version, e.g. 8.1.RC1"),
        "service_user": (_str, None, "user the inference service runs as"),
        "weights_path": (_str, None, "directory holding the model weights"),
        "require_nvmeof": (_bool, False, "weights must sit on live NVMe-oF"),
        "npu_smi_timeout": (_pos_num, 10.0, "seconds npu-smi may take before it counts as hung"),
        "visible_devices": (
            _str,
            None,
            "ASCEND_RT_VISIBLE_DEVICES of the service, e.g. 0,1",
        ),
        "idle_hbm_mb": (_pos_int, 4096, "HBM (MB per chip) in use with no process that fails"),
    },
    "operator": {
        "aicpu_allowlist": (_str_list, (), "AI CPU operator types accepted without a warning"),
        "aicpu_share_fail": (_fraction, 0.05, "AI CPU share of device time that fails"),
        "layout_share_warn": (_fraction, 0.05, "TransData/format-Cast share of time that warns"),
        "host_fallback_fail": (_nonneg_int, 1, "distinct host-CPU fallback operators that fail"),
    },
    "framework": {
        "require_graph_mode": (_bool, True, "eager mode fails the layer"),
        "memory_utilization_warn": (_fraction, 0.92, "gpu_memory_utilization above this warns"),
        "memory_utilization_fail": (_fraction, 0.97, "gpu_memory_utilization at or above fails"),
        "max_load_seconds": (_pos_num, None, "weight loading slower than this fails"),
        "max_model_len": (_pos_int, None, "longest request the service must hold in KV cache"),
        "probe_timeout": (_pos_num, 60.0, "seconds the serving-interpreter probe may take"),
        "memory_reserve_gib": (
            _pos_num,
            3.0,
            "GiB per card kept for graph capture, HCCL buffers and activations in FWK-MEMFIT-001",
        ),
    },
    "cluster": {
        "roce_required": (_bool, True, "RoCE is used (multi-node, P/D); false: findings warn"),
        "flap_window_hours": (_pos_num, 24.0, "LINK DOWN records newer than this warn"),
        "expected_tls": (_choice("any", "disabled", "enabled"), "any", "RoCE TLS switch wanted"),
        "require_hccl_if": (_bool, False, "HCCL_IF_IP or HCCL_SOCKET_IFNAME must be set"),
        "hccl_connect_timeout_min": (_pos_int, 120, "HCCL_CONNECT_TIMEOUT below this warns, s"),
        "hccl_exec_timeout_min": (_nonneg_int, None, "HCCL_EXEC_TIMEOUT below this warns, s"),
        "hccl_buffsize_mb": (_pos_int, None, "HCCL_BUFFSIZE wanted (vLLM P/D: P 512, D 1024)"),
        "multinode_connect_timeout_min": (
            _pos_int,
            600,
            "HCCL_CONNECT_TIMEOUT below this warns when the deployment spans nodes, s",
        ),
    },
    "host": {
        "cpu_governor": (_str, "performance", "CPU frequency governor wanted"),
        "allow_virtual_machine": (_bool, False, "running inside a VM does not warn"),
        "transparent_hugepage": (_choice("always", "madvise", "never", "any"), "always", "THP"),
        "numa_balancing": (_choice("off", "on", "any"), "off", "kernel.numa_balancing wanted"),
        "overcommit_memory": (_choice("0", "1", "2", "any"), "any", "vm.overcommit_memory wanted"),
        "allow_swap": (_bool, False, "active swap does not warn"),
        "min_kernel_release": (_str, "5.10", "kernel releases older than this warn"),
        "min_nofile": (_pos_int, 65535, "open-file limit (soft) of the service, at least"),
        "memlock_unlimited": (_bool, True, "locked-memory limit of the service must be unlimited"),
        "min_shm_gib": (_pos_num, 1.0, "/dev/shm of the service at least this many GiB"),
        "ray_min_shm_gib": (_pos_num, 10.0, "/dev/shm at least this many GiB for a Ray launch"),
        "service_port": (_pos_int, None, "TCP port the service listens on (must be free)"),
        "hccl_port_span": (_pos_int, 32, "host ports HCCL takes from HCCL_IF_BASE_PORT"),
    },
    "targets": {
        "ttft_p99_ms": (_pos_num, None, "p99 time to first token, ms"),
        "tpot_p99_ms": (_pos_num, None, "p99 time per output token, ms"),
        "min_output_throughput": (_pos_num, None, "output tokens per second"),
        "max_failed_requests": (_nonneg_int, 0, "failed benchmark requests allowed"),
    },
}
WAIVER_KEYS = {"check", "reason", "expires"}
POLICY_CAP = 4 * 1024 * 1024  # bytes of a policy file read; a policy is a few KiB


@dataclass(frozen=True)
class Waiver:
    """A documented exception: a failing check accepted until a date."""

    check: str
    reason: str
    expires: dt.date
    line: int = 0

    def active(self, today: dt.date) -> bool:
        return today <= self.expires

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "reason": self.reason, "expires": self.expires.isoformat()}


@dataclass(frozen=True)
class Policy:
    """Validated settings; read with `policy["driver.expected_npu_count"]`."""

    values: dict[str, Any]
    waivers: tuple[Waiver, ...] = ()
    source: str = "built-in defaults"
    digest: str = ""
    plugins: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)  # key -> what set it ("--timeout")

    def __getitem__(self, dotted: str) -> Any:
        return self.values[dotted]

    def get(self, dotted: str, default: Any = None) -> Any:
        return self.values.get(dotted, default)

    def waiver_for(self, check_id: str) -> Waiver | None:
        return next((w for w in self.waivers if w.check == check_id), None)

    def with_overrides(self, changes: dict[str, Any], by: str) -> Policy:
        """A new policy with values set outside the file (a CLI option); its digest covers them.

        The policy is never changed after its digest is taken: an override makes a new one.
        """
        if not changes:
            return self
        unknown = sorted(set(changes) - set(self.values))
        if unknown:
            raise PolicyError(f"{by}: unknown policy key {unknown[0]}")
        values = {**self.values, **changes}
        said = json.dumps({k: _plain(v) for k, v in sorted(changes.items())}, sort_keys=True)
        digest = hashlib.sha256(f"{self.digest}\n{by}\n{said}".encode()).hexdigest()[:16]
        overrides = {**self.overrides, **dict.fromkeys(changes, by)}
        return replace(self, values=values, digest=digest, overrides=overrides)

    def to_dict(self) -> dict[str, Any]:
        """Source, digest and the effective value of every key (what the checks judged by)."""
        return {
            "source": self.source,
            "digest": self.digest,
            "required_layers": list(self.values["audit.required_layers"]),
            "waivers": [w.to_dict() for w in self.waivers],
            "values": {k: _plain(v) for k, v in sorted(self.values.items())},
            "overrides": dict(self.overrides),
        }


def _plain(value: Any) -> Any:
    """A policy value as JSON data (tuples become lists)."""
    return list(value) if isinstance(value, tuple) else value


def defaults() -> dict[str, Any]:
    return {f"{s}.{k}": spec[1] for s, keys in SCHEMA.items() for k, spec in keys.items()}


def default_policy() -> Policy:
    return Policy(defaults(), digest=hashlib.sha256(b"").hexdigest()[:16])


def _line_of(text: str, section: str, key: str | None, nth_table: int | None = None) -> int:
    """Best-effort line number of a key (or a table header) in the TOML text."""
    current = ""
    seen_tables = -1
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        m = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", line)
        if m:
            current = m.group(1).strip().strip('"')
            if current == section and line.startswith("[["):
                seen_tables += 1
            in_table = nth_table is None or seen_tables == nth_table
            if key is None and current == section and in_table:
                return no
            continue
        in_table = nth_table is None or seen_tables == nth_table
        if (
            key
            and current == section
            and in_table
            and re.match(rf"^\"?{re.escape(key)}\"?\s*=", line)
        ):
            return no
    return 0


def parse_policy(text: str, source: str = "<policy>") -> Policy:
    """Validate a policy text; raises PolicyError naming the key and line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from None

    def where(section: str, key: str | None = None, nth: int | None = None) -> str:
        line = _line_of(text, section, key, nth)
        return f"{source}:{line}" if line else source

    values = defaults()
    waivers: list[Waiver] = []
    plugins: dict[str, Any] = {}
    for section, body in data.items():
        if section == "waivers":
            if not isinstance(body, list):
                raise PolicyError(f"{where(section)}: 'waivers' must be [[waivers]] tables")
            for i, w in enumerate(body):
                waivers.append(_waiver(w, where("waivers", None, i), i, text))
            continue
        if section == "plugins":
            plugins = dict(body) if isinstance(body, dict) else {}
            continue
        if section not in SCHEMA:
            known = ", ".join([*SCHEMA, "waivers", "plugins"])
            raise PolicyError(f"{where(section)}: unknown section [{section}]; known: {known}")
        if not isinstance(body, dict):
            raise PolicyError(f"{where(section)}: [{section}] must be a table")
        for key, value in body.items():
            spec = SCHEMA[section].get(key)
            if spec is None:
                known = ", ".join(SCHEMA[section])
                raise PolicyError(
                    f"{where(section, key)}: unknown key '{key}' in [{section}]; known: {known}"
                )
            try:
                values[f"{section}.{key}"] = spec[0](value)
            except ValueError as exc:
                raise PolicyError(
                    f"{where(section, key)}: bad value for {section}.{key} = {value!r}: {exc}"
                ) from None
    warn_at = values["framework.memory_utilization_warn"]
    if warn_at > values["framework.memory_utilization_fail"]:
        raise PolicyError(
            f"{where('framework', 'memory_utilization_warn')}: memory_utilization_warn "
            "must not exceed memory_utilization_fail"
        )
    digest = hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:16]
    return Policy(values, tuple(waivers), source, digest, plugins)


def _waiver(body: Any, loc: str, index: int, text: str) -> Waiver:
    if not isinstance(body, dict):
        raise PolicyError(f"{loc}: each [[waivers]] entry must be a table")
    unknown = set(body) - WAIVER_KEYS
    if unknown:
        raise PolicyError(
            f"{loc}: unknown key '{sorted(unknown)[0]}' in [[waivers]]; "
            "known: check, reason, expires"
        )
    missing = WAIVER_KEYS - set(body)
    if missing:
        raise PolicyError(f"{loc}: waiver #{index + 1} lacks '{sorted(missing)[0]}'")
    expires = body["expires"]
    if isinstance(expires, dt.datetime):
        expires = expires.date()
    elif isinstance(expires, str):
        try:
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise PolicyError(f"{loc}: expires must be a date like 2026-12-31") from None
    if not isinstance(expires, dt.date):
        raise PolicyError(f"{loc}: expires must be a date like 2026-12-31")
    for key in ("check", "reason"):
        if not isinstance(body[key], str) or not body[key].strip():
            raise PolicyError(f"{loc}: waiver '{key}' must be a non-empty string")
    return Waiver(body["check"], body["reason"], expires)


def load_policy(path: str | None) -> Policy:
    """Read a policy file, or the defaults when no path is given."""
    if not path:
        return default_policy()
    try:
        with open_regular(path) as fh:
            raw = fh.read(POLICY_CAP)
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: policy file is not UTF-8 text") from None
    return parse_policy(text, path)


def describe_schema() -> str:
    """Every policy key with its default and meaning, for `--help` and docs."""
    lines = []
    for section, keys in SCHEMA.items():
        lines.append(f"[{section}]")
        for key, (_v, default, text) in keys.items():
            shown = "unset" if default is None else repr(default)
            lines.append(f"  {key:28} {text} (default {shown})")
    lines.append("[[waivers]]  check = ID, reason = text, expires = YYYY-MM-DD")
    return "\n".join(lines)
