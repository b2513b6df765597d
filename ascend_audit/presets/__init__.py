"""Bundled policy presets per hardware and serving scenario: ordinary policy TOML files.

Each file's first line is `# description: ...`, which `ascend-audit presets` lists.
"""

from __future__ import annotations

from importlib import resources

SUFFIX = ".toml"


def _files() -> dict[str, str]:
    base = resources.files(__name__)
    return {
        p.name[: -len(SUFFIX)]: p.name
        for p in base.iterdir()
        if p.name.endswith(SUFFIX) and not p.name.startswith("_")
    }


def preset_names() -> list[str]:
    """Names of the bundled presets, sorted."""
    return sorted(_files())


def preset_text(name: str) -> str | None:
    """The policy text of a preset, or None when there is no such preset."""
    fname = _files().get(name)
    if fname is None:
        return None
    return resources.files(__name__).joinpath(fname).read_text(encoding="utf-8")


def preset_path(name: str) -> str | None:
    """A filesystem path of a preset (presets ship as plain files in the package)."""
    fname = _files().get(name)
    return str(resources.files(__name__).joinpath(fname)) if fname else None


def description(text: str) -> str:
    """The `# description:` line of a preset."""
    for line in text.splitlines():
        if line.lower().startswith("# description:"):
            return line.split(":", 1)[1].strip()
    return ""


def list_presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every preset."""
    return [(n, description(preset_text(n) or "")) for n in preset_names()]
