"""Design warnings: model shapes that are legal but risky (hot partitions, identical keys).

``Model.warnings()`` returns them; ``SingleTable`` shows them as synth-time annotations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

from .entity import SHARD
from .exceptions import ModelWarning
from .fields import Field
from .overlap import KeyCondition, domains, index_templates
from .resolved import ResolvedEntity, ResolvedIndex
from .templates import KeyTemplate


class _Model(Protocol):
    """A ``Model`` (its entities and indexes are read)."""

    @property
    def entities(self) -> Mapping[str, ResolvedEntity]: ...

    @property
    def indexes(self) -> Mapping[str, ResolvedIndex]: ...

_LOW_CARDINALITY_NAME = re.compile(
    r"^(status|state|type|kind|category|flag|enabled|active|deleted|gender|country|level|tier|"
    r"is_\w+|has_\w+|\w+_status|\w+_state|\w+_type|\w+_flag)$"
)


def design_warnings(model: _Model) -> list[ModelWarning]:
    """Design smells that are legal but risky, e.g. low-cardinality partition keys."""
    out: list[ModelWarning] = []
    for entity in model.entities.values():
        candidates = [("table pk", entity.pk_template)]
        for index_name, key in entity.indexes.items():
            if key.kind == "GSI":  # an LSI's partition key is the table's, a candidate already
                candidates.append((f"index {index_name!r} pk", key.pk_template))
        for part, template in candidates:
            where = f"entity {entity.name!r} {part}"
            if template.is_constant:
                out.append(ModelWarning(
                    "ConstantPartitionKey", where,
                    f"{where} template {template.source!r} is a constant: every item shares one partition "
                    "(1,000 WCU / 3,000 RCU). Acceptable only for a small sparse index; otherwise add a "
                    f"high-cardinality field{_shard_remedy(part, template)}.",
                ))
                continue
            low = [p for p in template.placeholders if _low_cardinality(entity, p.field, p.bucket)]
            if len(low) == len(template.placeholders):
                names = ", ".join(str(p) for p in low)
                out.append(ModelWarning(
                    "LowCardinalityPartitionKey", where,
                    f"{where} template {template.source!r} is built only from low-cardinality input(s) "
                    f"{names} (a status/enum/flag/date): a few partitions take all the traffic and will "
                    "throttle. Add a high-cardinality component (an id)"
                    f"{_shard_remedy(part, template)}, or keep the index sparse and small.",
                ))
    for where, message in _identical_keys(model.entities, model.indexes):
        out.append(ModelWarning("IdenticalIndexKeys" if where.startswith("index") else "IdenticalTableKeys",
                                where, message))
    return out


def _low_cardinality(entity: ResolvedEntity, field: str, bucket: str | None) -> bool:
    spec: Field = entity.field(field)
    return bool(
        spec.choices or spec.kind == "date" or bucket is not None or _LOW_CARDINALITY_NAME.match(field)
    )


def _shard_remedy(part: str, template: KeyTemplate) -> str:
    """The write-sharding advice of a hot-partition warning: concrete for an index key."""
    if not part.startswith("index"):
        return ""  # a table key cannot be sharded without changing every get of the item
    return (
        f", or write-shard the index key: IndexKey(pk='{template.source}#{{{SHARD}}}', sk=..., shards=N, "
        "shard_by='<an id field>') spreads writes over N partitions and a query reads all N, merged in "
        "sort-key order (size N with constructs_lib.runtime.sharding.index_shards(writes_per_second))"
    )


def _identical_keys(entities: Mapping[str, ResolvedEntity], indexes: Mapping[str, ResolvedIndex]) -> list[tuple[str, str]]:
    """(where, message) for each pair of entities whose keys in the table or one index may be
    identical: their items share one key there, so a read by that key cannot tell them apart."""
    out = []
    places: list[ResolvedIndex | None] = [None, *indexes.values()]
    for index in places:
        members = [(e, t) for e in entities.values() if (t := index_templates(e, index)) is not None]
        for i, (a, (a_pk, a_sk)) in enumerate(members):
            for b, (b_pk, b_sk) in members[i + 1:]:
                if not _may_be_identical(a, a_pk, a_sk, b, b_pk, b_sk):
                    continue
                where = f"{'table' if index is None else f'index {index.name!r}'}: entities {a.name!r} and {b.name!r}"
                keys = f"{a.name} {_show(a_pk, a_sk)} and {b.name} {_show(b_pk, b_sk)}"
                if index is None:
                    consequence = "a put of one overwrites the other's item"
                else:
                    consequence = ("an item of one and an item of the other may share one key there, so a read by "
                                   "that key finds both (the client filters on the entity attribute)")
                out.append((where, (
                    f"{where}: the keys {keys} can be identical for some values; {consequence}. Give each a distinct "
                    "literal in one segment, e.g. 'ORDER#{id}' vs 'REFUND#{id}'."
                )))
    return out


def _may_be_identical(
    a: ResolvedEntity, a_pk: KeyTemplate, a_sk: KeyTemplate | None,
    b: ResolvedEntity, b_pk: KeyTemplate, b_sk: KeyTemplate | None,
) -> bool:
    sk_a = None if a_sk is None else domains(a, a_sk, stored=True)
    sk_b = None if b_sk is None else domains(b, b_sk, stored=True)
    n = None if sk_a is None else len(sk_a)
    return KeyCondition(domains(a, a_pk, stored=True), sk_a, n or 1, n).admits(domains(b, b_pk, stored=True), sk_b)


def _show(pk: KeyTemplate, sk: KeyTemplate | None) -> str:
    return repr(pk.source if sk is None else f"{pk.source} / {sk.source}")
