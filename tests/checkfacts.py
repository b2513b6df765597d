"""Fast check tests: hand a check its facts directly, with no node, fake or real, behind them.

    from checkfacts import judge
    out = judge(weight_placement, {SERVING_LOGS: [...], MODEL_DIRS: ModelDirs(...)})

`judge` runs the check function on a context that answers `ctx.fact(KEY)` from the mapping
(typed keys only) and refuses anything else: a fact the test did not give
raises `MissingFact` (so `optional_fact` reads it as absent), and the host refuses every
question, so a check that touches the node fails its test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ascend_audit.context import Context, Inputs
from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import Host
from ascend_audit.model import Outcome
from ascend_audit.policy import parse_policy

T = TypeVar("T")


class MissingFact(LookupError):
    """The check asked for a fact the test did not give it."""


class NoNode(Host):
    """A host that answers nothing: checks must never ask it (facts come from the test)."""

    kind = "none"

    def __getattribute__(self, name: str) -> Any:
        if name in ("kind", "sysroot", "__class__", "__dict__"):
            return object.__getattribute__(self, name)
        raise AssertionError(f"a check asked the node: host.{name}")


@dataclass
class FactsContext(Context):
    """A Context whose facts are given up front; nothing is gathered."""

    given: dict[str, Any] = field(default_factory=dict)

    def fact(self, key: FactKey[T]) -> T:
        if not isinstance(key, FactKey):
            raise TypeError(f"facts are asked for by a FactKey, not {key!r}")
        name = key.name
        if name not in self.given:
            raise MissingFact(f"fact {name!r} was not given to this test")
        return self.given[name]

    def prefetch(self, layer: str) -> None:
        return None


def facts_context(
    facts: Mapping[FactKey[Any], Any], policy: str = "", inputs: Inputs | None = None
) -> FactsContext:
    """A context holding exactly these facts, the policy parsed from TOML text, and inputs."""
    given = {k.name: v for k, v in facts.items()}
    return FactsContext(NoNode(), parse_policy(policy), inputs or Inputs(), given=given)


def judge(
    check: Callable[[Any], Outcome],
    facts: Mapping[FactKey[Any], Any],
    policy: str = "",
    inputs: Inputs | None = None,
) -> Outcome:
    """The check's Outcome on these facts alone (no engine: no waivers, gating or redaction)."""
    return check(facts_context(facts, policy, inputs))
