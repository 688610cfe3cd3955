"""Secondary indexes of the single table (overloaded and sparse GSIs, LSIs)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from .exceptions import ModelValidationError

IndexKind = Literal["GSI", "LSI"]
#: A normalized projection: all attributes, the keys only, or these non-key attributes (INCLUDE).
Projection = Literal["ALL", "KEYS_ONLY"] | tuple[str, ...]
#: The base table, as named in access patterns.
TABLE = "table"

_INDEX_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")
_ATTR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,254}$")


class IndexParts(NamedTuple):
    """What :meth:`Index.parts` checks and normalizes (the resolution step's input)."""

    #: The index's own partition-key attribute (None for an LSI, which uses the table's).
    pk_attribute: str | None
    sk_attribute: str | None
    projection: Projection


@dataclass(frozen=True)
class Index:
    """A secondary index whose key attributes are generic (``GSI1PK``/``GSI1SK``).

    Several entities can *overload* one GSI by each declaring their own key templates for it
    (see :class:`~constructs_lib.model.entity.IndexKey`); an item that does not qualify carries
    no key attributes for the index and is therefore absent from it (sparse index).

    Parameters
    ----------
    name
        Index name, 3–255 characters of ``[A-Za-z0-9_.-]``.
    kind
        ``"GSI"`` (default) or ``"LSI"`` (shares the table's partition key; at most 5, only
        on tables with a sort key, and fixed at table creation).
    pk_attribute
        Partition-key attribute of a GSI. Default ``f"{name}PK"``. Must be None for an LSI.
    sk_attribute
        Sort-key attribute. Default ``f"{name}SK"``; pass ``sort_key=False`` for a GSI
        without sort key.
    sort_key
        Whether the index has a sort key. Default True (required for an LSI).
    projection
        ``"ALL"`` (default), ``"KEYS_ONLY"``, or a tuple of non-key attribute names
        (``INCLUDE``; at most 100 across all indexes), a set: the model keeps them sorted, each once.
    """

    name: str
    kind: IndexKind = "GSI"
    pk_attribute: str | None = None
    sk_attribute: str | None = None
    sort_key: bool = True
    projection: str | tuple[str, ...] | list[str] | frozenset[str] = "ALL"

    def __post_init__(self) -> None:
        self.parts()  # validate only: the declared index keeps what the user wrote

    def parts(self) -> IndexParts:
        """The index checked and normalized: its own key attributes with their defaults
        (``{name}PK``/``{name}SK``; an LSI has no own partition-key attribute) and the projection
        (an INCLUDE list becomes a sorted tuple without repeats)."""
        if not isinstance(self.name, str) or not _INDEX_NAME_RE.match(self.name) or self.name == TABLE:
            raise ModelValidationError(
                f"index name {self.name!r} must be 3-255 characters of letters, digits, '_', '-', '.' "
                f"and not {TABLE!r}"
            )
        if self.kind not in ("GSI", "LSI"):
            raise ModelValidationError(f"index {self.name!r}: kind {self.kind!r} must be 'GSI' or 'LSI'")
        pk_attribute = self.pk_attribute
        if self.kind == "LSI":
            if pk_attribute is not None:
                raise ModelValidationError(
                    f"index {self.name!r}: an LSI shares the table's partition key; pk_attribute "
                    f"{pk_attribute!r} is not allowed"
                )
            if not self.sort_key:
                raise ModelValidationError(f"index {self.name!r}: an LSI must have a sort key")
        elif pk_attribute is None:
            pk_attribute = f"{self.name}PK"
        sk_attribute = self.sk_attribute
        if self.sort_key and sk_attribute is None:
            sk_attribute = f"{self.name}SK"
        if not self.sort_key and sk_attribute is not None:
            raise ModelValidationError(
                f"index {self.name!r}: sk_attribute {sk_attribute!r} given but sort_key=False"
            )
        for attr in (pk_attribute, sk_attribute):
            if attr is not None and (not isinstance(attr, str) or not _ATTR_RE.match(attr)):
                raise ModelValidationError(f"index {self.name!r}: key attribute name {attr!r} is invalid")
        proj: object = self.projection
        if isinstance(proj, list):
            proj = tuple(proj)
        if isinstance(proj, (set, frozenset)):
            proj = tuple(proj)
        if isinstance(proj, tuple):
            if not proj or not all(isinstance(a, str) and a for a in proj):
                raise ModelValidationError(
                    f"index {self.name!r}: INCLUDE projection {proj!r} must be non-empty attribute names"
                )
            projection: Projection = tuple(sorted(set(proj)))  # a set: order and repeats change nothing
        elif proj == "ALL" or proj == "KEYS_ONLY":
            projection = proj
        else:
            raise ModelValidationError(
                f"index {self.name!r}: projection {proj!r} must be 'ALL', 'KEYS_ONLY' or a tuple of attribute names"
            )
        return IndexParts(pk_attribute, sk_attribute, projection)

    def to_dict(self) -> dict[str, Any]:
        """The index as model JSON (normalized: default attribute names filled in)."""
        parts = self.parts()
        return {
            "name": self.name,
            "kind": self.kind,
            "pk_attribute": parts.pk_attribute,
            "sk_attribute": parts.sk_attribute,
            "sort_key": self.sort_key,
            "projection": list(parts.projection) if isinstance(parts.projection, tuple) else parts.projection,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Index:
        proj = data["projection"]
        return cls(
            name=data["name"],
            kind=data["kind"],
            pk_attribute=data["pk_attribute"],
            sk_attribute=data["sk_attribute"],
            sort_key=data["sort_key"],
            projection=tuple(proj) if isinstance(proj, list) else proj,
        )
