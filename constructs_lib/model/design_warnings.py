"""Design warnings: model shapes that are legal but risky (hot partitions, identical keys).

``Model.warnings()`` returns them; ``SingleTable`` shows them as synth-time annotations and the
model docs list them, from one computation per model. Identical keys are checked only between
entities whose key shapes allow it: docs/adr/0056-synth-cost.md.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from .entity import SHARD
from .exceptions import ModelWarning
from .fields import Field
from .overlap import Domain, KeyCondition, domains, index_templates
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


#: Attribute keeping a model's warnings with the resolved entities and indexes they were computed from.
_KEPT = "_constructs_lib_design_warnings"
_Inputs = tuple[tuple[ResolvedEntity, ...], tuple[ResolvedIndex, ...]]


def design_warnings(model: _Model) -> list[ModelWarning]:
    """Design smells that are legal but risky, e.g. low-cardinality partition keys.

    Computed once per model: the result is kept on ``model`` with the (frozen) resolved entities
    and indexes it was computed from, and reused while the model still holds those same objects."""
    inputs: _Inputs = (tuple(model.entities.values()), tuple(model.indexes.values()))
    kept = getattr(model, _KEPT, None)
    if kept is not None and _same(kept[0], inputs):
        return list(kept[1])
    out = _design_warnings(model)
    try:
        setattr(model, _KEPT, (inputs, tuple(out)))
    except AttributeError:  # a read-only stand-in for a model: nothing is kept
        pass
    return out


def _same(a: _Inputs, b: _Inputs) -> bool:
    return all(len(x) == len(y) and all(p is q for p, q in zip(x, y, strict=True)) for x, y in zip(a, b, strict=True))


def _design_warnings(model: _Model) -> list[ModelWarning]:
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
    identical: their items share one key there, so a read by that key cannot tell them apart.
    Pairs in entity order, as an all-pairs loop finds them; only :func:`candidate_pairs` are checked."""
    out = []
    places: list[ResolvedIndex | None] = [None, *indexes.values()]
    for index in places:
        members = [(e, t) for e in entities.values() if (t := index_templates(e, index)) is not None]
        stored = [(domains(e, pk, stored=True), None if sk is None else domains(e, sk, stored=True))
                  for e, (pk, sk) in members]
        for i, j in candidate_pairs([t for _, t in members]):
            (a, (a_pk, a_sk)), (b, (b_pk, b_sk)) = members[i], members[j]
            if not _may_be_identical(*stored[i], *stored[j]):
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


def candidate_pairs(keys: Sequence[tuple[KeyTemplate, KeyTemplate | None]]) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, in order, of ``keys`` ((pk, sk) templates) that
    :func:`_may_be_identical` does not refute by their shape alone: as many pk segments, as many
    sk segments when both have a sort key, and the same text wherever both have a literal segment
    (a literal's domain is its one text). Keys are grouped by that shape (segment counts and
    literal positions) and each two compatible groups joined on their common literal positions,
    so the cost is the number of groups squared times the keys, plus the pairs returned."""
    groups: dict[tuple[int, int | None, tuple[int, ...]], list[int]] = {}
    texts: list[tuple[str | None, ...]] = []
    for i, (pk, sk) in enumerate(keys):
        segments = pk.segments if sk is None else pk.segments + sk.segments  # sk positions follow pk's
        texts.append(tuple(s if isinstance(s, str) else None for s in segments))
        literal = tuple(p for p, s in enumerate(segments) if isinstance(s, str))
        groups.setdefault((len(pk.segments), None if sk is None else len(sk.segments), literal), []).append(i)
    pairs: list[tuple[int, int]] = []
    shapes = list(groups)
    for x, (pk_n, sk_n, literal) in enumerate(shapes):
        for other_pk_n, other_sk_n, other_literal in shapes[x:]:
            if pk_n != other_pk_n or (sk_n is not None and other_sk_n is not None and sk_n != other_sk_n):
                continue
            common = sorted(set(literal) & set(other_literal))
            by_text: dict[tuple[str | None, ...], list[int]] = {}
            for i in groups[pk_n, sk_n, literal]:
                by_text.setdefault(tuple(texts[i][p] for p in common), []).append(i)
            if other_literal == literal and other_sk_n == sk_n:  # the group with itself
                pairs += [pair for same in by_text.values() for pair in itertools.combinations(same, 2)]
                continue
            for j in groups[other_pk_n, other_sk_n, other_literal]:
                pairs += [(min(i, j), max(i, j)) for i in by_text.get(tuple(texts[j][p] for p in common), ())]
    return sorted(pairs)


def _may_be_identical(
    a_pk: tuple[Domain, ...], a_sk: tuple[Domain, ...] | None, b_pk: tuple[Domain, ...], b_sk: tuple[Domain, ...] | None,
) -> bool:
    """Whether keys with these stored segment domains may be equal (the pair's order does not matter)."""
    n = None if a_sk is None else len(a_sk)
    return KeyCondition(a_pk, a_sk, n or 1, n).admits(b_pk, b_sk)


def _show(pk: KeyTemplate, sk: KeyTemplate | None) -> str:
    return repr(pk.source if sk is None else f"{pk.source} / {sk.source}")
