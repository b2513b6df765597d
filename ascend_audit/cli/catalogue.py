"""`checks`, `explain` and `policy-keys`: what the tool judges, read from check metadata only."""

from __future__ import annotations

import click

from ascend_audit.cli.common import (
    UsageError,
    complete_check_ids,
    complete_tags,
    lang_option,
    read_registry,
    split_list,
)


@click.command("checks")
@click.option("--layer", type=click.Choice(["driver", "operator", "framework"]))
@click.option(
    "--tag",
    "tags",
    multiple=True,
    shell_complete=complete_tags,
    help="Only checks with this tag: its concern (network, storage, versions, …), id family "
    "(npu, ver, net, …), severity (critical, high, …) or a tag its metadata gives. Repeatable: "
    "any of them.",
)
@click.option("--checks-dir", "checks_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@lang_option
def checks_cmd(
    layer: str | None,
    tags: tuple[str, ...],
    checks_dirs: tuple[str, ...],
    as_json: bool,
    lang: str | None = None,
) -> None:
    """List every check: id, layer, severity, title.

    \b
    Examples:
      ascend-audit checks
      ascend-audit checks --layer driver
      ascend-audit checks --tag network --tag storage
      ascend-audit checks --checks-dir ./site-checks --json
    """
    registry = read_registry(checks_dirs, catalogue_only=True)
    wanted = {t.strip().lower() for t in split_list(tags)}
    specs = [
        s
        for s in registry.all()
        if (layer is None or s.layer == layer) and (not wanted or wanted & set(s.all_tags))
    ]
    if wanted and not specs:
        known = sorted({t for s in registry.all() for t in s.all_tags})
        raise UsageError(
            f"--tag: no check has tag {', '.join(sorted(wanted))}; tags: " + ", ".join(known)
        )
    if as_json:
        import json

        click.echo(json.dumps([s.to_dict() for s in specs], indent=2, ensure_ascii=False))
        return
    from ascend_audit.i18n import check_text, detect_lang, layer_word
    from ascend_audit.reports.terminal import pad

    lang = lang or detect_lang()
    for s in specs:
        layer, severity = layer_word(s.layer, lang), severity_word(s.severity, lang)
        title = check_text(s.id, "title", lang, s.title)
        click.echo(f"{s.id:<16} {pad(layer, 10)} {pad(severity, 9)} {title}")


@click.command()
@click.argument("check_id", shell_complete=complete_check_ids)
@click.option("--checks-dir", "checks_dirs", multiple=True, type=click.Path(file_okay=False))
@lang_option
def explain(check_id: str, checks_dirs: tuple[str, ...], lang: str | None) -> None:
    """Explain one check: why it matters, what evidence it reads, how to fix a failure.

    \b
    Example:
      ascend-audit explain DRV-NPU-001
    """
    registry = read_registry(checks_dirs, catalogue_only=True)
    spec = registry.get(check_id.strip().upper()) or registry.get(check_id.strip())
    if spec is None:
        raise UsageError(f"unknown check id {check_id}; `ascend-audit checks` lists them")
    from ascend_audit.i18n import check_text, detect_lang, layer_word, t

    lang = lang or detect_lang()
    title = check_text(spec.id, "title", lang, spec.title)
    fix = check_text(spec.id, "remediation", lang, spec.remediation)
    why = check_text(spec.id, "rationale", lang, "")
    layer = layer_word(spec.layer, lang)
    severity = severity_word(spec.severity, lang)
    click.echo(
        f"{spec.id} — {title}\n" + t("explain.layer_line", lang, layer=layer, severity=severity)
    )
    if spec.core:
        click.echo(t("explain.core", lang, layer=layer))
    click.echo("")
    heading = "explain.why" if why or lang == "en" or not spec.rationale else "explain.why_english"
    body = why or spec.rationale or t("explain.undocumented", lang)
    click.echo(t(heading, lang) + "\n  " + body.replace("\n", "\n  "))
    if spec.evidence:
        click.echo("\n" + t("explain.evidence", lang))
        for item in spec.evidence:
            click.echo(f"  - {item}")
    if spec.policy_keys:
        from ascend_audit.policy import SCHEMA

        click.echo("\n" + t("explain.policy_keys", lang))
        for key in spec.policy_keys:
            section, _, name = key.partition(".")
            _v, default, text = SCHEMA.get(section, {}).get(name, (None, None, "plug-in setting"))
            shown = t("explain.unset", lang) if default is None else repr(default)
            click.echo(f"  - {key} = {shown}  ({text})")
    click.echo(
        "\n"
        + t("explain.fix", lang)
        + "\n  "
        + (fix or t("explain.undocumented", lang)).replace("\n", "\n  ")
    )


def severity_word(severity: str, lang: str) -> str:
    """critical/high/… in LANG (the severity itself when unknown)."""
    from ascend_audit.i18n import messages

    return messages(lang).get(f"severity.{severity}") or severity


@click.command("policy-keys")
def policy_keys() -> None:
    """Print every policy key with its default and meaning.

    \b
    Example:
      ascend-audit policy-keys > policy.toml.reference
    """
    from ascend_audit.policy import describe_schema

    click.echo(describe_schema())
