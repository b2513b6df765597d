"""What the commands share: exit codes, the usage error, completers, and the loaders that
turn a bad policy, preset or check selection into a usage error (exit 2)."""

from __future__ import annotations

import sys
from typing import Any

import click

EXIT_READY, EXIT_NOT_READY, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(click.UsageError):
    """A usage error: exit 2 with a message naming the option or file."""


def split_list(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(v.strip() for raw in values for v in raw.split(",") if v.strip())


def complete_examples(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.examples_index import list_examples

    return [n for n, _ in list_examples() if n.startswith(incomplete)] + (
        ["list"] if "list".startswith(incomplete) else []
    )


def complete_presets(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.presets import preset_names

    return [n for n in preset_names() if n.startswith(incomplete)]


def complete_check_ids(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """Check ids; in a comma list (--only A,B) the last item is completed."""
    from ascend_audit.registry import load_registry

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    try:
        ids = [s.id for s in load_registry(entry_points=False, catalogue_only=True).all()]
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [prefix + i for i in ids if i.upper().startswith(last.upper())]


def complete_tags(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ascend_audit.registry import load_registry

    try:
        specs = load_registry(entry_points=False, catalogue_only=True).all()
    except Exception:
        return []
    tags = sorted({t for s in specs for t in s.all_tags})
    return [t for t in tags if t.startswith(incomplete.lower())]


def lang_option(fn: Any) -> Any:
    return click.option(
        "--lang",
        type=click.Choice(["zh", "en"]),
        help="Language of the terminal, HTML, Markdown and JUnit outputs (default: zh when "
        "LC_ALL / LC_MESSAGES / LANG is zh_*, else en). The JSON keeps English and records it.",
    )(fn)


def lang_of(opts: dict[str, Any]) -> str:
    from ascend_audit.i18n import detect_lang

    return opts.get("lang") or detect_lang()


def read_policy(path: str | None, fallback_text: str | None = None) -> Any:
    from ascend_audit.policy import PolicyError, load_policy, parse_policy

    try:
        if path is None and fallback_text is not None:
            return parse_policy(fallback_text, "policy bundled with the snapshot")
        return load_policy(path)
    except PolicyError as exc:
        raise UsageError(f"--policy: {exc}") from None


def preset_policy(name: str, policy: str | None) -> str:
    """The path of a bundled preset; refuse --preset with --policy (which one would win?)."""
    from ascend_audit.presets import preset_names, preset_path

    if policy:
        raise UsageError(
            "--preset and --policy together: use one; to adjust a preset, "
            f"`ascend-audit presets --show {name} > policy.toml`, edit, and pass --policy"
        )
    path = preset_path(name)
    if path is None:
        raise UsageError(f"--preset: no preset {name!r}; choose one of {', '.join(preset_names())}")
    return path


def read_registry(
    checks_dirs: tuple[str, ...],
    catalogue_only: bool = False,
    layers: tuple[str, ...] | None = None,
) -> Any:
    from ascend_audit.registry import RegistryError, load_registry

    try:
        return load_registry(checks_dirs, catalogue_only=catalogue_only, layers=layers)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None


def check_selection(registry: Any, only: frozenset[str], skip: frozenset[str]) -> None:
    for flag, ids in (("--only", only), ("--skip", skip)):
        unknown = sorted(i for i in ids if registry.get(i) is None)
        if unknown:
            raise UsageError(
                f"{flag}: unknown check id {unknown[0]}; `ascend-audit checks` lists them"
            )


def terminal_text(text: str) -> str:
    """Report text for the terminal: node-supplied control characters removed, and what the
    terminal's encoding cannot show replaced."""
    from ascend_audit.textsafe import encodable, printable

    return encodable(printable(text), sys.stdout)
