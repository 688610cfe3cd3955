"""The names the runtime's packages and modules answered for before 0.2.0, importable from their
old places until they are removed, with a warning (docs/releases.md, ADR 0075).

A package's ``__getattr__`` (:func:`._exports.lazy_exports`) or a module's
(:func:`._exports.deprecated_getattr`) loads this module on a name it does not know; the old name
then gives the object its new import gives, and its first use in the process warns once with a
``DeprecationWarning`` naming that import and the version removing it. A generated function's asset
ships this module only when its code uses an old name (``assets/bytecode.py`` reads :data:`TABLES`).
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from typing import Any

#: Where an old name went: (module, its name there, deprecated since, removed in). A module with a
#: leading dot is relative to the owner's package (the owner itself, or the package of a module);
#: the name may be dotted (an attribute of what the module defines).
Moved = tuple[str, str, str, str]

#: Owner (the package or module that exported the name) -> its old names.
TABLES: dict[str, dict[str, Moved]] = {
    "constructs_lib.runtime": {
        "bucket": (".buckets", "bucket", "0.2.0", "1.0.0"),
        "bucket_range": (".buckets", "bucket_range", "0.2.0", "1.0.0"),
        "fingerprint": (".contract", "fingerprint", "0.2.0", "1.0.0"),
        "load_bundled_model": (".contract", "load_bundled_model", "0.2.0", "1.0.0"),
        "ENV_ACCESS_SCOPE": (".environment", "ENV_ACCESS_SCOPE", "0.2.0", "1.0.0"),
        "ENV_CONTRACT_PARAMETER": (".environment", "ENV_CONTRACT_PARAMETER", "0.2.0", "1.0.0"),
        "ENV_MODEL_FINGERPRINT": (".environment", "ENV_MODEL_FINGERPRINT", "0.2.0", "1.0.0"),
        "ENV_MODEL_PATH": (".environment", "ENV_MODEL_PATH", "0.2.0", "1.0.0"),
        "ENV_TABLE_NAME": (".environment", "ENV_TABLE_NAME", "0.2.0", "1.0.0"),
        "MODEL_FILE": (".environment", "MODEL_FILE", "0.2.0", "1.0.0"),
        "ContractBreakError": (".exceptions", "ContractBreakError", "0.2.0", "1.0.0"),
        "ContractUnavailableError": (".exceptions", "ContractUnavailableError", "0.2.0", "1.0.0"),
        "ForeignItemError": (".exceptions", "ForeignItemError", "0.2.0", "1.0.0"),
        "IdempotencyTokenConflictError": (".exceptions", "IdempotencyTokenConflictError", "0.2.0", "1.0.0"),
        "ImageOmittedError": (".exceptions", "ImageOmittedError", "0.2.0", "1.0.0"),
        "IndexNotReadyError": (".exceptions", "IndexNotReadyError", "0.2.0", "1.0.0"),
        "InvalidConditionError": (".exceptions", "InvalidConditionError", "0.2.0", "1.0.0"),
        "OutOfScopeError": (".exceptions", "OutOfScopeError", "0.2.0", "1.0.0"),
        "RedactionError": (".exceptions", "RedactionError", "0.2.0", "1.0.0"),
        "SettingsError": (".exceptions", "SettingsError", "0.2.0", "1.0.0"),
        "TrafficInsightError": (".exceptions", "TrafficInsightError", "0.2.0", "1.0.0"),
        "UnknownAccessPatternError": (".exceptions", "UnknownAccessPatternError", "0.2.0", "1.0.0"),
        "UnknownAttributeError": (".exceptions", "UnknownAttributeError", "0.2.0", "1.0.0"),
        "UnknownFieldError": (".exceptions", "UnknownFieldError", "0.2.0", "1.0.0"),
        "UpdateRejectedError": (".exceptions", "UpdateRejectedError", "0.2.0", "1.0.0"),
        "escape": (".key_segments", "escape", "0.2.0", "1.0.0"),
        "unescape": (".key_segments", "unescape", "0.2.0", "1.0.0"),
        "composite_key": (".keys", "composite_key", "0.2.0", "1.0.0"),
        "entity_key": (".keys", "entity_key", "0.2.0", "1.0.0"),
        "split_composite_key": (".keys", "split_composite_key", "0.2.0", "1.0.0"),
        "AuditSpec": (".patterns.audit", "AuditSpec", "0.2.0", "1.0.0"),
        "CounterSpec": (".patterns.counter", "CounterSpec", "0.2.0", "1.0.0"),
        "ShardSizing": (".patterns.counter", "ShardSizing", "0.2.0", "1.0.0"),
        "derive_shards": (".patterns.counter", "derive_shards", "0.2.0", "1.0.0"),
        "Finding": (".stats", "Finding", "0.2.0", "1.0.0"),
        "RecordingClient": (".stats", "RecordingClient", "0.2.0", "1.0.0"),
        "TrafficRecord": (".stats", "TrafficRecord", "0.2.0", "1.0.0"),
        "TrafficRecorder": (".stats", "TrafficRecorder", "0.2.0", "1.0.0"),
        "TrafficReport": (".stats", "TrafficReport", "0.2.0", "1.0.0"),
        "epoch_seconds": (".ttl", "epoch_seconds", "0.2.0", "1.0.0"),
        "expiry": (".ttl", "expiry", "0.2.0", "1.0.0"),
        "is_ulid": (".ulid", "is_ulid", "0.2.0", "1.0.0"),
        "ulid_timestamp": (".ulid", "ulid_timestamp", "0.2.0", "1.0.0"),
        "AT": (".versions", "AT", "0.2.0", "1.0.0"),
        "HASH_V": (".versions", "HASH_V", "0.2.0", "1.0.0"),
        "SortKeyVersions": (".versions", "SortKeyVersions", "0.2.0", "1.0.0"),
    },
    "constructs_lib.runtime.cursors": {
        "CursorCodec": (".cursors", "CursorSigner", "0.2.0", "1.0.0"),
    },
    "constructs_lib.runtime.items": {
        "ItemCodec": (".items", "ItemMapper", "0.2.0", "1.0.0"),
        "item_size": (".values", "item_size", "0.2.0", "1.0.0"),
    },
    "constructs_lib.runtime.patterns.backfill": {
        "Backfill": (".", "BackfillWorker", "0.2.0", "1.0.0"),
        "ENV_SPEC": ("...environment", "ENV_BACKFILL_SPEC", "0.2.0", "1.0.0"),
        "metrics_line": (".jobs", "metrics_line", "0.2.0", "1.0.0"),
        "CHECKPOINT_PREFIX": (".worker", "CHECKPOINT_PREFIX", "0.2.0", "1.0.0"),
    },
    "constructs_lib.runtime.stats": {
        "OPERATIONS": (".", "OPERATION_LABELS", "0.2.0", "1.0.0"),
    },
}

_warned: set[str] = set()


def anchor(owner: str) -> str:
    """The package a relative module of ``owner``'s table is resolved in (as its own imports are)."""
    module = sys.modules.get(owner)
    return owner if module is None or hasattr(module, "__path__") else owner.rpartition(".")[0]


def message(owner: str, name: str, moved: Moved) -> str:
    """What the first use of ``owner.name`` says: since when, the version removing it, what to import."""
    from importlib.util import resolve_name

    module, attribute, since, removed_in = moved
    module = resolve_name(module, anchor(owner)) if module.startswith(".") else module
    head = attribute.partition(".")[0]
    instead = (f"use `from {module} import {head}`" if attribute == name
               else f"it is now {attribute}: `from {module} import {head}`")
    return f"{owner}.{name} is deprecated since constructs_lib {since} and will be removed in {removed_in}; {instead}"


def _caller() -> int:
    """The ``stacklevel`` of the code that used the old name: the first frame outside this module,
    ``_exports`` and the ``__getattr__`` functions answering for it."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and (frame.f_code.co_name in ("__getattr__", "missing")
                                        or frame.f_globals.get("__name__") == __name__):
        frame, level = frame.f_back, level + 1
    return level


def value(owner: str, name: str, moved: Moved) -> Any:
    """The object ``owner.name`` is now; its first use in this process warns (``DeprecationWarning``)."""
    found: Any = import_module(moved[0], anchor(owner))
    for part in moved[1].split("."):
        found = getattr(found, part)
    if f"{owner}.{name}" not in _warned:
        _warned.add(f"{owner}.{name}")
        warnings.warn(message(owner, name, moved), DeprecationWarning, stacklevel=_caller())
    return found


def moved(owner: str, name: str) -> Any:
    """``owner.name`` if it is one of :data:`TABLES`, else ``AttributeError`` as for any unknown name."""
    entry = TABLES.get(owner, {}).get(name)
    if entry is None:
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    return value(owner, name, entry)
