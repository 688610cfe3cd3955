"""A multi-tenant document model with versioned documents.

Every partition key starts with ``TENANT#{tenant_id}``, so one IAM ``dynamodb:LeadingKeys``
condition confines a tenant to its own items. Each document is one item collection::

    PK = TENANT#{tenant_id}#DOC#{doc_id}
    SK = DOC            Doc: the latest state, carrying ``version`` (optimistic lock)
    SK = V#000001       DocVersion: immutable snapshot of version 1
    SK = V#000002       ...                                 of version 2

``ByOwner`` is tenant-safe (its keys start with the tenant too); ``ByStatus`` is not — it
lists documents of every tenant by status, for the operator's back office — so tenant-scoped
principals are denied it (``SingleTable.grant_tenant_access``) and ``TableClient.for_tenant``
refuses its patterns. Snapshots take part in no index: they are read by key only.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model

#: Digits of a version number in a snapshot's sort key (``V#000042``): up to 999,999 versions
#: per document, sorting numerically as strings.
VERSION_WIDTH = 6
#: The attribute of the latest item holding its current version (every write bumps it).
VERSION_ATTRIBUTE = "version"
#: Who made a change: written on every item, read by the audit trail as the actor.
ACTOR_ATTRIBUTE = "updated_by"

saas_model = Model(
    "saas",
    entities=[
        Entity("Tenant", pk="TENANT#{tenant_id}", sk="META", fields={"tenant_id": "string"}, required=("name",)),
        Entity(
            "Doc",
            pk="TENANT#{tenant_id}#DOC#{doc_id}",
            sk="DOC",
            fields={"tenant_id": "string", "doc_id": "string", "owner": "string",
                    "status": Field.enum("DRAFT", "REVIEW", "PUBLISHED")},
            indexes={
                "ByOwner": IndexKey(pk="TENANT#{tenant_id}#OWNER#{owner}", sk="DOC#{doc_id}"),
                "ByStatus": IndexKey(pk="STATUS#{status}#{tenant_id}", sk="{doc_id}"),
            },
            required=("owner", "status"),
            version_attribute=VERSION_ATTRIBUTE,
            description="A document's latest state; its version attribute is the optimistic lock",
        ),
        Entity(
            "DocVersion",
            pk="TENANT#{tenant_id}#DOC#{doc_id}",
            sk="V#{version}",
            fields={"tenant_id": "string", "doc_id": "string", "version": Field.number(width=VERSION_WIDTH)},
            required=(ACTOR_ATTRIBUTE,),
            description="An immutable snapshot of one version of a document, in the document's partition",
        ),
    ],
    indexes=[Index("ByOwner"), Index("ByStatus", projection="KEYS_ONLY")],
    access_patterns=[
        AccessPattern("tenant profile", entity="Tenant", sk="="),
        AccessPattern("document latest", entity="Doc", sk="=",
                      description="GetItem of the latest item: current content and version"),
        AccessPattern("document versions newest first", entity="DocVersion", sk="begins_with", descending=True,
                      description="Query begins_with(SK, 'V#') on the document's partition, descending"),
        AccessPattern("document at version", entity="DocVersion", sk="=",
                      description="GetItem of one snapshot by its zero-padded version"),
        AccessPattern("docs of an owner", entity="Doc", index="ByOwner", sk="begins_with"),
        AccessPattern("docs by status", entity="Doc", index="ByStatus"),
    ],
    tenant_field="tenant_id",
)
