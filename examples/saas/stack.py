"""``SaasStack``: the multi-tenant documents table, its tenant-scoped and back-office roles,
and an audit trail of every change.

Construct ids (and so logical ids) are part of the contract: ``Docs``, ``TenantRole``,
``BackOfficeRole``, ``EditorRole``, ``Audit``; outputs ``DocsTableName``, ``TenantRoleArn`` and
``EditorRoleArn``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_lib import SingleTable, StreamAudit
from constructs_lib.model import AccessScope, principal_tag
from examples.saas.model import saas_model

#: The session tag that carries the caller's tenant (``sts:TagSession`` when assuming the role).
TENANT_TAG = "tenant"
#: What a document editor does: read documents and their versions, list an owner's documents,
#: and write a document with its version snapshot in one transaction — in its own tenant.
EDITOR_SCOPE = AccessScope(
    patterns=["document latest", "document versions newest first", "docs of an owner"],
    writes={"Doc": ["transaction_put", "transaction_update"], "DocVersion": ["transaction_put"]},
    tenant=principal_tag(TENANT_TAG),
)
#: How long the audit trail keeps each change.
AUDIT_RETENTION_DAYS = 730


class SaasStack(cdk.Stack):
    """Multi-tenant documents: tenant-prefixed keys, a role confined to its caller's tenant, a
    per-index query grant for the back office, and an audit trail of every change.

    Parameters
    ----------
    scope, id
        As for any ``cdk.Stack``.
    **kwargs
        ``cdk.Stack`` properties (``description``, ``env``, ...).

    Attributes
    ----------
    docs : SingleTable
        The documents table (stream ``NEW_AND_OLD_IMAGES``, feeding the audit trail).
    tenant_role : iam.Role
        Read-write item access confined by ``dynamodb:LeadingKeys`` to ``TENANT#<session tag>``
        keys; every read of the tenant-mixing ``ByStatus`` index explicitly denied.
    back_office_role : iam.Role
        ``Query`` on the ``ByStatus`` index only (documents by status across tenants).
    editor_role : iam.Role
        A declared :data:`EDITOR_SCOPE` (``grant_scope``): the document patterns and the
        transactional writes an editor makes, for its own tenant's ``DOC`` keys only.
    audit : StreamAudit
        The audit table and its writer function, records kept 730 days.
    """

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.docs = SingleTable(self, "Docs", model=saas_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        # Assumed with a session tag "tenant" (sts:TagSession); IAM then confines every item
        # access to TENANT#<tag> keys and denies the tenant-mixing ByStatus index.
        self.tenant_role = iam.Role(
            self, "TenantRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
            description="Tenant-facing access to the documents table, confined to the caller's tenant tag",
        )
        self.docs.grant_tenant_access(self.tenant_role, actions="read_write", tenant_tag=TENANT_TAG)
        # The back office lists documents by status across tenants: Query on that one index.
        self.back_office_role = iam.Role(
            self, "BackOfficeRole", assumed_by=iam.AccountPrincipal(self.account),
            description="Operators: documents by status across tenants (Query on ByStatus only)",
        )
        self.docs.grant_query(self.back_office_role, index="ByStatus")
        # Editors get exactly their declared scope: no Scan, no ByStatus, no Tenant item, no plain
        # (non-transactional) write, and only TENANT#<tag>#DOC#* keys.
        self.editor_role = iam.Role(
            self, "EditorRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
            description="Document editors: the declared editor scope, confined to the caller's tenant tag",
        )
        self.docs.grant_scope(self.editor_role, EDITOR_SCOPE)
        self.audit = StreamAudit(self, "Audit", source=self.docs, retention=cdk.Duration.days(AUDIT_RETENTION_DAYS))
        cdk.CfnOutput(self, "DocsTableName", value=self.docs.table_name)
        cdk.CfnOutput(self, "TenantRoleArn", value=self.tenant_role.role_arn)
        cdk.CfnOutput(self, "EditorRoleArn", value=self.editor_role.role_arn)
