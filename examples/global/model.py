"""The global documents data model: documents edited in several regions, their view counters
and (on its own table) their audit trail.

Items on the table, replicated to every region of the global table:

* ``DOC#{doc_id}`` / ``DOC``: a document (title, body, author). Read by id.
* ``COUNTER#doc_views#...``: the ``doc_views`` counter family's items. On a replicated table the
  shards are ``SK = SUM#<region>`` and the totals ``SK = TOTAL#<region>``: each region writes
  only its own, so last-writer-wins never has two regions' increments to choose between.

Every put and update made through ``TableClient`` carries ``_origin_region`` (and a delete
``_deleted_in``), so each region's ``StreamAudit`` records only the changes written there.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Model

#: The counter family of document views, one counter per document id.
VIEWS_FAMILY = "doc_views"

global_model = Model(
    "globaldocs",
    entities=[
        Entity(
            "Doc",
            pk="DOC#{doc_id}",
            sk="DOC",
            fields={"doc_id": "string"},
            required=("title",),
            description="A document, edited from any region (last writer wins per document).",
        ),
    ],
    access_patterns=[AccessPattern("doc by id", entity="Doc", sk="=")],
)
