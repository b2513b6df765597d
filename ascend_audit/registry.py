"""Check registry: built-ins, entry-point plug-ins and drop-in modules, with validated metadata.

A check is a decorated function `fn(ctx) -> Outcome`. Its metadata (title, layer, severity,
rationale, remediation, evidence used) lives as data in a TOML file beside the module
(`disk.py` → `disk.toml`, one table per check id), or in the decorator's keywords for plug-ins.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ascend_audit.model import LAYERS, SEVERITIES

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ENTRY_POINT_GROUP = "ascend_audit.checks"
META_KEYS = (
    "layer",
    "title",
    "severity",
    "rationale",
    "remediation",
    "evidence",
    "tags",
    "policy",
    "core",
)
# Translated metadata sits beside the English in the same table: title_zh, remediation_zh, …
TRANSLATED_KEYS = ("title", "rationale", "remediation")
TRANSLATIONS = ("zh",)
# en_digest_zh = {title = "…", remediation = "…"}: the digest (i18n.en_digest) of the English each
# translation was made from, so a changed English text cannot leave its translation lagging unseen.
DIGEST_KEYS = tuple(f"en_digest_{lang}" for lang in TRANSLATIONS)
TRANSLATION_KEYS = tuple(f"{k}_{lang}" for k in TRANSLATED_KEYS for lang in TRANSLATIONS)
ALLOWED_KEYS = META_KEYS + TRANSLATION_KEYS + DIGEST_KEYS
CheckFunc = Callable[[Any], Any]


class RegistryError(Exception):
    """A check that cannot be registered; the message names it and its origin."""


@dataclass(frozen=True)
class CheckSpec:
    """A registered check: stable id, metadata and the function that judges."""

    id: str
    layer: str
    title: str
    severity: str
    rationale: str
    remediation: str
    evidence: tuple[str, ...]
    func: CheckFunc
    origin: str
    tags: tuple[str, ...] = ()  # as written in the metadata; see all_tags for the derived ones
    translations: tuple[tuple[str, str], ...] = ()  # (("title_zh", "…"), …)
    policy_keys: tuple[str, ...] = ()  # the policy settings it reads ("operator.aicpu_share_fail")
    translated_from: tuple[tuple[str, str], ...] = ()  # (("title_zh", "<en_digest>"), …)
    core: bool = False  # its layer is READY only on its proof: a SKIP fails the layer

    @property
    def all_tags(self) -> tuple[str, ...]:
        """Written tags, plus the concern (module name), the id family and the severity."""
        family = self.id.split("-")[1].lower() if self.id.count("-") >= 2 else ""
        derived = (self.origin.rsplit(".", 1)[-1], family, self.severity)
        return tuple(dict.fromkeys(t for t in (*self.tags, *derived) if t))

    def text(self, field: str, lang: str = "en") -> str:
        """FIELD (title, rationale, remediation) in LANG, or "" when it has no translation."""
        if lang == "en":
            return str(getattr(self, field))
        return dict(self.translations).get(f"{field}_{lang}", "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "layer": self.layer,
            "title": self.title,
            "severity": self.severity,
            "rationale": self.rationale,
            "remediation": self.remediation,
            "evidence": list(self.evidence),
            "policy": list(self.policy_keys),
            "core": self.core,
            "origin": self.origin,
            "tags": list(self.all_tags),
        }


def check(check_id: str, **meta: Any) -> Callable[[CheckFunc], CheckFunc]:
    """Mark a function as a check; metadata keywords override the module's TOML sidecar."""
    unknown = set(meta) - set(ALLOWED_KEYS)
    if unknown:
        raise RegistryError(f"check {check_id}: unknown metadata {sorted(unknown)}")

    def mark(fn: CheckFunc) -> CheckFunc:
        fn.__ascend_check__ = {"id": check_id, **meta}  # type: ignore[attr-defined]
        return fn

    return mark


def _sidecar(module: ModuleType) -> dict[str, Any]:
    path = getattr(module, "__file__", None)
    if not path:
        return {}
    toml_path = os.path.splitext(path)[0] + ".toml"
    return _read_metadata(toml_path) if os.path.isfile(toml_path) else {}


def _read_metadata(toml_path: str) -> dict[str, Any]:
    try:
        with open(toml_path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RegistryError(f"{toml_path}: check metadata is not valid TOML: {exc}") from None


class Registry:
    """All checks known to one run, in layer order then registration order.

    A run of some layers leaves the other layers' built-in checks unread until something asks
    for them (an id it does not hold, the whole list, a new check whose id must be unique):
    reading their metadata is a large part of a small run's start-up.
    """

    def __init__(self) -> None:
        self._specs: dict[str, CheckSpec] = {}
        self._unread: Callable[[Registry], None] | None = None  # registers the rest
        self._complete_layers = frozenset(LAYERS)  # layers whose checks are all registered

    def defer(self, register: Callable[[Registry], None], complete: Iterable[str]) -> None:
        """Hold back REGISTER (it adds the checks of the layers not in COMPLETE) until asked."""
        self._unread, self._complete_layers = register, frozenset(complete)

    def _read_rest(self) -> None:
        register, self._unread = self._unread, None
        if register is not None:
            self._complete_layers = frozenset(LAYERS)
            register(self)

    def __len__(self) -> int:
        self._read_rest()
        return len(self._specs)

    def get(self, check_id: str) -> CheckSpec | None:
        if check_id not in self._specs:
            self._read_rest()
        return self._specs.get(check_id)

    def all(self) -> list[CheckSpec]:
        self._read_rest()
        return self._sorted()

    def _sorted(self) -> list[CheckSpec]:
        order = {name: i for i, name in enumerate(LAYERS)}
        return sorted(self._specs.values(), key=lambda s: (order[s.layer], s.id))

    def for_layer(self, layer: str) -> list[CheckSpec]:
        if layer not in self._complete_layers:
            self._read_rest()
        return [s for s in self._sorted() if s.layer == layer]

    def add(self, spec: CheckSpec) -> None:
        self._read_rest()  # an id must be unique among the unread checks too
        other = self._specs.get(spec.id)
        if other is not None:
            raise RegistryError(
                f"check id {spec.id} is defined twice: in {other.origin} and in {spec.origin}; "
                "ids must be unique"
            )
        self._specs[spec.id] = spec

    def add_function(
        self, fn: CheckFunc, origin: str, sidecar: dict[str, Any] | None = None
    ) -> None:
        marked = getattr(fn, "__ascend_check__", None)
        if not marked:
            raise RegistryError(f"{origin}: {fn!r} is not decorated with @check")
        cid = marked["id"]
        meta = {**(sidecar or {}).get(cid, {}), **{k: v for k, v in marked.items() if k != "id"}}
        self.add(_validated(cid, meta, fn, origin))

    def add_module(
        self, module: ModuleType, origin: str | None = None, sidecar: dict[str, Any] | None = None
    ) -> int:
        """Register every @check function of a module (SIDECAR: its TOML metadata, when already
        read); returns how many."""
        origin = origin or module.__name__
        if sidecar is None:
            sidecar = _sidecar(module)
        found = [
            obj
            for obj in vars(module).values()
            if callable(obj)
            and getattr(obj, "__ascend_check__", None)
            and getattr(obj, "__module__", None) == module.__name__
        ]
        for fn in found:
            self.add_function(fn, origin, sidecar)
        ids = {fn.__ascend_check__["id"] for fn in found}
        stray = set(sidecar) - ids
        if stray:
            raise RegistryError(f"{origin}: metadata for {sorted(stray)} but no such @check")
        return len(found)


def _validated(cid: str, meta: dict[str, Any], fn: CheckFunc, origin: str) -> CheckSpec:
    if not isinstance(cid, str) or not cid.strip():
        raise RegistryError(f"{origin}: a check has an empty id")
    layer = meta.get("layer")
    if not layer:
        raise RegistryError(
            f"check {cid} in {origin} has no layer; give layer= in @check or in its TOML metadata"
        )
    if layer not in LAYERS:
        raise RegistryError(
            f"check {cid} in {origin}: unknown layer {layer!r}; use one of {LAYERS}"
        )
    severity = meta.get("severity", "medium")
    if severity not in SEVERITIES:
        raise RegistryError(f"check {cid} in {origin}: severity {severity!r} not in {SEVERITIES}")
    title = meta.get("title")
    if not title:
        raise RegistryError(f"check {cid} in {origin} has no title")
    unknown = set(meta) - set(ALLOWED_KEYS)
    if unknown:
        raise RegistryError(f"check {cid} in {origin}: unknown metadata keys {sorted(unknown)}")
    evidence = meta.get("evidence") or ()
    if isinstance(evidence, str):
        evidence = (evidence,)
    tags = meta.get("tags") or ()
    if isinstance(tags, str):
        tags = (tags,)
    translations = tuple((k, str(meta[k]).strip()) for k in TRANSLATION_KEYS if meta.get(k))
    translated_from = _translated_from(cid, origin, meta)
    policy_keys = _policy_keys(cid, origin, meta.get("policy"))
    core = meta.get("core", False)
    if not isinstance(core, bool):
        raise RegistryError(f"check {cid} in {origin}: core must be true or false, not {core!r}")
    return CheckSpec(
        cid,
        layer,
        str(title),
        severity,
        str(meta.get("rationale", "")).strip(),
        str(meta.get("remediation", "")).strip(),
        tuple(evidence),
        fn,
        origin,
        tuple(str(t).strip().lower() for t in tags if str(t).strip()),
        translations,
        policy_keys,
        translated_from,
        core,
    )


def _translated_from(cid: str, origin: str, meta: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(("title_zh", digest), …) from the en_digest_<lang> tables of a check's metadata."""
    out: list[tuple[str, str]] = []
    for key in DIGEST_KEYS:
        table = meta.get(key)
        if table is None:
            continue
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise RegistryError(f"check {cid} in {origin}: {key} must map fields to digests")
        lang = key.rsplit("_", 1)[1]
        out.extend((f"{field}_{lang}", digest) for field, digest in sorted(table.items()))
    return tuple(out)


def _policy_keys(cid: str, origin: str, declared: Any) -> tuple[str, ...]:
    """The policy keys a check declares it reads, each one the policy schema knows."""
    from ascend_audit.policy import SCHEMA

    if declared is None:
        return ()
    if isinstance(declared, str):
        declared = [declared]
    if not isinstance(declared, (list, tuple)) or not all(isinstance(k, str) for k in declared):
        raise RegistryError(f"check {cid} in {origin}: policy must be a list of policy keys")
    known = {f"{s}.{k}" for s, keys in SCHEMA.items() for k in keys}
    for key in declared:
        if key not in known and not key.startswith("plugins."):
            raise RegistryError(
                f"check {cid} in {origin}: policy key {key!r} is not in the policy schema "
                "(`ascend-audit policy-keys` lists them; plug-ins use plugins.<name>)"
            )
    return tuple(declared)


def _not_loaded(ctx: Any) -> Any:
    raise RegistryError("catalogue entry: the check's module was not imported")


def _builtin_metadata(layers: frozenset[str] = frozenset(LAYERS)) -> Iterator[tuple[str, Any]]:
    """(module name, its TOML metadata) of each built-in check module of LAYERS. A built-in
    check lives in its layer's directory (checks/operator/...), so only those are read."""
    import ascend_audit.checks as pkg

    for root in pkg.__path__:
        for dirpath, _dirs, files in sorted(os.walk(root)):
            folder = os.path.relpath(dirpath, root).split(os.sep)[0]
            names = sorted(f for f in files if f.endswith(".toml"))
            if names and folder not in LAYERS:
                raise RegistryError(
                    f"{os.path.join(dirpath, names[0])}: check metadata outside a layer's "
                    f"directory (checks/{{{','.join(LAYERS)}}}/)"
                )
            if folder not in layers:
                continue
            for name in names:
                rel = os.path.relpath(os.path.join(dirpath, name[:-5]), root)
                module = f"{pkg.__name__}.{rel.replace(os.sep, '.')}"
                tables = _read_metadata(os.path.join(dirpath, name))
                for cid, meta in tables.items():
                    layer = meta.get("layer") if isinstance(meta, dict) else None
                    if layer is not None and layer != folder:
                        raise RegistryError(
                            f"check {cid} in {module}: layer {layer!r}, but it lives in "
                            f"checks/{folder}/; a built-in check lives in its layer's directory"
                        )
                yield module, tables


def _builtin_catalogue(reg: Registry, layers: frozenset[str] = frozenset(LAYERS)) -> None:
    """Built-in checks of LAYERS from their TOML metadata alone, without importing their
    modules."""
    for module, tables in _builtin_metadata(layers):
        for cid, meta in tables.items():
            reg.add(_validated(cid, dict(meta), _not_loaded, module))


def _builtin_layers(reg: Registry, layers: frozenset[str]) -> None:
    """Import the built-in modules with a check in LAYERS; the other layers' checks become
    catalogue entries when the registry is asked for them."""
    for module, tables in _builtin_metadata(layers):
        reg.add_module(importlib.import_module(module), sidecar=tables)
    rest = frozenset(LAYERS) - layers
    reg.defer(lambda r: _builtin_catalogue(r, rest), complete=layers)


def _builtin_modules() -> Iterable[ModuleType]:
    import pkgutil  # only a run of every layer walks the package

    import ascend_audit.checks as pkg

    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if not info.ispkg:
            yield importlib.import_module(info.name)


ENTRY_POINTS_CAP = 1 << 20  # an entry_points.txt bigger than this is left to importlib.metadata


def _group_may_be_declared(group: str) -> bool:
    """False only when no entry_points.txt that importlib.metadata would read names the group.

    importlib.metadata costs ~30 ms (its import and a parse of every distribution's metadata);
    this looks where its path finder looks (the *.dist-info and *.egg-info entries of each
    sys.path directory, EGG-INFO of an .egg) and says True whenever it cannot be sure: another
    finder that lists distributions, a zip on sys.path, a file it cannot read.
    """
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    needle = group.encode()
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except (FileNotFoundError, PermissionError):
            continue  # importlib.metadata finds nothing there either
        except OSError:
            return True  # a zip, or something else importlib.metadata may read
        egg = root.lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), "rb") as fh:
                    text = fh.read(ENTRY_POINTS_CAP + 1)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
                continue  # importlib.metadata reads these as "no entry points" too
            except OSError:
                return True
            if needle in text or len(text) > ENTRY_POINTS_CAP:
                return True
    return False


def _entry_point_objects() -> Iterable[tuple[str, Any]]:
    if not _group_may_be_declared(ENTRY_POINT_GROUP):
        return
    from importlib.metadata import entry_points

    found = entry_points()
    # Python 3.9's entry_points() takes no group= and returns a dict of groups
    group = (
        found.select(group=ENTRY_POINT_GROUP)
        if hasattr(found, "select")
        else found.get(ENTRY_POINT_GROUP, ())
    )
    for ep in group:
        try:
            yield f"entry point {ep.name} ({ep.value})", ep.load()
        except Exception as exc:
            raise RegistryError(
                f"entry point {ep.name} ({ep.value}) failed to load: {exc}"
            ) from exc


def _load_file(path: str) -> ModuleType:
    name = "ascend_audit_dropin_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RegistryError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # a checks directory is the operator's: loading it writes no __pycache__ into it
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise RegistryError(f"{path}: failed to import: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.dont_write_bytecode = keep
    return module


def load_registry(
    checks_dirs: Iterable[str] = (),
    entry_points: bool = True,
    builtins: bool = True,
    catalogue_only: bool = False,
    layers: Iterable[str] | None = None,
) -> Registry:
    """Built-in checks, then entry-point plug-ins, then drop-in files from --checks-dir.

    With catalogue_only, built-ins come from their metadata files without importing their
    code (enough to list and explain them, and fast); their functions cannot run. With
    layers, only the built-in modules holding a check of those layers are imported; the
    others stay catalogue entries (a run of one layer does not pay for the other two).
    """
    reg = Registry()
    if builtins and catalogue_only:
        _builtin_catalogue(reg)
    elif builtins and layers is not None and not set(LAYERS) <= set(layers):
        _builtin_layers(reg, frozenset(layers))
    elif builtins:
        for module in _builtin_modules():
            reg.add_module(module)
    if entry_points:
        for origin, obj in _entry_point_objects():
            if isinstance(obj, ModuleType):
                reg.add_module(obj, origin)
            else:
                reg.add_function(obj, origin)
    for directory in checks_dirs:
        if not os.path.isdir(directory):
            raise RegistryError(f"--checks-dir {directory}: not a directory")
        for name in sorted(os.listdir(directory)):
            if name.endswith(".py") and not name.startswith("_"):
                path = os.path.join(directory, name)
                reg.add_module(_load_file(path), path)
    return reg
