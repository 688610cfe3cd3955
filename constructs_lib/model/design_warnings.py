"""Design warnings: model shapes that are legal but risky (hot partitions, identical keys).

``Model.warnings()`` returns them; ``SingleTable`` shows them as synth-time annotations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

from . import overlap
from .entity import SHARD
from .exceptions import ModelWarning
from .fields import Field
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
    for where, message in overlap.identical_keys(model.entities, model.indexes):
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
