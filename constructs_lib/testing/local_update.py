"""Update a local deployment to a newer template, as a CloudFormation stack update would.

Only what an evolving ``SingleTable`` changes is applied: GSIs are created and deleted with
``UpdateTable``. CloudFormation's own rules are enforced first, so a template it would refuse
is refused here too: at most one GSI creation or deletion per table update, no change to the
table's key schema, LSIs or an existing GSI's key schema or projection.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from constructs_lib.testing._cfn_tables import (
    SUPPORTED_RESOURCE_TYPES,
    TablePlanner,
    load_template,
)
from constructs_lib.testing.exceptions import LocalDeployError
from constructs_lib.testing.local_deploy import LocalDeployment


def update_template(deployment: LocalDeployment, template: Mapping[str, Any] | str, *,
                    timeout: float = 60.0) -> dict[str, list[str]]:
    """Apply ``template`` to the tables of ``deployment``; returns logical id -> GSI changes made.

    Raises
    ------
    LocalDeployError
        The update would fail in CloudFormation (more than one GSI creation or deletion in one
        table update, a changed key schema, LSI set, or GSI shape), a table of the new template
        is not deployed, or DynamoDB Local rejected an ``UpdateTable``.
    """
    tpl = load_template(template)
    client = deployment.client
    changes: dict[str, list[str]] = {}
    plans = []
    for lid, resource in tpl["Resources"].items():
        if isinstance(resource, Mapping) and resource.get("Type") in SUPPORTED_RESOURCE_TYPES:
            if lid not in deployment.tables:
                raise LocalDeployError(f"table {lid!r} of the new template is not deployed; update adds no tables")
            plans.append(TablePlanner(lid, resource, region=deployment.region).plan(""))
    for plan in plans:
        name = deployment.tables[plan.logical_id]
        live = client.describe_table(TableName=name)["Table"]
        new = plan.request
        if [dict(k) for k in live["KeySchema"]] != new["KeySchema"]:
            raise LocalDeployError(f"{plan.logical_id}: the table key schema changes; CloudFormation would replace the table")
        live_lsis = {i["IndexName"]: (i["KeySchema"], i["Projection"]) for i in live.get("LocalSecondaryIndexes", [])}
        new_lsis = {i["IndexName"]: (i["KeySchema"], i["Projection"]) for i in new.get("LocalSecondaryIndexes", [])}
        if live_lsis != new_lsis:
            raise LocalDeployError(f"{plan.logical_id}: local secondary indexes change; they are fixed at table creation")
        live_gsis = {i["IndexName"]: i for i in live.get("GlobalSecondaryIndexes", [])}
        new_gsis = {i["IndexName"]: i for i in new.get("GlobalSecondaryIndexes", [])}
        for index, spec in new_gsis.items():
            if index in live_gsis and (
                live_gsis[index]["KeySchema"] != spec["KeySchema"]
                or _projection(live_gsis[index]["Projection"]) != _projection(spec["Projection"])
            ):
                raise LocalDeployError(
                    f"{plan.logical_id}: GSI {index!r} changes key schema or projection; CloudFormation cannot update "
                    "it in place (delete it in one update and create it in the next, or rename it)"
                )
        creates = [i for i in new_gsis if i not in live_gsis]
        deletes = [i for i in live_gsis if i not in new_gsis]
        if len(creates) + len(deletes) > 1:
            raise LocalDeployError(
                f"{plan.logical_id}: Cannot perform more than one GSI creation or deletion in a single update "
                f"(creates {creates}, deletes {deletes})"
            )
        made: list[str] = []
        attrs = {a["AttributeName"]: a for a in new["AttributeDefinitions"]}
        for index in deletes:
            client.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": index}}])
            made.append(f"delete {index}")
        for index in creates:
            spec = dict(new_gsis[index])
            used = [attrs[k["AttributeName"]] for k in spec["KeySchema"]]
            client.update_table(TableName=name, AttributeDefinitions=used,
                                GlobalSecondaryIndexUpdates=[{"Create": spec}])
            made.append(f"create {index}")
        _wait(client, name, timeout)
        changes[plan.logical_id] = made
    deployment.template = tpl
    return changes


def _projection(p: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    return str(p.get("ProjectionType")), tuple(sorted(p.get("NonKeyAttributes", [])))


def _wait(client: Any, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        table = client.describe_table(TableName=name)["Table"]
        busy = table["TableStatus"] != "ACTIVE" or any(
            i.get("IndexStatus") not in (None, "ACTIVE") for i in table.get("GlobalSecondaryIndexes", [])
        )
        if not busy:
            return
        if time.monotonic() > deadline:
            raise LocalDeployError(f"table {name!r} did not become ACTIVE within {timeout} s after UpdateTable")
        time.sleep(0.1)
