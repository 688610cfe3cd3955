"""Unit tests for constructs_lib.docgen.describe: the Markdown + Mermaid documentation of a model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from constructs_lib.docgen.describe import (
    describe,
    describe_all,
    example_values,
    membership,
    mermaid,
)
from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import TableClient, keys, request_params
from examples.saas.model import saas_model
from examples.shop.model import shop_model

REPO = Path(__file__).resolve().parents[3]


class _NoClient:
    """The tests build requests only; nothing is sent."""


def _section(text: str, heading: str) -> str:
    """The body of a ``## heading`` section (up to the next ``## ``)."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def _rows(section: str) -> list[list[str]]:
    """Cells of the Markdown table rows of ``section`` (header and separator excluded)."""
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in lines[2:]]


@pytest.fixture(scope="module")
def shop_doc() -> str:
    return describe(shop_model)


# --------------------------------------------------------------------------- entities and keys


def test_example_keys_are_the_keys_the_runtime_builds(shop_doc: str) -> None:
    # GIVEN the runtime client of the shop model and the describe() example values
    client = TableClient(shop_model, "t", client=_NoClient())
    order = shop_model.entity("Order")
    values = example_values(shop_model, order)
    # WHEN the runtime builds every key of that Order item
    item = client.mapper.build_item(order, values)
    # THEN each key appears verbatim in the Order section, next to its template
    section = shop_doc[shop_doc.index("### Order\n"):shop_doc.index("### OrderItem\n")]
    assert item["SK"] == "ORDER#2026-01-01T00:00:00.000000Z#o-1"
    for attr, template in (("PK", "USER#{user_id}"), ("SK", "ORDER#{created_at}#{order_id}"),
                           ("GSI1PK", "ORDER#{order_id}"), ("GSI2PK", "STATUS#{status}")):
        assert f"| `{attr}` | `{template}` | `{item[attr]}` |" in section
    assert "| GSI GSI2 | sort key | `GSI2SK` | `{created_at}#{order_id}` | `2026-01-01T00:00:00.000000Z#o-1` |" in section
    # AND the example key parses back into the example values (it is a real key of the template)
    assert keys.parse(order, order.sk_template, item["SK"])["order_id"] == "o-1"


def test_fields_types_and_entity_attributes_are_listed(shop_doc: str) -> None:
    # GIVEN the shop model's documentation
    user = shop_doc[shop_doc.index("### User\n"):shop_doc.index("### Order\n")]
    order = shop_doc[shop_doc.index("### Order\n"):shop_doc.index("### OrderItem\n")]
    item = shop_doc[shop_doc.index("### OrderItem\n"):shop_doc.index("### Product\n")]
    # THEN field types, version, required and TTL attributes are stated per entity
    assert "| `created_at` | timestamp (ISO-8601 UTC) |" in order
    assert "| `status` | enum: CANCELLED, PAID, PENDING, SHIPPED |" in order
    assert "| `line` | number (4 digits, zero-padded in keys) |" in item
    assert "version attribute `version`" in user and "version attribute" not in order
    assert "required attributes: `quantity`, `sku`" in item
    assert "other attributes: `sku` (string), `quantity` (integer)" in item  # their declared kinds
    assert "TTL attribute `expires_at`" in user
    assert "tenant field" not in shop_doc


# --------------------------------------------------------------------------- access patterns


def test_access_pattern_table_has_operation_index_condition_and_runtime_example(shop_doc: str) -> None:
    # GIVEN the access-pattern table of the shop model
    rows = {r[0].strip(): [c.strip() for c in r] for r in _rows(_section(shop_doc, "Access patterns"))}
    # THEN every declared pattern has one row with six cells
    assert set(rows) == set(shop_model.access_patterns)
    assert all(len(r) == 6 for r in rows.values())
    # AND GetItem patterns show the key the runtime builds
    assert rows["user profile"][3] == "GetItem"
    assert rows["user profile"][5] == '`Key: PK = "USER#u-1", SK = "PROFILE"`'
    # AND queries show the key condition as templates and as sent, with order and filters
    newest = rows["user's orders newest first"]
    assert newest[2:5] == ["table", "Query (descending)", "`PK = USER#{user_id} AND begins_with(SK, ORDER#)`"]
    assert newest[5] == '`PK = "USER#u-1" AND begins_with(SK, "ORDER#"); ScanIndexForward = false`'
    pending = rows["pending orders by date"]
    assert pending[2] == "GSI GSI2"
    assert pending[5] == (
        '`GSI2PK = "STATUS#PENDING" AND GSI2SK BETWEEN "2026-01-01T00:00:00.000000Z" '
        'AND "2026-01-31T00:00:00.000000Z$"`'
    )
    assert rows["user with orders"][5] == '`PK = "USER#u-1"; filter _type IN ("User", "Order")`'
    # AND the section says filters do not reduce read cost and what projections save
    section = _section(shop_doc, "Access patterns")
    assert "does not reduce read cost" in section and "charged on the full item size" in section


def test_pattern_example_matches_the_runtime_query_request() -> None:
    # GIVEN the runtime's own request for "orders in a date range" with the same example values
    client = TableClient(shop_model, "t", client=_NoClient())
    resolved = shop_model.resolved_patterns["orders in a date range"]
    values = {**example_values(shop_model, shop_model.entity("Order")),
              "created_at": ("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z")}
    params = request_params.query_params(client.mapper, "t", resolved, values)
    sent = {v["S"] for v in params["ExpressionAttributeValues"].values()}
    # WHEN the model is described
    row = next(r for r in _rows(_section(describe(shop_model), "Access patterns")) if r[0].strip() == resolved.name)
    # THEN every value the runtime sends appears in the example cell
    assert sent == {"USER#u-1", "ORDER#2026-01-01T00:00:00.000000Z", "ORDER#2026-01-31T00:00:00.000000Z$"}
    assert all(f'"{value}"' in row[5] for value in sent)


def test_pipe_in_a_pattern_name_does_not_break_the_table() -> None:
    # GIVEN a pattern whose name contains a Markdown table separator
    model = Model("pipes", entities=[Entity("A", pk="A#{a_id}", fields=["a_id"])],
                  access_patterns=[AccessPattern("a | by id", entity="A")])
    # WHEN described
    rows = _rows(_section(describe(model), "Access patterns"))
    # THEN the row still has six cells and the name is escaped
    assert len(rows) == 1 and len(rows[0]) == 6
    assert rows[0][0].strip() == "a \\| by id"
    assert rows[0][3].strip() == "GetItem"  # the partition key alone is the primary key


# --------------------------------------------------------------------------- indexes and sparse membership


def _sparse_model() -> Model:
    """Sparse GSIs of every kind (missing input, when_present, when_equals), an INCLUDE
    projection, an LSI, and two entities sharing one partition."""
    task = Entity(
        "Task", pk="TASK#{task_id}", sk="TASK",
        fields={"task_id": "string", "assignee": "string", "due": Field.date(), "state": Field.enum("OPEN", "DONE")},
        indexes={"ByAssignee": IndexKey(pk="ASSIGNEE#{assignee}", sk="{due}#{task_id}"),
                 "Flagged": IndexKey(pk="FLAG#{task_id}", sk="TASK", when_present="flagged"),
                 "Open": IndexKey(pk="OPEN#{assignee}", sk="{task_id}", when_equals={"state": ("OPEN",)})},
        required=("state",),
    )
    note = Entity("Note", pk="TASK#{task_id}", sk="NOTE#{note_id}", fields=["task_id", "note_id"],
                  indexes={"ByNote": IndexKey(sk="N#{note_id}")})
    return Model(
        "sparse",
        entities=[task, note],
        indexes=[Index("ByAssignee"), Index("Flagged", projection=("title",)), Index("Open"),
                 Index("ByNote", kind="LSI")],
        access_patterns=[AccessPattern("task with notes", entity=("Task", "Note")),
                         AccessPattern("tasks of assignee", entity="Task", index="ByAssignee", sk="between")],
    )


def test_membership_names_missing_inputs_when_present_and_when_equals() -> None:
    # GIVEN an entity in three sparse indexes of different kinds
    task = _sparse_model().entity("Task")
    # THEN each membership condition is named
    assert membership(task, "ByAssignee") == ["`assignee`, `due` are present"]
    assert membership(task, "Flagged") == ["`flagged` is present"]
    assert membership(task, "Open") == ["`assignee` is present", "`state` = `OPEN`"]


def test_index_section_shows_projection_as_built_and_who_is_in_each_index() -> None:
    # GIVEN a model with sparse GSIs, an INCLUDE projection and an LSI
    doc = describe(_sparse_model())
    section = _section(doc, "Indexes")
    rows = {r[0].strip(): [c.strip() for c in r] for r in _rows(section)}
    # THEN the projection is the one SingleTable builds (entity attribute always projected)
    assert rows["Flagged"][3] == "`INCLUDE _type, title`"
    assert rows["ByNote"][1:3] == ["LSI", "`PK`, `ByNoteSK`"]
    # AND the membership list says who is in each index and when
    assert "  - Task: only when `flagged` is present" in section
    assert "  - Task: only when `assignee` is present and `state` = `OPEN`" in section
    assert "  - never: Task (no keys declared for this index)" in section


# --------------------------------------------------------------------------- tenancy and warnings


def test_tenancy_section_lists_tenant_safe_indexes() -> None:
    # GIVEN the multi-tenant example model
    doc = describe(saas_model)
    rows = {r[0].strip(): r[1].strip() for r in _rows(_section(doc, "Tenancy"))}
    # THEN the tenant prefix is stated and ByStatus is flagged as mixing tenants
    assert "`TENANT#<tenant>`" in _section(doc, "Tenancy")
    assert rows["ByOwner"] == "yes"
    assert rows["ByStatus"].startswith("**no**")


def test_warnings_are_listed_or_none(shop_doc: str) -> None:
    # GIVEN one model with a low-cardinality GSI key and one without warnings
    # THEN the warning code and the offending template are shown; otherwise "None."
    assert "**LowCardinalityPartitionKey**" in _section(shop_doc, "Warnings")
    assert "STATUS#{status}" in _section(shop_doc, "Warnings")
    assert _section(describe(saas_model), "Warnings").strip().endswith("None.")


# --------------------------------------------------------------------------- mermaid


def test_mermaid_groups_item_collections_per_table_and_index(shop_doc: str) -> None:
    # GIVEN the Mermaid block of the shop documentation
    block = shop_doc.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == mermaid(shop_model) + "\n"
    # THEN User and Order share the USER#{user_id} collection of the table
    collection = block.split('["USER#35;{user_id}"]', 1)[1].split("    end", 1)[0]
    assert 'e_table_User["User<br/>PROFILE"]' in collection
    assert "e_table_Order[" in collection and "OrderItem" not in collection
    # AND each GSI is a container with its own collections, linked from the table entity
    assert 'subgraph ix_GSI2["GSI GSI2 · GSI2PK / GSI2SK · INCLUDE _type"]' in block
    assert 'e_table_Order -.->|"status = PENDING"| e_GSI2_Order' in block
    assert "e_table_User -.-> e_GSI1_User" in block


def test_mermaid_labels_escape_what_mermaid_would_interpret() -> None:
    # GIVEN the diagram of a model with '#' in every template and an LSI
    block = mermaid(_sparse_model())
    # THEN every quoted label uses entity codes only (no raw '#', '"', '<' or '>' outside <br/>)
    labels = re.findall(r'\["(.*?)"\]|\|"(.*?)"\|', block)
    assert labels
    for label in (a or b for a, b in labels):
        assert not re.search(r"#(?!(35|quot|lt|gt);)", label), label
        assert "<" not in label.replace("<br/>", "")
    # AND subgraph ids are unique and contain no characters Mermaid rejects
    ids = re.findall(r"subgraph (\S+)\[", block)
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"\w+", i) for i in ids)
    assert "subgraph ix_ByNote" in block


def test_describe_all_joins_titled_documents() -> None:
    # WHEN two models are described together with titles
    text = describe_all([("A/Data — data model `shop`", shop_model), (None, saas_model)])
    # THEN each document has its heading, separated by a rule
    assert text.startswith("# A/Data — data model `shop`\n")
    assert "\n---\n\n# Data model `saas`\n" in text


# --------------------------------------------------------------------------- purity


def test_describing_a_model_module_never_imports_the_cdk() -> None:
    # GIVEN a fresh interpreter reporting every module it imports
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "constructs_lib", "describe", "examples.shop.model"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    # THEN the command succeeds and no CDK package was imported
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Data model `shop`")
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "constructs_lib.docgen.describe" in imported
    assert not {m for m in imported if m.split(".")[0] in ("aws_cdk", "constructs", "jsii")}


def test_describe_says_which_queries_filter_on_the_entity_attribute_and_why() -> None:
    # GIVEN Order and Refund overloading GSI1 with identical keys, and a profile read by a range
    model = Model("iso", entities=[
        Entity("Order", pk="ORDER#{id}", sk="ORDER", fields=["id", "email"],
               indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="ID#{id}")}),
        Entity("Refund", pk="REFUND#{id}", sk="REFUND", fields=["id", "email"],
               indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="ID#{id}")}),
    ], indexes=[Index("GSI1")], access_patterns=[
        AccessPattern("order of email", entity="Order", index="GSI1", sk="="),
        AccessPattern("orders of email", entity="Order", index="GSI1"),
        AccessPattern("order", entity="Order", sk="begins_with"),
    ])
    # WHEN it is described
    text = describe(model)
    section = _section(text, "Access patterns")
    # THEN the filtered queries are listed with the reason: another entity's keys, or an unbounded range
    assert "- order of email: keys of Refund may satisfy its key condition" in section
    assert "- orders of email: its sort-key condition (none) is not bounded to the entity's keys; Refund may " \
           "share its partition" in section
    # AND the provably isolated one is not, and its example request sends no filter
    rows = {r[0].strip(): r[5].strip() for r in _rows(section)}
    assert "- order:" not in section and "filter" not in rows["order"]
    assert rows["order of email"].endswith('; filter _type IN ("Order")`')
    # AND the identical keys are among the design warnings
    assert "index 'GSI1': entities 'Order' and 'Refund'" in text
