"""Model diff: classify each change between a deployed model and the current one.

Levels: ``safe`` (deploy as is), ``backfill`` (existing items need their derived keys
rewritten) and ``breaking`` (synth refuses it unless acknowledged by its id). Each change claims
the parts of the key schema it accounts for; any other difference there is reported as a
breaking ``unclassified`` change (:mod:`.coverage`), so no change the fingerprint sees is missed.
Secondary-index changes also yield a rollout plan of single GSI creations/deletions, since
CloudFormation accepts at most one per table update. Pure: no I/O. Rationale:
docs/adr/0110-model-evolution.md, docs/adr/0038-model-diff-is-complete.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..model.entity import SHARD
from ..model.fields import Field
from ..model.indexes import TABLE
from ..model.model import Model
from ..model.resolved import ResolvedEntity, ResolvedIndex, ResolvedIndexKey
from . import coverage, field_changes
from .exceptions import BreakingChangeError  # importable from here too
from .levels import BACKFILL, BREAKING, LEVELS, SAFE, Level

#: ``emit(level, rule, subject, message, entity=..., index=..., covers=...)`` records one change;
#: ``covers`` lists the key-schema paths (:data:`.coverage.Path`) it accounts for.
Emit = Callable[..., None]


@dataclass(frozen=True)
class Change:
    """One classified difference.

    ``id`` is stable (``"<rule>:<subject>"``) and is what an acknowledgement names.
    """

    id: str
    level: Level
    rule: str
    message: str
    entity: str | None = None
    index: str | None = None

    def __str__(self) -> str:
        return f"[{self.level}] {self.id}: {self.message}"


@dataclass(frozen=True)
class GsiStep:
    """One deployment's GSI change: ``create`` or ``delete`` of one index."""

    action: Literal["create", "delete"]
    index: ResolvedIndex
    reason: str

    def __str__(self) -> str:
        return f"{self.action} GSI {self.index.name!r} ({self.reason})"


@dataclass(frozen=True)
class ModelDiff:
    """Every change between two models plus the GSI rollout from the deployed indexes."""

    changes: tuple[Change, ...]
    steps: tuple[GsiStep, ...] = ()
    #: (entity, index) pairs whose derived keys existing items must get rewritten.
    backfill: tuple[tuple[str, str], ...] = ()
    acknowledged: frozenset[str] = field(default_factory=frozenset)

    @property
    def empty(self) -> bool:
        return not self.changes and not self.steps

    def at(self, level: Level) -> list[Change]:
        return [c for c in self.changes if c.level == level]

    @property
    def unacknowledged(self) -> list[Change]:
        """Breaking changes not acknowledged: synth refuses these."""
        return [c for c in self.at(BREAKING) if c.id not in self.acknowledged]

    @property
    def backfill_indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(index for _, index in self.backfill))

    def check(self, *, where: str = "model") -> None:
        """Raise :class:`BreakingChangeError` listing every unacknowledged breaking change."""
        bad = self.unacknowledged
        if bad:
            lines = "\n".join(f"  - {c.id}: {c.message}" for c in bad)
            raise BreakingChangeError(
                f"{where}: {len(bad)} breaking change(s) against the model lock:\n{lines}\n"
                "Acknowledge each by id once you have planned for it (context "
                "'constructs_lib:acknowledge' or SingleTable(acknowledge=[...])), or revert it."
            )

    def render(self) -> str:
        """Human-readable diff and rollout plan."""
        if self.empty:
            return "no model changes against the lock\n"
        out = []
        for level in LEVELS:
            for change in self.at(level):
                ack = " (acknowledged)" if level == BREAKING and change.id in self.acknowledged else ""
                out.append(f"  [{level}]{ack} {change.id}: {change.message}")
        if self.steps:
            out.append(f"  rollout: {len(self.steps)} deployment(s), one GSI change each:")
            for n, step in enumerate(self.steps, 1):
                out.append(f"    step {n}: {step}")
            out.append("    after each successful deploy: python -m constructs_lib lock --advance <app>")
        if self.backfill:
            pairs = ", ".join(f"{e}/{i}" for e, i in self.backfill)
            out.append(f"  backfill: rewrite derived keys of existing items for {pairs}")
        return "\n".join(out) + "\n"


# Physical index identity ------------------------------------------------------------------------
def index_shape(index: ResolvedIndex) -> tuple[object, ...]:
    """What CloudFormation cannot change in place: kind, key attributes, projection."""
    return (index.kind, index.pk_attribute, index.sk_attribute, index.sort_key, index.projection)


def plan_gsi_steps(
    deployed: Sequence[ResolvedIndex], target: Sequence[ResolvedIndex], *, replace: Iterable[str] = ()
) -> tuple[GsiStep, ...]:
    """Ordered single-GSI steps turning ``deployed`` GSIs into ``target`` GSIs.

    Removals come first (they free GSI slots), then each acknowledged replacement (named in
    ``replace``) as delete + create, then creations, each in declaration order. A GSI whose
    shape changed and is not in ``replace`` stays as deployed (the change is breaking).
    """
    now = {i.name: i for i in deployed if i.kind == "GSI"}
    want = {i.name: i for i in target if i.kind == "GSI"}
    replace = set(replace)
    steps: list[GsiStep] = []
    for name, index in now.items():
        if name not in want:
            steps.append(GsiStep("delete", index, "removed from the model"))
    for name, index in want.items():
        if name in now and index_shape(now[name]) != index_shape(index) and name in replace:
            steps.append(GsiStep("delete", now[name], "replaced: key attributes or projection changed"))
            steps.append(GsiStep("create", index, "replaced: key attributes or projection changed"))
    for name, index in want.items():
        if name not in now:
            steps.append(GsiStep("create", index, "new index"))
    return tuple(steps)


def apply_step(deployed: Sequence[ResolvedIndex], step: GsiStep) -> tuple[ResolvedIndex, ...]:
    """The deployed index list after ``step``."""
    kept = [i for i in deployed if i.name != step.index.name]
    return tuple(kept + [step.index]) if step.action == "create" else tuple(kept)


def synthesized_gsis(
    deployed: Sequence[ResolvedIndex], target: Sequence[ResolvedIndex], steps: Sequence[GsiStep],
) -> list[ResolvedIndex]:
    """The GSIs one template may carry: the deployed ones (current definitions where the
    shape is unchanged) with at most the first step applied, in the target's order."""
    after = list(apply_step(deployed, steps[0]) if steps else deployed)
    present = {i.name: i for i in after if i.kind == "GSI"}
    want = {i.name: i for i in target if i.kind == "GSI"}
    out = [want[n] if n in want and index_shape(want[n]) == index_shape(present[n]) else present[n]
           for n in want if n in present]
    out += [i for n, i in present.items() if n not in want]
    return out


# Classification -----------------------------------------------------------------------------------
_MODEL_ATTRIBUTES = {"pk_attribute": "table-attribute", "entity_attribute": "table-attribute",
                     "ttl_attribute": "ttl-attribute", "tenant_field": "tenant-field"}


def diff_models(
    old: Model,
    new: Model,
    *,
    deployed_indexes: Sequence[ResolvedIndex] | None = None,
    acknowledge: Iterable[str] = (),
) -> ModelDiff:
    """Classify every change from ``old`` (as locked) to ``new`` and plan the GSI rollout.

    ``deployed_indexes`` are the indexes the table has now (default: ``old``'s); they differ
    from ``old``'s while a rollout is under way. Any difference in the key schema (what the
    fingerprint hashes) that no rule accounts for is reported as a breaking ``unclassified``
    change naming its path.
    """
    acknowledged = frozenset(acknowledge)
    changes: list[Change] = []
    claims: list[coverage.Path] = []
    backfill: list[tuple[str, str]] = []

    def add(level: Level, rule: str, subject: str, message: str, *, covers: Iterable[coverage.Path] = (),
            **kw: str | None) -> None:
        changes.append(Change(f"{rule}:{subject}", level, rule, message, **kw))
        claims.extend(covers)

    for attr, rule in _MODEL_ATTRIBUTES.items():
        a, b = getattr(old, attr), getattr(new, attr)
        if a != b:
            add(BREAKING, rule, attr, f"{attr} changes from {a!r} to {b!r}; existing items keep the old one",
                covers=[(attr,)])
    old_sk = old.sk_attribute if old.has_sort_key else None
    new_sk = new.sk_attribute if new.has_sort_key else None
    if old_sk != new_sk:
        add(BREAKING, "table-attribute", "sk_attribute",
            f"table sort key changes from {old_sk!r} to {new_sk!r}; a table's key schema is fixed at creation",
            covers=[("sk_attribute",)])

    _classify_indexes(old, new, add)
    for name, entity in new.entities.items():
        if name not in old.entities:
            add(SAFE, "entity-added", name, f"new entity {name!r} (no existing items)", entity=name,
                covers=[("entities", name)])
            continue
        _classify_entity(new, old.entities[name], entity, add, backfill)
    for name in old.entities:
        if name not in new.entities:
            add(BREAKING, "entity-removed", name,
                f"entity {name!r} is removed; its existing items stay in the table and no longer parse "
                "as any entity", entity=name, covers=[("entities", name)])
    _classify_patterns(old, new, deployed_indexes, add)
    for path, a, b in coverage.unexplained(old, new, claims):
        where = coverage.render(path)
        add(BREAKING, "unclassified", where,
            f"the key schema (what the model fingerprint hashes) differs at {where}: "
            f"{_json_text(a)} -> {_json_text(b)}; no rule classifies this difference, so it counts as breaking: "
            "check what it does to stored items, then acknowledge this id",
            entity=path[1] if path[0] == "entities" and len(path) > 1 else None,
            index=path[1] if path[0] == "indexes" and len(path) > 1 else None)

    deployed = list(deployed_indexes) if deployed_indexes is not None else list(old.indexes.values())
    replace = [c.index for c in changes if c.rule == "gsi-changed" and c.id in acknowledged and c.index]
    steps = plan_gsi_steps(deployed, list(new.indexes.values()), replace=replace)
    return ModelDiff(tuple(changes), steps, tuple(dict.fromkeys(backfill)), acknowledged)


def _json_text(value: str | None) -> str:
    """A leaf's JSON as Python shows it (``['RED', 'BLUE']``), or ``(absent)``."""
    return "(absent)" if value is None else repr(json.loads(value))


def _keys(entity: ResolvedEntity) -> Mapping[str, ResolvedIndexKey]:
    return entity.indexes


def _classify_indexes(old: Model, new: Model, emit: Emit) -> None:
    for name, index in new.indexes.items():
        before = old.indexes.get(name)
        covers: list[coverage.Path] = [("indexes", name)]
        if before is None:
            if index.kind == "LSI":
                emit(BREAKING, "lsi-added", name, f"LSI {name!r} is new; LSIs can only be created with the table",
                     index=name, covers=covers)
            else:
                emit(SAFE, "gsi-added", name, f"new GSI {name!r} (created by its own rollout step)", index=name,
                     covers=covers)
        elif index_shape(before) != index_shape(index):
            if index.kind == "LSI" or before.kind == "LSI":
                emit(BREAKING, "lsi-changed", name,
                     f"LSI {name!r} changes shape; LSIs are fixed at table creation", index=name, covers=covers)
            else:
                emit(BREAKING, "gsi-changed", name,
                     f"GSI {name!r} changes key attributes or projection ({_shape_text(before)} -> "
                     f"{_shape_text(index)}); CloudFormation cannot modify a GSI in place. Prefer declaring it "
                     f"under a new name (replace-by-rename: the new index is created and backfilled while "
                     f"{name!r} keeps serving, then {name!r} is removed); acknowledging this id instead deletes "
                     "and recreates it, leaving its patterns unavailable in between", index=name, covers=covers)
    for name, index in old.indexes.items():
        if name in new.indexes:
            continue
        users = [p.name for p in old.access_patterns.values() if p.index == name]
        # The entities' keys in it go with it (their stale key attributes index nothing).
        covers = [("indexes", name)]
        covers += [("entities", e.name, "indexes", name) for e in old.entities.values() if name in e.indexes]
        if index.kind == "LSI":
            emit(BREAKING, "lsi-removed", name, f"LSI {name!r} is removed; LSIs are fixed at table creation",
                 index=name, covers=covers)
        elif users:
            emit(BREAKING, "gsi-removed", name,
                 f"GSI {name!r} is removed but deployed callers use it through pattern(s) {users!r}; "
                 "deploy the callers off it first", index=name, covers=covers)
        else:
            emit(SAFE, "gsi-removed", name, f"GSI {name!r} is removed (no pattern used it)", index=name,
                 covers=covers)


def _shape_text(index: ResolvedIndex) -> str:
    proj = "INCLUDE " + ",".join(index.projection) if isinstance(index.projection, tuple) else index.projection
    return f"{index.pk_attribute}/{index.sk_attribute} {proj}"


def _key_inputs(entity: ResolvedEntity) -> tuple[set[str], dict[str, set[str]]]:
    """The fields of the table key, and of each index key (templates, sparse rules, shard_by)."""
    index_inputs: dict[str, set[str]] = {}
    for index_name, key in _keys(entity).items():
        inputs = {f for _, t in key.written for f in t.fields}
        inputs |= {key.when_present} if key.when_present else set()
        inputs |= set(key.when_equals)
        if key.sharded:  # the shard is derived from shard_by, not a field
            inputs = (inputs - {SHARD}) | set(key.shard_by)
        index_inputs[index_name] = inputs
    return set(entity.table_key_fields), index_inputs


def _classify_entity(
    new_model: Model, old: ResolvedEntity, new: ResolvedEntity, emit: Emit, backfill: list[tuple[str, str]]
) -> None:
    name = new.name
    at = ("entities", name)
    if (old.pk, old.sk) != (new.pk, new.sk):
        emit(BREAKING, "table-key-template", name,
             f"entity {name!r} table key changes from {old.pk!r}/{old.sk!r} to {new.pk!r}/{new.sk!r}; existing "
             "items cannot be found under the new key (copy them to new keys, then acknowledge)", entity=name,
             covers=[(*at, "pk"), (*at, "sk")])
    if old.version_attribute != new.version_attribute:
        emit(BREAKING, "version-attribute", name,
             f"entity {name!r} version attribute changes from {old.version_attribute!r} to "
             f"{new.version_attribute!r}; optimistic locking of existing items breaks", entity=name,
             covers=[(*at, "version_attribute")])
    _classify_fields(old, new, emit, backfill)
    _classify_attributes(old, new, emit)
    if old.typical_item_bytes != new.typical_item_bytes:
        emit(SAFE, "item-size-hint", name,
             f"entity {name!r} typical_item_bytes changes from {old.typical_item_bytes!r} to "
             f"{new.typical_item_bytes!r} (capacity estimates only; stored items and keys are unaffected)",
             entity=name)
    for index_name, key in _keys(new).items():
        before_key = _keys(old).get(index_name)
        subject = f"{name}/{index_name}"
        path = (*at, "indexes", index_name)
        if before_key is None:
            emit(BACKFILL, "index-key-added", subject,
                 f"existing {name!r} items get keys in {index_name!r} ({key.pk!r}/{key.sk!r})",
                 entity=name, index=index_name, covers=[path])
            backfill.append((name, index_name))
            continue
        if (before_key.pk, before_key.sk) != (key.pk, key.sk):
            emit(BACKFILL, "index-template-changed", subject,
                 f"{name!r} keys in {index_name!r} change from {before_key.pk!r}/{before_key.sk!r} to "
                 f"{key.pk!r}/{key.sk!r}", entity=name, index=index_name, covers=[(*path, "pk"), (*path, "sk")])
            backfill.append((name, index_name))
        if (before_key.shards, before_key.shard_by) != (key.shards, key.shard_by):
            emit(BACKFILL, "index-shards-changed", subject,
                 f"{name!r} keys in {index_name!r} change shards from {before_key.shards!r} (by "
                 f"{before_key.shard_by!r}) to {key.shards!r} (by {key.shard_by!r}); existing items carry their "
                 "old shard in the key until rewritten", entity=name, index=index_name,
                 covers=[(*path, "shards"), (*path, "shard_by")])
            backfill.append((name, index_name))
        if (before_key.when_present, before_key.when_equals) != (key.when_present, key.when_equals):
            emit(BACKFILL, "sparse-rule-changed", subject,
                 f"{name!r} membership of {index_name!r} changes (when_present {before_key.when_present!r} -> "
                 f"{key.when_present!r}, when_equals {before_key.when_equals!r} -> {key.when_equals!r})",
                 entity=name, index=index_name, covers=[(*path, "when_present"), (*path, "when_equals")])
            backfill.append((name, index_name))
    for index_name in _keys(old):
        if index_name not in _keys(new) and index_name in new_model.indexes:
            emit(BACKFILL, "index-key-removed", f"{name}/{index_name}",
                 f"existing {name!r} items leave {index_name!r} (their key attributes are removed)",
                 entity=name, index=index_name, covers=[(*at, "indexes", index_name)])
            backfill.append((name, index_name))
    added_required = [r for r in new.required if r not in old.required]
    if added_required:
        emit(SAFE, "required-added", name,
             f"entity {name!r} now requires {added_required!r} on put; existing items may lack them", entity=name)


def _classify_fields(old: ResolvedEntity, new: ResolvedEntity, emit: Emit, backfill: list[tuple[str, str]]) -> None:
    """Each declared field added, removed or changed (:mod:`.field_changes`)."""
    name = new.name
    old_fields: dict[str, Field] = dict(old.fields)
    new_fields: dict[str, Field] = dict(new.fields)
    (old_table, old_inputs), (new_table, new_inputs) = _key_inputs(old), _key_inputs(new)
    for fname in [*new_fields, *(f for f in old_fields if f not in new_fields)]:
        indexes = [i for i, inputs in {**old_inputs, **new_inputs}.items()
                   if fname in inputs or fname in old_inputs.get(i, ())]
        found = field_changes.field_changes(
            f"{name}.{fname}", old_fields.get(fname), new_fields.get(fname),
            table_key=_table_key_text(old, new) if fname in old_table | new_table else None, indexes=indexes,
            attribute=old.attributes.get(fname), now_attribute=new.attributes.get(fname),
        )
        path = ("entities", name, "fields", fname)
        for change in found:
            emit(change.level, change.rule, f"{name}.{fname}", change.message, entity=name,
                 covers=[(*path, key) for key in change.covers] or [path])
            if change.reencodes:
                backfill.extend((name, i) for i in indexes if i in new_inputs)


def _table_key_text(old: ResolvedEntity, new: ResolvedEntity) -> str:
    """``'TEAM#{kind}#{team_id}'/'TEAM'`` (``old -> new`` when the templates changed)."""
    before, after = f"{old.pk!r}/{old.sk!r}", f"{new.pk!r}/{new.sk!r}"
    return after if before == after else f"{before} -> {after}"


def _classify_attributes(old: ResolvedEntity, new: ResolvedEntity, emit: Emit) -> None:
    """Declared non-field attributes type generated code and docs only; the runtime stores them
    as given, so every change is safe. One that became (or stopped being) a field is a field change."""
    name = new.name
    for attr, kind in new.attributes.items():
        before = old.attributes.get(attr)
        if before is None and attr not in old.fields:
            emit(SAFE, "attribute-added", f"{name}.{attr}", f"entity {name!r} declares attribute {attr!r} ({kind})",
                 entity=name)
        elif before is not None and before != kind:
            emit(SAFE, "attribute-kind", f"{name}.{attr}",
                 f"attribute {name}.{attr} changes kind from {before} to {kind} (generated code and docs only; "
                 "stored values are not checked)", entity=name)
    for attr in old.attributes:
        if attr not in new.attributes and attr not in new.fields:
            emit(SAFE, "attribute-removed", f"{name}.{attr}", f"entity {name!r} no longer declares attribute {attr!r}",
                 entity=name)


def _classify_patterns(old: Model, new: Model, deployed: Sequence[ResolvedIndex] | None, emit: Emit) -> None:
    live = {i.name for i in (deployed if deployed is not None else old.indexes.values())}
    for name, pattern in new.access_patterns.items():
        before = old.access_patterns.get(name)
        if before is not None and before.to_dict() == pattern.to_dict():
            continue
        waits = pattern.index != TABLE and pattern.index not in live
        note = f" (refused until its index {pattern.index!r} is created)" if waits else ""
        rule = "pattern-added" if before is None else "pattern-changed"
        emit(SAFE, rule, name, f"access pattern {name!r} on {pattern.index!r}{note}")
    for name in old.access_patterns:
        if name not in new.access_patterns:
            emit(SAFE, "pattern-removed", name, f"access pattern {name!r} is removed")
