"""What a check sees: the host, the policy, the user's inputs, and facts gathered once per run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import Host
from ascend_audit.policy import Policy

T = TypeVar("T")
Gatherer = Callable[["Context"], Any]
_GATHERERS: dict[str, tuple[Gatherer, str, tuple[tuple[str, ...], ...]]] = {}


def _name(key: FactKey[Any]) -> str:
    if not isinstance(key, FactKey):
        raise TypeError(f"facts are asked for by a FactKey (facts/keys.py), not {key!r}")
    return key.name


def gatherer(
    key: FactKey[T], layer: str, commands: tuple[tuple[str, ...], ...] = ()
) -> Callable[[Callable[[Context], T]], Callable[[Context], T]]:
    """Register how a fact is gathered from the host, under its typed key
    (`@gatherer(TOPOLOGY, "driver")`); `commands` are prefetched concurrently."""

    def mark(fn: Callable[[Context], T]) -> Callable[[Context], T]:
        _GATHERERS[_name(key)] = (fn, layer, commands)
        return fn

    return mark


def _load_gatherer(name: str) -> None:
    # The gather modules register themselves on import; import one only when its fact is asked.
    if name not in _GATHERERS:
        from ascend_audit.gather import load_for_fact

        load_for_fact(name)


@dataclass(frozen=True)
class Inputs:
    """What the user handed the audit beyond the node itself."""

    traces: tuple[str, ...] = ()
    serving_logs: tuple[str, ...] = ()
    serving_configs: tuple[str, ...] = ()
    bench_results: tuple[str, ...] = ()
    python: str | None = None
    deep: bool = False
    rank_table: str | None = None
    model_dir: str | None = None
    verify_weights: bool = False
    weights_manifest: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": list(self.traces),
            "serving_logs": list(self.serving_logs),
            "serving_configs": list(self.serving_configs),
            "bench_results": list(self.bench_results),
            "python": self.python,
            "deep": self.deep,
            "rank_table": self.rank_table,
            "model_dir": self.model_dir,
            "verify_weights": self.verify_weights,
            "weights_manifest": self.weights_manifest,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Inputs:
        return cls(
            tuple(d.get("traces") or ()),
            tuple(d.get("serving_logs") or ()),
            tuple(d.get("serving_configs") or ()),
            tuple(d.get("bench_results") or ()),
            d.get("python"),
            bool(d.get("deep")),
            d.get("rank_table"),
            d.get("model_dir"),
            bool(d.get("verify_weights")),
            d.get("weights_manifest"),
        )

    @property
    def empty(self) -> bool:
        return (
            not (self.traces or self.serving_logs or self.serving_configs or self.bench_results)
            and not (self.python or self.rank_table or self.model_dir or self.weights_manifest)
            and not self.verify_weights
        )


@dataclass
class Context:
    """Per-run state handed to every check; facts are built at most once and shared."""

    host: Host
    policy: Policy
    inputs: Inputs = field(default_factory=Inputs)
    _facts: dict[str, Any] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def timeout(self) -> float:
        return float(self.policy.get("audit.command_timeout", 10.0))

    def fact(self, key: FactKey[T]) -> T:
        """A fact by its typed key, gathered on first use; a gatherer's exception propagates to
        the check."""
        name = _name(key)
        with self._lock:
            if name in self._facts:
                return self._facts[name]
        _load_gatherer(name)
        entry = _GATHERERS.get(name)
        if entry is None:
            raise KeyError(f"no gatherer for fact {name!r}")
        value = entry[0](self)
        with self._lock:
            self._facts.setdefault(name, value)
            return self._facts[name]

    def known_facts(self) -> dict[str, Any]:
        """Facts gathered so far (for the inventory)."""
        with self._lock:
            return dict(self._facts)

    def forget(self, names: set[str]) -> None:
        """Drop facts, so the inventory shows only what judged checks stood on."""
        with self._lock:
            for name in names:
                self._facts.pop(name, None)

    def prefetch(self, layer: str) -> None:
        """Start every static command a layer's gatherers need, concurrently."""
        from ascend_audit.gather import load_for_layer

        load_for_layer(layer)
        argvs = [list(c) for _fn, lay, cmds in _GATHERERS.values() if lay == layer for c in cmds]
        if argvs:
            self.host.run_many(argvs, self.timeout)
