"""The changes made to LocalStack's code at install, each for one gap met deploying our stacks.

Each :class:`Patch` replaces one exact piece of one file of ``localstack-core``
(:data:`~constructs_lib.testing.localstack.install.LOCALSTACK_VERSION`); :func:`apply` refuses a
file where the piece is not found exactly once (another LocalStack release: the patch must be
checked again, never applied blindly) and leaves a patched file as it is. Why each exists:
docs/deploy-to-localstack.md, "What the emulator does and does not do".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from constructs_lib.testing.exceptions import LocalStackSetupError

__all__ = ["PATCHES", "Patch", "apply"]


@dataclass(frozen=True)
class Patch:
    """Replace ``old`` (found exactly once) by ``new`` in ``path`` (relative to the
    ``localstack`` package)."""

    name: str
    path: str
    old: str
    new: str
    why: str


_GLOBAL_TABLE = "services/dynamodb/resource_providers/aws_dynamodb_globaltable.py"

#: ``AWS::DynamoDB::GlobalTable`` create: UpdateTable is called inside the loop over
#: ``Replicas`` with the list built so far, so the second replica sends the first again and
#: every table with two or more Regions fails ("one or more replicas already existed").
REPLICAS_ONCE = Patch(
    name="global-table-replicas-once",
    path=_GLOBAL_TABLE,
    old='''                replicas_to_create.append({"Create": create})

                request.aws_client_factory.dynamodb.update_table(
                    ReplicaUpdates=replicas_to_create, TableName=model["TableName"]
                )
''',
    new='''                replicas_to_create.append({"Create": create})

            # constructs_lib patch global-table-replicas-once: one UpdateTable after the loop
            if replicas_to_create:
                request.aws_client_factory.dynamodb.update_table(
                    ReplicaUpdates=replicas_to_create, TableName=model["TableName"]
                )
''',
    why="a GlobalTable with two or more Regions fails to create",
)

#: ``AWS::DynamoDB::GlobalTable`` update: not implemented, so CloudFormation reports every
#: update complete and changes nothing (a GSI added by a stack update is never created). This
#: implements what a rollout needs: one GSI created or deleted per update (more is refused,
#: as DynamoDB refuses it; each replica's list of GSI settings follows) and the TTL setting; a
#: change of any other property fails the update with its name instead of being dropped.
GSI_UPDATES = Patch(
    name="global-table-gsi-updates",
    path=_GLOBAL_TABLE,
    old='''          - kms:RevokeGrant
          - cloudwatch:PutMetricData
        """
        raise NotImplementedError
''',
    new='''          - kms:RevokeGrant
          - cloudwatch:PutMetricData
        """
        # constructs_lib patch global-table-gsi-updates: GSI creation/deletion and TTL
        model = request.desired_state
        previous = request.previous_state or {}
        for key in ("TableName", "Arn", "StreamArn", "TableId"):
            if previous.get(key) and not model.get(key):
                model[key] = previous[key]
        handled = {"GlobalSecondaryIndexes", "AttributeDefinitions", "TimeToLiveSpecification",
                   "TableName", "Arn", "StreamArn", "TableId", "Replicas"}
        other = sorted(k for k in set(model) | set(previous) if k not in handled and model.get(k) != previous.get(k))

        def replicas(state):  # each replica's per-GSI settings follow the GSIs themselves
            return [{k: v for k, v in r.items() if k != "GlobalSecondaryIndexes"} for r in state.get("Replicas") or []]

        if replicas(model) != replicas(previous):
            other.append("Replicas")
        before = {i["IndexName"]: i for i in previous.get("GlobalSecondaryIndexes") or []}
        after = {i["IndexName"]: i for i in model.get("GlobalSecondaryIndexes") or []}
        created = [n for n in after if n not in before]
        deleted = [n for n in before if n not in after]
        changed = [n for n in after if n in before and after[n] != before[n]]
        message = None
        if other:
            message = f"the emulator updates only GSIs and TTL of a GlobalTable; changed: {other}"
        elif changed:
            message = f"GSIs cannot be changed in place, only created or deleted: {changed}"
        elif len(created) + len(deleted) > 1:
            message = ("Cannot perform more than one GSI creation or deletion in a single update: "
                       f"create {created}, delete {deleted}")
        if message:
            return ProgressEvent(status=OperationStatus.FAILED, resource_model=previous, message=message)
        client = request.aws_client_factory.dynamodb
        if created:
            index = after[created[0]]
            client.update_table(
                TableName=model["TableName"], AttributeDefinitions=model["AttributeDefinitions"],
                GlobalSecondaryIndexUpdates=[{"Create": {k: index[k] for k in ("IndexName", "KeySchema", "Projection")}}],
            )
        if deleted:
            client.update_table(TableName=model["TableName"],
                                GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": deleted[0]}}])
        ttl = model.get("TimeToLiveSpecification")
        if ttl != previous.get("TimeToLiveSpecification"):
            spec = ttl or {**previous["TimeToLiveSpecification"], "Enabled": False}
            client.update_time_to_live(TableName=model["TableName"], TimeToLiveSpecification=spec)
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)
''',
    why="a GSI added by a stack update is never created (the update is reported complete)",
)

#: DynamoDB Local is started with ``-javaagent:`` LocalStack's loader jar (it lifts the limit of
#: 20 GSIs), which LocalStack's installer downloads; offline there is none and the JVM exits.
#: Started without it when absent: tables keep DynamoDB's own limit of 20 GSIs.
DYNAMODB_AGENT = Patch(
    name="dynamodb-local-agent-optional",
    path="services/dynamodb/server.py",
    old='''            f"-javaagent:{dynamodblocal_package.get_installer().get_ddb_agent_jar_path()}",
''',
    new='''            # constructs_lib patch dynamodb-local-agent-optional: the agent only if installed
            *[f"-javaagent:{jar}" for jar in [dynamodblocal_package.get_installer().get_ddb_agent_jar_path()]
              if os.path.isfile(jar)],
''',
    why="DynamoDB Local does not start without the downloaded agent jar",
)

#: Every patch, in the order applied.
PATCHES: tuple[Patch, ...] = (REPLICAS_ONCE, GSI_UPDATES, DYNAMODB_AGENT)


def apply(package_dir: Path, patches: tuple[Patch, ...] = PATCHES) -> list[str]:
    """Apply ``patches`` to the ``localstack`` package in ``package_dir``; returns the names of
    the files written (none when they already hold exactly these patches).

    The original of each patched file is kept beside it (``<file>.orig``) and the patches are
    applied to it, so a changed patch replaces the one applied before.

    Raises
    ------
    LocalStackSetupError
        A patched file is missing, or holds the piece a patch replaces other than exactly once.
    """
    written = []
    for relative in dict.fromkeys(p.path for p in patches):
        path = package_dir / relative
        original = path.with_name(path.name + ".orig")
        try:
            text = original.read_text(encoding="utf-8") if original.is_file() else path.read_text(encoding="utf-8")
        except OSError as exc:
            raise LocalStackSetupError(f"LocalStack patches: cannot read {str(path)!r}: {exc}") from exc
        patched = text
        for patch in (p for p in patches if p.path == relative):
            found = patched.count(patch.old)
            if found != 1:
                raise LocalStackSetupError(
                    f"LocalStack patch {patch.name!r} ({patch.why}) does not fit {str(path)!r}: the code it replaces "
                    f"is found {found} times, not once. Is this the LocalStack release it was written for?"
                )
            patched = patched.replace(patch.old, patch.new)
        if path.read_text(encoding="utf-8") == patched:
            continue
        if not original.is_file():
            original.write_text(text, encoding="utf-8")
        # A new file, not the same file rewritten: installers (uv) may hard-link it to their cache.
        staged = path.with_name(f"{path.name}.patched")
        staged.write_text(patched, encoding="utf-8")
        os.replace(staged, path)
        for cached in path.parent.joinpath("__pycache__").glob(f"{path.stem}.*.pyc"):
            cached.unlink()
        written.append(relative)
    return written
