"""``ImportedSingleTable``: a table deployed by another stack or repository, bound to its model.

Built by ``SingleTable.from_table_name``, ``SingleTable.from_table_attributes`` and
``SingleTable.from_parameters``. It wraps ``TableV2.from_table_attributes`` and offers everything
:class:`~constructs_lib.constructs.bound_table.ModelBoundTable` does — the same least-privilege grants as an
owned table, ``TableFunction``, ``ShardedCounter``, ``StreamAudit`` and ``TableOperations`` on it. What it
cannot know is refused at synth: a stream that was not imported, a stream view type that was not
declared. It creates no resource.
"""

from __future__ import annotations

import re

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from ..model import Model
from .bound_table import ModelBoundTable
from .exceptions import ConstructPropsError
from .operations import OperationsSettings

_NAME = r"[A-Za-z0-9_.-]{3,255}"
_TABLE_ARN = re.compile(rf"arn:[a-z0-9-]+:dynamodb:[a-z0-9-]+:\d{{12}}:table/({_NAME})")
_STREAM_ARN = re.compile(rf"arn:[a-z0-9-]+:dynamodb:[a-z0-9-]+:\d{{12}}:table/({_NAME})/stream/[^/]+")


def _literal(value: str | None) -> str | None:
    return value if value is not None and not cdk.Token.is_unresolved(value) else None


def check_fingerprint(what: str, model: Model, deployed: str, source: str) -> None:
    """Refuse ``model`` when the known fingerprint ``deployed`` is not its own; a token is
    checked at run time instead (by the functions, see :mod:`constructs_lib.runtime.contract`)."""
    from ..runtime.contract import FINGERPRINT_LENGTH, fingerprint

    if cdk.Token.is_unresolved(deployed):
        return
    if not re.fullmatch(rf"[0-9a-f]{{{FINGERPRINT_LENGTH}}}", deployed):
        raise ConstructPropsError(
            f"{what}: {source} {deployed!r} is not a model fingerprint ({FINGERPRINT_LENGTH} lowercase hex digits, "
            "as python -m constructs_lib fingerprint prints)"
        )
    own = fingerprint(model)
    if deployed != own:
        raise ConstructPropsError(
            f"{what}: model {model.name!r} has fingerprint {own}, but the deployed table's model has {deployed} "
            f"({source}): their keys, typed fields or indexes differ, so functions built with this model could "
            "write keys the table was not designed for; use the table owner's current model"
        )


class ImportedSingleTable(ModelBoundTable):
    """A deployed table with its data model.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    model
        The model the deployed table was designed for (shared with its owner, e.g. as a package).
    table_name
        Physical name. Functions get it as ``TABLE_NAME``. Default None: derived from ``table_arn``.
    table_arn
        Table ARN; another account or region is fine (the grants name it; the owner must allow
        the access on their side). Default None: built from ``table_name`` in this stack's account
        and region. At least one of the two; when both are literals they must name the same table.
    table_stream_arn
        The table's stream ARN. Default None: no stream, so ``StreamAudit``, a stream-driven
        ``ShardedCounter`` and ``grant_stream_read`` are refused.
    stream_view_type
        The deployed stream's view type (an import cannot read it). ``StreamAudit`` needs
        ``NEW_AND_OLD_IMAGES``. Only with ``table_stream_arn``. Default None (undeclared).
    encryption_key
        The customer-managed KMS key encrypting the table: grants then include its KMS
        permissions, as for an owned table. Default None (AWS-owned or AWS-managed key).
    model_fingerprint
        The deployed model's fingerprint (``python -m constructs_lib fingerprint``), a literal or
        a token. A literal is checked against ``model`` now; either way, every function built on
        the table checks its bundled model against it at run time. Default None: no check.
    operations
        A dashboard and alarms for the table and the pattern constructs built on it (no capacity
        alarms: the billing mode of an import is unknown). Default None.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        model: Model,
        table_name: str | None = None,
        table_arn: str | None = None,
        table_stream_arn: str | None = None,
        stream_view_type: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
        model_fingerprint: str | None = None,
        operations: OperationsSettings | None = None,
    ) -> None:
        super().__init__(scope, id)
        what = self.what
        if not isinstance(model, Model):
            raise ConstructPropsError(f"{what}: model must be a constructs_lib.model.Model, got {model!r}")
        if table_name is None and table_arn is None:
            raise ConstructPropsError(f"{what}: give table_name=... or table_arn=... (the table to import)")
        name, arn, stream = _literal(table_name), _literal(table_arn), _literal(table_stream_arn)
        if name is not None and not re.fullmatch(_NAME, name):
            raise ConstructPropsError(f"{what}: table_name {name!r} must be 3-255 characters of A-Z a-z 0-9 _ . -")
        arn_match = _TABLE_ARN.fullmatch(arn) if arn is not None else None
        if arn is not None and arn_match is None:
            raise ConstructPropsError(
                f"{what}: table_arn {arn!r} is not a DynamoDB table ARN "
                "(arn:<partition>:dynamodb:<region>:<account>:table/<name>)"
            )
        stream_match = _STREAM_ARN.fullmatch(stream) if stream is not None else None
        if stream is not None and stream_match is None:
            raise ConstructPropsError(
                f"{what}: table_stream_arn {stream!r} is not a DynamoDB stream ARN "
                "(arn:<partition>:dynamodb:<region>:<account>:table/<name>/stream/<label>)"
            )
        known = {n for n in (name, arn_match and arn_match.group(1), stream_match and stream_match.group(1)) if n}
        if len(known) > 1:
            raise ConstructPropsError(
                f"{what}: table_name, table_arn and table_stream_arn name different tables ({sorted(known)})"
            )
        if stream_view_type is not None and table_stream_arn is None:
            raise ConstructPropsError(
                f"{what}: stream_view_type={stream_view_type} needs table_stream_arn=... (the stream to import)"
            )
        if encryption_key is not None and not hasattr(encryption_key, "key_arn"):
            raise ConstructPropsError(f"{what}: encryption_key {encryption_key!r} must be an aws_kms.IKey")
        self.model = model
        self.encryption_key = encryption_key
        self.stream_view_type = stream_view_type
        self.provisioned = False
        #: The SSM path it was imported from (``SingleTable.from_parameters``), else None.
        self.parameter_prefix: str | None = None
        #: The fingerprint pinned with ``from_parameters(expected_fingerprint=...)``, else None.
        self.expected_fingerprint: str | None = None
        self._stream_arn = table_stream_arn
        self._name = table_name
        # TableV2's importer takes one of name and ARN; the ARN wins (it may name another account).
        self.table = dynamodb.TableV2.from_table_attributes(
            self, "Table", table_arn=table_arn, table_name=None if table_arn is not None else table_name,
            table_stream_arn=table_stream_arn, encryption_key=encryption_key,
        )
        if model_fingerprint is not None:
            check_fingerprint(what, model, model_fingerprint, "model_fingerprint")
        self.model_fingerprint = model_fingerprint
        if operations is not None:
            self.add_operations(operations)

    @property
    def stream_hint(self) -> str:
        return (
            "import the table with its stream: table_stream_arn=... (SingleTable.from_table_attributes) or "
            "stream_view_type=... (SingleTable.from_parameters, whose owner published a stream)"
        )

    @property
    def table_name(self) -> str:
        return self._name if self._name is not None else self.table.table_name

    @property
    def table_stream_arn(self) -> str | None:
        return self._stream_arn


__all__ = ["ImportedSingleTable", "check_fingerprint"]
