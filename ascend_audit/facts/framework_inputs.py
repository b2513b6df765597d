"""The framework layer's inputs as facts: the probe run, serving configs, logs and benchmarks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import CommandResult, ProcessIdentity, ProcessInfo

if TYPE_CHECKING:
    from ascend_audit.facts.bench_result import BenchResult
    from ascend_audit.facts.probe import ProbeFacts
    from ascend_audit.facts.serving_config.model import ServingConfig
    from ascend_audit.facts.serving_log import ServingLogFacts

V = TypeVar("V")


@dataclass(frozen=True)
class ProbeRun:
    """The probe of the serving interpreter: which one, why, how it ran and what it said."""

    python: str | None
    origin: str  # "--python" | "process 123 (…)" | ""
    result: CommandResult | None = None
    facts: ProbeFacts | None = None  # when the probe ran
    timeout: float = 0.0
    refused: str = ""  # why a serving process's interpreter was not probed
    identity: ProcessIdentity | None = None  # whom the probe ran as (None: the auditor)
    scan_gaps: str = ""  # processes the scan could not read, when none was found to probe

    @property
    def source(self) -> str:
        return f"{self.python} (probe)"

    @property
    def missed(self) -> str:
        """Why "no serving process" may be wrong: the processes the scan could not read, or ""."""
        if not self.scan_gaps:
            return ""
        return f"a serving process may be among those the process scan missed: {self.scan_gaps}"


@dataclass(frozen=True)
class ConfigInput:
    """One serving configuration: a --serving-config file or a running process's argv."""

    path: str
    config: ServingConfig | None = None
    error: str | None = None  # unreadable or malformed: nothing could be judged from it
    pid: int | None = None
    from_log: bool = False  # a serving log's `non-default args:` line, read whole


@dataclass(frozen=True)
class ServingConfigs:
    """Every serving configuration found, and the serving processes they came from."""

    inputs: tuple[ConfigInput, ...] = ()
    processes: tuple[ProcessInfo, ...] = ()

    @property
    def configs(self) -> list[ServingConfig]:
        """Readable configurations from files and processes (not those read from logs)."""
        return [
            i.config
            for i in self.inputs
            if i.config is not None and i.error is None and not i.from_log
        ]

    @property
    def logged(self) -> list[ServingConfig]:
        """Configurations read from the serving logs' `non-default args:` lines."""
        return [i.config for i in self.inputs if i.config is not None and i.from_log]

    @property
    def errors(self) -> list[ConfigInput]:
        return [i for i in self.inputs if i.error]


@dataclass(frozen=True)
class LogInput:
    """One serving log, scanned once."""

    path: str
    facts: ServingLogFacts | None = None
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class BenchInput:
    """One benchmark result file."""

    path: str
    result: BenchResult | None = None
    error: str | None = None


def first(values: Iterable[V | None]) -> V | None:
    """The first value that is not None."""
    return next((v for v in values if v is not None), None)


def kv_tokens(f: ServingLogFacts) -> int | None:
    """KV-cache capacity in tokens from a log: V1 line, else blocks × block size, or concurrency."""
    if f.kv_cache_tokens is not None:
        return f.kv_cache_tokens
    if f.npu_blocks is not None and f.block_size:
        return f.npu_blocks * f.block_size
    if f.max_concurrency is not None and f.max_concurrency_tokens:
        return int(f.max_concurrency * f.max_concurrency_tokens)
    return None


PROBE: FactKey[ProbeRun] = FactKey("probe")
SERVING_CONFIGS: FactKey[ServingConfigs] = FactKey("serving_configs")
SERVING_LOGS: FactKey[list[LogInput]] = FactKey("serving_logs")
BENCH_RESULTS: FactKey[list[BenchInput]] = FactKey("bench_results")
WEIGHTS_INTEGRITY: FactKey[dict[str, Any]] = FactKey("weights_integrity")


@dataclass(frozen=True)
class ModelDir:
    """A model directory the serving inputs name: its entries, and its size when measured."""

    path: str
    names: tuple[str, ...] | None  # None when the directory could not be listed
    size_gb: float | None = None  # measured only for weights on network storage


@dataclass(frozen=True)
class ModelDirs:
    """Every model directory named by a serving config, a serving log or the weights path."""

    dirs: tuple[ModelDir, ...] = ()

    def get(self, path: str) -> ModelDir | None:
        return next((d for d in self.dirs if d.path == path), None)


MODEL_DIRS: FactKey[ModelDirs] = FactKey("model_dirs")
