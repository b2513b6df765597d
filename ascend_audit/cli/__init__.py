"""Command line: run, collect, checks, explain and the rest, one module a concern.
Heavy modules are imported inside commands only, so `--help` stays light."""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from typing import Any

import click

from ascend_audit import __version__
from ascend_audit.cli.audit import collect, run
from ascend_audit.cli.catalogue import checks_cmd, explain, policy_keys
from ascend_audit.cli.common import EXIT_INTERNAL, EXIT_USAGE
from ascend_audit.cli.reporting import diff, merge, render
from ascend_audit.cli.tools import completion_cmd, presets_cmd, weights_manifest_cmd


class LocalizedGroup(click.Group):
    """The command group whose --help (its own and each command's) speaks the locale's language:
    under LANG=zh_* the descriptions and command summaries are Chinese, the options English."""

    def get_help(self, ctx: click.Context) -> str:
        lang = _help_lang()
        if lang == "en":
            return super().get_help(ctx)
        saved = (self.help, {n: c.short_help for n, c in self.commands.items()})
        try:
            examples = inspect.cleandoc(self.help or "").split("\b", 1)
            self.help = _t("help.main", lang) + (
                "\n\n\b" + examples[1] if len(examples) > 1 else ""
            )
            self.help = self.help.replace(_t("help.exit_codes", "en"), _t("help.exit_codes", lang))
            self.help = self.help.replace("Examples:", _t("help.examples", lang))
            for name, command in self.commands.items():
                command.short_help = _t(f"help.cmd.{name}", lang) or command.short_help
            return super().get_help(ctx)
        finally:
            self.help = saved[0]
            for name, short in saved[1].items():
                self.commands[name].short_help = short

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        lang = _help_lang()
        if command is None or lang == "en" or not _t(f"help.cmd.{cmd_name}", lang):
            return command
        import copy

        localized = copy.copy(command)  # the shared command object keeps its English
        parts = inspect.cleandoc(command.help or "").split("\b", 1)
        examples = (
            parts[1]
            .replace("Examples:", _t("help.examples", lang))
            .replace("Example:", _t("help.examples", lang))
        )
        localized.help = (
            _t(f"help.cmd.{cmd_name}", lang)
            + ("\n\n\b" + examples if len(parts) > 1 else "")
            + "\n\n"
            + _t("help.options_english", lang)
        )
        return localized


def _help_lang() -> str:
    from ascend_audit.i18n import detect_lang

    return detect_lang()


def _t(key: str, lang: str) -> str:
    from ascend_audit.i18n import messages

    return messages(lang).get(key, "")


@click.group(
    cls=LocalizedGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="ascend-audit")
def main() -> None:
    """Is this Ascend NPU node ready for LLM inference? Judged layer by layer:
    driver, then operator, then framework; a layer that is not ready blocks those above.

    \b
    Examples:
      ascend-audit run --example atlas-800t-a2-ready     audit a bundled example node
      ascend-audit run --json report.json                 audit this node
      ascend-audit run --trace ./prof_ascend_pt --serving-log vllm.log --policy policy.toml
      ascend-audit collect -o node.tar.gz                 record this node for later
      ascend-audit run --snapshot node.tar.gz             replay a recorded node
      ascend-audit explain DRV-NPU-001                    what a check judges and how to fix it

    Exit codes: 0 ready, 1 not ready, 2 usage error, 3 the auditor itself failed.
    """


for _command in (
    run,
    collect,
    checks_cmd,
    explain,
    policy_keys,
    render,
    diff,
    merge,
    presets_cmd,
    weights_manifest_cmd,
    completion_cmd,
):
    main.add_command(_command)


EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + SIGINT, 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so every `finally` (snapshots, staging dirs) runs."""


def _on_sigterm(_signum: int, _frame: Any) -> None:
    raise Terminated()


def _interrupted(exc: BaseException | None) -> None:
    """End the child process groups still running and exit 130 (Ctrl-C) or 143 (SIGTERM)."""
    from ascend_audit.host.live import kill_running_children

    kill_running_children()
    terminated = isinstance(exc, Terminated) or isinstance(
        getattr(exc, "__context__", None), Terminated
    )
    click.echo("terminated" if terminated else "interrupted", err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def entry() -> None:
    """Console entry: usage errors exit 2, internal failures exit 3 without a traceback dump,
    Ctrl-C 130 and SIGTERM 143 after ending child process groups and removing temporary dirs."""
    import signal

    from ascend_audit.safe_write import OutputError

    with contextlib.suppress(ValueError, OSError):  # not the main thread
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except OutputError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except click.Abort as exc:  # click's form of KeyboardInterrupt
        _interrupted(exc)
    except SystemExit:
        raise
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except Exception as exc:
        click.echo(
            f"ascend-audit: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in ascend-audit; set ASCEND_AUDIT_DEBUG=1 for the traceback.",
            err=True,
        )
        if os.environ.get("ASCEND_AUDIT_DEBUG"):
            raise
        sys.exit(EXIT_INTERNAL)
