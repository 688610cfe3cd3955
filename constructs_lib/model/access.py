"""Declared access patterns: every read the application performs, named."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .exceptions import ModelFormatError, ModelValidationError
from .indexes import TABLE

Condition = Literal["=", "begins_with", "between", "<", "<=", ">", ">="]
CONDITIONS: tuple[str, ...] = ("=", "begins_with", "between", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class AccessPattern:
    """A named read served by one GetItem or Query — never a Scan.

    Parameters
    ----------
    name
        Unique, human name used at run time: ``client.query("user orders newest first", ...)``.
    entity
        The entity (or tuple of entities, for item-collection reads) the pattern returns.
    index
        ``"table"`` (default) or the name of a secondary index.
    sk
        Sort-key condition: ``None`` (whole partition, default), ``"="``, ``"begins_with"``,
        ``"between"``, ``"<"``, ``"<="``, ``">"``, ``">="``.
    sk_fields
        Sort-key template fields the caller supplies, a leading run of the template's fields.
        Default: all of them for ``"="``, none for ``"begins_with"`` (prefix = the template's
        leading literals), the first one for range conditions. The last one carries the
        condition (for ``"between"`` the caller passes a ``(low, high)`` pair).
    descending
        Default sort order of results (``ScanIndexForward=False`` when True). Default False.
    description
        Free text for generated docs.
    """

    name: str
    entity: str | Sequence[str]
    index: str = TABLE
    sk: Condition | None = None
    sk_fields: Sequence[str] | None = None
    descending: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ModelValidationError(f"access pattern name {self.name!r} must be a non-empty string")
        entities = (self.entity,) if isinstance(self.entity, str) else tuple(self.entity)
        if not entities or not all(isinstance(e, str) and e for e in entities):
            raise ModelValidationError(
                f"access pattern {self.name!r}: entity {self.entity!r} must be an entity name or a tuple of them"
            )
        if self.sk is not None and self.sk not in CONDITIONS:
            raise ModelValidationError(
                f"access pattern {self.name!r}: sort-key condition {self.sk!r} is unknown; "
                f"use one of {', '.join(CONDITIONS)} or None"
            )
        if self.sk_fields is not None:
            if self.sk is None:
                raise ModelValidationError(
                    f"access pattern {self.name!r}: sk_fields {self.sk_fields!r} given without a sort-key condition"
                )
            if isinstance(self.sk_fields, str) or not all(isinstance(f, str) for f in self.sk_fields):
                raise ModelValidationError(
                    f"access pattern {self.name!r}: sk_fields {self.sk_fields!r} must be a sequence of field names"
                )

    @property
    def entities(self) -> tuple[str, ...]:
        return (self.entity,) if isinstance(self.entity, str) else tuple(self.entity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entities": list(self.entities),
            "index": self.index,
            "sk": self.sk,
            "sk_fields": list(self.sk_fields) if self.sk_fields is not None else None,
            "descending": self.descending,
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AccessPattern:
        ents = data["entities"]
        return cls(
            name=data["name"],
            entity=ents[0] if len(ents) == 1 else tuple(ents),
            index=data["index"],
            sk=data["sk"],
            sk_fields=tuple(data["sk_fields"]) if data["sk_fields"] is not None else None,
            descending=data["descending"],
            description=data.get("description", ""),
        )


#: Model JSON key listing the access patterns a consumer's view added (docs/contract-format.md).
CONSUMER_PATTERNS = "consumer_patterns"


def consumer_names(data: Mapping[str, Any], patterns: Mapping[str, AccessPattern]) -> tuple[str, ...]:
    """The ``consumer_patterns`` of a model JSON document, each naming one of its ``patterns``."""
    names = data.get(CONSUMER_PATTERNS)
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ModelFormatError(f"model JSON {CONSUMER_PATTERNS} {names!r:.80} must be a list of distinct pattern names")
    unknown = [n for n in names if n not in patterns]
    if unknown:
        raise ModelFormatError(
            f"model JSON {CONSUMER_PATTERNS} names {unknown!r}, which are not among its access_patterns "
            f"({', '.join(patterns) or 'none'}); a consumer-only pattern must be declared there"
        )
    return tuple(names)
