"""`presets`, `weights-manifest` and `completion`: helpers around an audit."""

from __future__ import annotations

import sys

import click

from ascend_audit.cli.common import EXIT_NOT_READY, UsageError, complete_presets


@click.command("presets")
@click.option(
    "--show",
    "show",
    metavar="NAME",
    shell_complete=complete_presets,
    help="Print one preset's policy TOML.",
)
def presets_cmd(show: str | None) -> None:
    """List the bundled policy presets, or print one to copy and edit.

    \b
    Examples:
      ascend-audit presets
      ascend-audit presets --show a3-vllm-decode > policy.toml
      ascend-audit run --preset a2-vllm
    """
    from ascend_audit.presets import list_presets, preset_names, preset_text

    if show:
        text = preset_text(show)
        if text is None:
            raise UsageError(
                f"--show: no preset {show!r}; choose one of {', '.join(preset_names())}"
            )
        click.echo(text, nl=False)
        return
    for name, description in list_presets():
        click.echo(f"{name:<18} {description}")


@click.command("weights-manifest")
@click.argument("model_dir", type=click.Path(file_okay=False, exists=True))
@click.option(
    "-o", "--output", default="-", show_default=True, help="Manifest file to write ('-': stdout)."
)
@click.option("--samples", default=8, show_default=True, type=click.IntRange(min=1))
@click.option("--block-size", default=1024 * 1024, show_default=True, type=click.IntRange(min=4096))
@click.option("--full", is_flag=True, help="Also hash every file completely (slow).")
def weights_manifest_cmd(
    model_dir: str, output: str, samples: int, block_size: int, full: bool
) -> None:
    """Write a weights manifest (sizes, header and sampled-block SHA-256) of a known-good copy.

    \b
    Examples:
      ascend-audit weights-manifest /models/Qwen3-8B -o qwen3-8b.manifest.json
      ascend-audit run --model-dir /models/Qwen3-8B --verify-weights \\
          --weights-manifest qwen3-8b.manifest.json
    """
    import json

    from ascend_audit.facts.weights import write_manifest
    from ascend_audit.progress import byte_progress, tree_bytes
    from ascend_audit.reports.json_report import write_atomic

    with byte_progress("hashing weights", tree_bytes(model_dir) if full else None) as advance:
        manifest = write_manifest(
            model_dir, block_size=block_size, samples=samples, full=full, progress=advance
        )
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    if output == "-":
        click.echo(text, nl=False)
        return
    write_atomic(output, text)
    mb = manifest["total_bytes"] / 1e6
    click.echo(
        f"wrote {output}: {len(manifest['files'])} files, {mb:.1f} MB, {manifest['seconds']:.2f} s",
        err=True,
    )
    if manifest["problems"]:
        click.echo("problems: " + "; ".join(manifest["problems"][:5]), err=True)
        sys.exit(EXIT_NOT_READY)


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script (commands, options, example names, presets, check ids).

    \b
    Examples:
      eval "$(ascend-audit completion bash)"                   # this shell
      ascend-audit completion bash > /etc/bash_completion.d/ascend-audit
      ascend-audit completion zsh > "${fpath[1]}/_ascend-audit"
      ascend-audit completion fish > ~/.config/fish/completions/ascend-audit.fish
    """
    from click.shell_completion import get_completion_class

    from ascend_audit.cli import main

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click knows all three
        raise UsageError(f"no completion for {shell}")
    click.echo(cls(main, {}, "ascend-audit", "_ASCEND_AUDIT_COMPLETE").source())
