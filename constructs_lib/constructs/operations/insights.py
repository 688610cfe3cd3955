"""Contributor Insights per table and per GSI (the ``contributor_insights`` option of a table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from aws_cdk import aws_dynamodb as dynamodb

from ...model.indexes import TABLE
from ..exceptions import ConstructPropsError

if TYPE_CHECKING:
    from ...model import Index, Model


class _WithGsis(Protocol):
    """What declares a table's GSIs in order: a ``Model``, or the ``Evolution`` of a synthesis."""

    @property
    def gsis(self) -> Sequence[Index]: ...


# Contributor Insights ------------------------------------------------------------------------------
ContributorInsights = bool | Sequence[str] | Mapping[str, bool]


def contributor_insights_by_index(what: str, model: Model, value: ContributorInsights) -> dict[str, bool]:
    """``{"table": bool, "<GSI>": bool, ...}`` from the ``contributor_insights`` option.

    ``True``: the table and every GSI; ``False``: none; a list of names (``"table"`` for the
    table): those; a mapping name → bool: those set True. LSIs share the table's insights.
    """
    names = [TABLE, *(i.name for i in model.gsis)]
    if isinstance(value, bool):
        return dict.fromkeys(names, value)
    if isinstance(value, (str, bytes)):
        raise ConstructPropsError(
            f"{what}: contributor_insights={value!r} must be a bool, a list of index names or a mapping, not a "
            "string (a string would be read as one name per character)"
        )
    if isinstance(value, Mapping):
        wrong = {k: v for k, v in value.items() if not isinstance(v, bool)}
        if wrong:
            raise ConstructPropsError(f"{what}: contributor_insights values {wrong!r} must be True or False")
        wanted = {k for k, v in value.items() if v}
        given = list(value)
    elif isinstance(value, Sequence):
        wanted = set(value)
        given = list(value)
    else:
        raise ConstructPropsError(
            f"{what}: contributor_insights {value!r} must be a bool, a list of index names or a mapping name → bool"
        )
    for name in given:
        if name in names:
            continue
        lsi = name in model.indexes
        raise ConstructPropsError(
            f"{what}: contributor_insights names {name!r}, "
            + ("an LSI: it shares the table's partitions and is covered by 'table'" if lsi
               else f"which is not a GSI of model {model.name!r}")
            + f" (choose from {', '.join(names)})"
        )
    return {name: name in wanted for name in names}


def apply_index_contributor_insights(table: dynamodb.TableV2, model: _WithGsis, insights: Mapping[str, bool]) -> None:
    """Set Contributor Insights per GSI on the table's own replica.

    ``TableV2`` takes per-index options only for replicas in *other* regions and gives every GSI
    of its own replica the table's setting; where an index's wish differs, the replica's
    ``GlobalSecondaryIndexes[i].ContributorInsightsSpecification`` is overridden. (Its own
    replica is the only entry of ``Replicas``; its ``GlobalSecondaryIndexes`` list the GSIs in
    declaration order, one entry each.)
    """
    resource = table.node.default_child
    assert isinstance(resource, dynamodb.CfnGlobalTable)
    for position, index in enumerate(model.gsis):
        if insights[index.name] != insights[TABLE]:
            resource.add_property_override(
                f"Replicas.0.GlobalSecondaryIndexes.{position}.ContributorInsightsSpecification",
                {"Enabled": insights[index.name]},
            )
