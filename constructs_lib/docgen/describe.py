"""See a data model: Markdown documentation with a Mermaid diagram of its item collections.

:func:`describe` renders, for one ``Model``: the table's key, entity, TTL and tenant attributes;
each entity's key templates with example keys, fields and types; every access pattern with its
index, operation, key condition and the exact request the runtime sends for example values; each
index's projection, sparse membership and tenant safety; estimated capacity units per write and
per page (:mod:`.capacity_tables`); design and cost warnings; and a Mermaid
``flowchart`` of the item collections of the table and each index. Example keys and requests are
built by the runtime, never re-implemented here. No AWS CDK import.

See docs/adr/0026-model-docs-in-the-cloud-assembly.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..capacity.warnings import cost_warnings
from ..model.entity import SHARD
from ..model.examples import EXAMPLE_TIME, HIGH, example_value, example_values
from ..model.examples import sparse_values as _sparse_values
from ..model.overlap import UNBOUNDED
from ..model.templates import SEPARATOR, KeyTemplate, Placeholder
from ..runtime import request_params
from ..runtime.exceptions import RuntimeClientError
from ..runtime.items import ItemMapper
from .capacity_tables import capacity_section

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.resolved import ResolvedEntity, ResolvedIndex, ResolvedPattern

__all__ = ["EXAMPLE_TIME", "describe", "describe_all", "example_value", "example_values", "mermaid"]


# Text helpers ---------------------------------------------------------------------------------------
def _code(text: object) -> str:
    """``text`` as a Markdown code span safe inside a table cell."""
    s = str(text).replace("|", "\\|")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _field_type(entity: ResolvedEntity, name: str) -> str:
    spec = entity.field(name)
    if spec.kind == "number":
        return f"number ({spec.width} digits, zero-padded in keys)"
    if spec.kind == "timestamp":
        return "timestamp (ISO-8601 UTC)"
    if spec.kind == "date":
        return "date (YYYY-MM-DD)"
    if spec.choices:
        return "enum: " + ", ".join(spec.choices)
    return "string"


def _template_prefix(template: KeyTemplate, placeholders: int) -> str:
    """The template text before its ``placeholders + 1``-th placeholder, ending on ``#``."""
    out: list[str] = []
    seen = 0
    for seg in template.segments:
        if isinstance(seg, Placeholder):
            if seen == placeholders:
                return SEPARATOR.join(out) + SEPARATOR if out else ""
            seen += 1
        out.append(str(seg))
    return SEPARATOR.join(out)


# Indexes and membership ---------------------------------------------------------------------------
def _projection(model: Model, index: ResolvedIndex) -> str:
    """The projection as :class:`~constructs_lib.SingleTable` builds it (the entity attribute is
    always projected)."""
    if index.projection == "ALL":
        return "ALL"
    extra = [a for a in index.projection if a != model.entity_attribute] if isinstance(index.projection, tuple) else []
    return "INCLUDE " + ", ".join([model.entity_attribute, *extra])


def membership(entity: ResolvedEntity, index_name: str) -> list[str]:
    """Conditions under which an item of ``entity`` is in index ``index_name`` ([] = always)."""
    key = entity.indexes[index_name]
    inputs = {f for _, t in key.written for f in t.fields}
    if key.sharded:  # the shard is derived from shard_by
        inputs = (inputs - {SHARD}) | set(key.shard_by)
    always = set(entity.table_key_fields) | set(entity.required)
    special = set(key.when_equals) | ({key.when_present} if key.when_present else set())
    out = []
    missing = sorted(inputs - always - special)
    if missing:
        out.append(", ".join(_code(f) for f in missing) + (" is" if len(missing) == 1 else " are") + " present")
    if key.when_present:
        out.append(f"{_code(key.when_present)} is present")
    for attr, allowed in key.when_equals.items():
        out.append(f"{_code(attr)} = {_code(allowed[0])}" if len(allowed) == 1
                   else f"{_code(attr)} is one of " + ", ".join(_code(v) for v in allowed))
    return out


def _index_members(model: Model, index: ResolvedIndex) -> list[ResolvedEntity]:
    return [e for e in model.entities.values() if index.name in e.indexes]


# Access patterns ------------------------------------------------------------------------------------
def _pattern_keys(model: Model, r: ResolvedPattern) -> tuple[KeyTemplate, str, KeyTemplate | None, str | None]:
    return r.pk_template, r.pk_attribute, r.sk_template, r.sk_attribute


def _condition(model: Model, r: ResolvedPattern) -> str:
    """The key condition with templates, e.g. ``PK = USER#{user_id} AND begins_with(SK, ORDER#)``."""
    pk_t, pk_attr, sk_t, sk_attr = _pattern_keys(model, r)
    text = f"{pk_attr} = {pk_t.source}"
    op = r.sk
    if op is None or sk_t is None:
        return text
    n = len(r.sk_fields)
    if op == "=":
        return f"{text} AND {sk_attr} = {sk_t.source}"
    if op == "begins_with":
        return f"{text} AND begins_with({sk_attr}, {_template_prefix(sk_t, n)})"
    last = r.sk_fields[-1]
    head = _template_prefix(sk_t, n - 1)
    if op == "between":
        return f"{text} AND {sk_attr} BETWEEN {head}{{{last}: low}} AND {head}{{{last}: high}}"
    return f"{text} AND {sk_attr} {op} {head}{{{last}}}"


def _render_expression(text: str, names: Mapping[str, str], values: Mapping[str, Any]) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in names:
            return names[token]
        ((kind, value),) = values[token].items()
        return value if kind == "N" else '"' + str(value).replace('"', '\\"') + '"'

    return re.sub(r"#n\d+|:v\d+", one, text)


def _example_request(model: Model, r: ResolvedPattern, mapper: ItemMapper) -> str:
    """What the runtime sends for this pattern with example values (GetItem key or Query), or
    why no example could be built."""
    try:
        return _request_text(model, r, mapper)
    except RuntimeClientError as exc:
        return f"(no example: {exc})"


def _request_text(model: Model, r: ResolvedPattern, mapper: ItemMapper) -> str:
    entities = [model.entity(e) for e in r.entities]
    index_names = [r.index.name] if r.index is not None else []
    vals = example_values(model, entities[0], sparse=True)
    vals.update(_sparse_values(entities[0], index_names))
    if r.sk == "between":
        last = r.sk_fields[-1]
        vals[last] = (example_value(entities[0], last, 1), example_value(entities[0], last, HIGH))
    if r.operation == "GetItem":
        key = mapper.table_key(entities[0], vals)
        return "Key: " + ", ".join(f'{k} = "{v}"' for k, v in key.items())
    params = request_params.query_params(mapper, "example-table", r, {**vals, SHARD: 0} if r.shards else vals)
    names = params.get("ExpressionAttributeNames", {})
    values = params.get("ExpressionAttributeValues", {})
    text = _render_expression(params["KeyConditionExpression"], names, values)
    if r.shards:
        merged_by = (r.index.sk_attribute if r.index else None) or "shard"
        text += f" (shard 00; likewise for shards 01..{r.shards - 1:02d}, merged by {merged_by})"
    if "FilterExpression" in params:
        text += "; filter " + _render_expression(params["FilterExpression"], names, values)
    if r.descending:
        text += "; ScanIndexForward = false"
    return text


# Mermaid ------------------------------------------------------------------------------------------
def _mm(text: str) -> str:
    """Text for a quoted Mermaid label (entity codes for characters Mermaid would interpret)."""
    for raw, code in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(raw, code)
    return text


def _mm_id(*parts: str) -> str:
    return "_".join(re.sub(r"[^A-Za-z0-9]", "_", p) for p in parts)


def mermaid(model: Model) -> str:
    """A Mermaid ``flowchart`` of the item collections of the table and of every index.

    Entities whose partition-key templates are identical share an item collection (one Query
    reads them together); each collection is a box inside its table or index. Dotted arrows
    lead from an entity in the table to its copies in indexes, labelled with the sparse
    membership condition when there is one.
    """
    lines = ["flowchart LR"]
    containers: list[tuple[str, str, list[tuple[ResolvedEntity, KeyTemplate, KeyTemplate | None]]]] = []
    sk_attr = model.sk_attribute if model.has_sort_key else None
    table_rows = [(e, e.pk_template, e.sk_template) for e in model.entities.values()]
    containers.append(("table", f"table · {model.pk_attribute}" + (f" / {sk_attr}" if sk_attr else ""), table_rows))
    for index in model.indexes.values():
        rows = []
        for entity in _index_members(model, index):
            key = entity.indexes[index.name]
            rows.append((entity, key.pk_template, key.sk_template))
        keys = index.pk_attribute + (f" / {index.sk_attribute}" if index.sk_attribute else "")
        containers.append((index.name, f"{index.kind} {index.name} · {keys} · {_projection(model, index)}", rows))
    for name, label, rows in containers:
        cid = _mm_id("ix", name)
        lines.append(f'  subgraph {cid}["{_mm(label)}"]')
        lines.append("    direction TB")
        groups: dict[tuple[object, ...], list[tuple[ResolvedEntity, KeyTemplate, KeyTemplate | None]]] = {}
        for row in rows:
            groups.setdefault(row[1].segments, []).append(row)
        for number, members in enumerate(groups.values(), start=1):
            lines.append(f'    subgraph {_mm_id("c", name, str(number))}["{_mm(members[0][1].source)}"]')
            for entity, _, sk_t in members:
                text = entity.name + (f"<br/>{_mm(sk_t.source)}" if sk_t is not None else "")
                lines.append(f'      {_mm_id("e", name, entity.name)}["{text}"]')
            lines.append("    end")
        lines.append("  end")
    for index in model.indexes.values():
        for entity in _index_members(model, index):
            cond = " and ".join(re.sub(r"`", "", c) for c in membership(entity, index.name))
            arrow = f'-.->|"{_mm(cond)}"|' if cond else "-.->"
            lines.append(f"  {_mm_id('e', 'table', entity.name)} {arrow} {_mm_id('e', index.name, entity.name)}")
    return "\n".join(lines)


# The document -----------------------------------------------------------------------------------------
def describe(
    model: Model, *, title: str | None = None, intro: Sequence[str] = (), sections: Sequence[str] = ()
) -> str:
    """Markdown documentation of ``model`` (see the module docstring for its sections).

    Parameters
    ----------
    model
        A validated model.
    title
        Heading text. Default ``"Data model `<name>`"``; constructs pass their path
        (``"ShopStack/Data — data model `shop`"``).
    intro
        Markdown lines after the model's summary line (what the table is, see
        :mod:`constructs_lib.docgen.tables`). Default none.
    sections
        Markdown lines after the access patterns (the table's functions). Default none.

    Returns
    -------
    str
        The Markdown text, ending with a newline. Deterministic for a given model.
    """
    mapper = ItemMapper(model)  # the runtime builds every example key and request
    out = [f"# {title or f'Data model {_code(model.name)}'}", ""]
    attrs = [f"partition key {_code(model.pk_attribute)}"]
    if model.has_sort_key:
        attrs.append(f"sort key {_code(model.sk_attribute)}")
    attrs.append(f"entity attribute {_code(model.entity_attribute)}")
    attrs.append(f"TTL attribute {_code(model.ttl_attribute)}" if model.ttl_attribute else "no TTL attribute")
    if model.tenant_field:
        attrs.append(f"tenant field {_code(model.tenant_field)}")
    out += [f"Model {_code(model.name)}: " + ", ".join(attrs) + ".", "", *intro]
    out += _entities_section(model, mapper)
    out += _patterns_section(model, mapper)
    out += sections
    out += _indexes_section(model)
    if model.tenant_field:
        out += _tenancy_section(model)
    out += capacity_section(model)
    out += ["## Warnings", ""]
    warnings = [*model.warnings(), *cost_warnings(model)]
    out += [f"- **{w.code}** — {_cell(w.message)}" for w in warnings] or ["None."]
    out += ["", "## Item collections", "", "```mermaid", mermaid(model), "```", ""]
    return "\n".join(out)


def describe_all(models: Sequence[tuple[str | None, Model]]) -> str:
    """Several documents (``(title, model)`` pairs) separated by horizontal rules."""
    return "\n---\n\n".join(describe(m, title=t) for t, m in models)


def _entities_section(model: Model, mapper: ItemMapper) -> list[str]:
    out = ["## Entities", ""]
    for entity in model.entities.values():
        out += [f"### {entity.name}", ""]
        if entity.description:
            out += [entity.description, ""]
        try:
            item = mapper.build_item(entity, example_values(model, entity))
        except RuntimeClientError as exc:  # shown, not raised: the page documents the model
            out += [f"(no example item: {_cell(exc)})", ""]
            item = {}
        pk_example, sk_example = item.get(model.pk_attribute, "—"), item.get(model.sk_attribute, "—")
        rows = [("table", "partition key", _code(model.pk_attribute), _code(entity.pk), _code(pk_example))]
        if entity.sk is not None:
            rows.append(("table", "sort key", _code(model.sk_attribute), _code(entity.sk), _code(sk_example)))
        for name, key in entity.indexes.items():
            for attr, t in key.written:
                part = "sort key" if attr == key.sk_attribute else "partition key"
                rows.append((f"{key.kind} {name}", part, _code(attr), _code(t.source), _code(item.get(attr, "—"))))
        out += _table(["index", "key", "attribute", "template", "example"], rows) + [""]
        if entity.fields:
            field_rows = [(_code(f), _cell(_field_type(entity, f)), _code(item.get(f, example_value(entity, f))))
                          for f in entity.fields]
            out += _table(["field", "type", "example"], field_rows) + [""]
        notes = []
        if entity.required:
            notes.append("required attributes: " + ", ".join(_code(r) for r in entity.required))
        if entity.attributes:
            notes.append("other attributes: " + ", ".join(f"{_code(a)} ({k})" for a, k in entity.attributes.items()))
        if entity.version_attribute:
            notes.append(f"version attribute {_code(entity.version_attribute)} (optimistic locking, bumped on every write)")
        if model.ttl_attribute:
            notes.append(f"TTL attribute {_code(model.ttl_attribute)} (epoch seconds; optional, the item expires after it)")
        if model.tenant_field:
            notes.append(f"tenant field {_code(model.tenant_field)}")
        for name, key in entity.sharded_indexes().items():
            notes.append(
                f"index {name}: write-sharded over {key.shards} partitions; {_code('{' + SHARD + '}')} = "
                f"sha256({' # '.join(key.shard_by)}) mod {key.shards}, two digits (recomputed on every write)"
            )
        out += [f"- {n}" for n in notes] + ([""] if notes else [])
    return out


def _patterns_section(model: Model, mapper: ItemMapper) -> list[str]:
    out = ["## Access patterns", ""]
    if not model.resolved_patterns:
        return out + ["None declared.", ""]
    rows = []
    for r in model.resolved_patterns.values():
        index = "table" if r.index is None else f"{r.index.kind} {r.index.name}"
        order = " (descending)" if r.descending else ""
        operation = f"{r.shards} Queries, merged" if r.shards else r.operation
        mark = " *(consumer)*" if r.name in model.consumer_patterns else ""
        rows.append((
            _cell(r.name) + mark, ", ".join(r.entities), index, operation + order,
            _code(_condition(model, r)), _code(_example_request(model, r, mapper)),
        ))
    out += _table(["pattern", "entities", "index", "operation", "key condition", "example (as the runtime sends it)"], rows)
    if model.consumer_patterns:
        out += ["", f"*(consumer)*: declared by this consumer's view of model {_code(model.name)}, not by the table's "
                "owner; it reads the owner's keys and indexes (same fingerprints).", ""]
    out += _entity_filter_notes(model)
    sharded = [r for r in model.resolved_patterns.values() if r.shards]
    if sharded:
        out += ["", "Read cost of patterns on write-sharded index keys (writes spread over N partitions):", ""]
        for r in sharded:
            out.append(
                f"- {_cell(r.name)}: one page = {r.shards} Queries, one per shard partition, run in parallel (at "
                f"most 8 at once) and merged in sort-key order; each costs at least 0.5 RCU even when empty, and "
                f"with `limit=n` each shard first reads its share of n with margin (at most ceil(1.5 × n / {r.shards}) "
                f"+ 2 items; more if it runs dry), so a page reads up to about 1.5× the items it returns. The cursor "
                f"resumes every shard."
            )
    return out + ["", *READ_COST_NOTE, ""]


def _entity_filter_notes(model: Model) -> list[str]:
    """Which queries filter on the entity attribute, and why (ADR 0036)."""
    filtered = [r for r in model.resolved_patterns.values() if r.entity_filter]
    if not filtered:
        return []
    out = ["", f"Queries that filter on the entity attribute {_code(model.entity_attribute)} (items of other entities "
           "the key condition selects are read and paid for, never returned):", ""]
    for r in filtered:
        who = ", ".join(r.intruders)
        if r.sk in UNBOUNDED:
            why = f"its sort-key condition ({r.sk or 'none'}) is not bounded to the entity's keys"
            why += f"; {who} may share its partition" if who else ""
        else:
            why = f"keys of {who} may satisfy its key condition (a partition and sort-key range they can share)"
        out.append(f"- {_cell(r.name)}: {why}")
    return out


#: What filters and projections on these patterns save, and what they do not (ADR 0031).
READ_COST_NOTE = (
    "Read cost: a `filter=` on a query drops items after DynamoDB has read them, so it does not reduce "
    "read cost (every item the key condition selects is charged); select with the key instead, and "
    "watch `record_traffic()` reports for filter-heavy patterns. A projection (`attributes=`) saves bytes "
    "on the wire and Lambda memory, not read capacity: base-table reads are charged on the full item size. "
    "An index's own projection (`KEYS_ONLY`, `INCLUDE`) is what reduces its storage and read capacity.",
)


def _indexes_section(model: Model) -> list[str]:
    out = ["## Indexes", ""]
    if not model.indexes:
        return out + ["No secondary index.", ""]
    rows = []
    for index in model.indexes.values():
        members = _index_members(model, index)
        sparse = len(members) < len(model.entities) or any(membership(e, index.name) for e in members)
        keys = ", ".join(_code(a) for a in (index.pk_attribute, index.sk_attribute) if a)
        rows.append((index.name, index.kind, keys, _code(_projection(model, index)),
                     ", ".join(e.name for e in members), "sparse" if sparse else "every item"))
    out += _table(["index", "kind", "key attributes", "projection", "entities", "membership"], rows) + [""]
    intro = "Who is in each index, and when (an item outside it carries none of its key attributes):"
    out += ["### Sparse membership", "", intro, ""]
    for index in model.indexes.values():
        out.append(f"- **{index.name}**")
        for entity in _index_members(model, index):
            cond = membership(entity, index.name)
            out.append(f"  - {entity.name}: " + ("only when " + " and ".join(cond) if cond else "every item"))
        absent = [e.name for e in model.entities.values() if index.name not in e.indexes]
        if absent:
            out.append("  - never: " + ", ".join(absent) + " (no keys declared for this index)")
    return out + [""]


def _tenancy_section(model: Model) -> list[str]:
    safe = set(model.tenant_safe_gsis)
    intro = (
        f"Tenant field {_code(model.tenant_field)}: every partition key starts with "
        f"{_code((model.tenant_key_prefix or '') + '<tenant>')}, so one IAM `dynamodb:LeadingKeys` condition "
        "confines a principal to its tenant."
    )
    out = ["## Tenancy", "", intro, ""]
    rows = [("table", "yes")]
    for index in model.indexes.values():
        if index.kind == "LSI":
            rows.append((index.name, "yes (shares the table partition key)"))
        else:
            safety = "yes" if index.name in safe else "**no** — mixes tenants; denied to tenant-scoped principals"
            rows.append((index.name, safety))
    out += _table(["index", "tenant-safe"], rows)
    return out + [""]
