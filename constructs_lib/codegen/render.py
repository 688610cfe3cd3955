"""The text of a typed module: ``TypedDict`` per entity, a table class delegating to ``TableClient``.

Deterministic: the same model gives the same bytes (declaration order throughout, no time
stamps). Lines stay within :data:`LINE_LENGTH`; the module imports the standard library and
``constructs_lib.runtime`` only, so it can ship in a Lambda asset next to the handler. It imports
modules under aliases (``names.ALIASES``) and qualifies every name it uses (``_b.str``), so no
entity, pattern or field name can shadow one.
"""

from __future__ import annotations

import keyword
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..model import Field, Model, ResolvedEntity, ResolvedPattern
from ..runtime.contract import fingerprint, model_digest
from .names import ALIASES, RESERVED_MEMBERS, Namer, camel, check_get_keys, is_class_key, parameters, snake
from .options import OPTIONS, Option, accepted, get_parameters

LINE_LENGTH = 120
INDENT = "    "

#: Attribute kind (``Entity(attributes=...)``) → annotation and the modules it needs.
ATTRIBUTE_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "string": ("_b.str", ()),
    "number": ("_b.int | _decimal.Decimal", ("decimal",)),
    "integer": ("_b.int", ()),
    "decimal": ("_decimal.Decimal", ("decimal",)),
    "boolean": ("_b.bool", ()),
    "binary": ("_b.bytes", ()),
    "string_set": ("_abc.Set[_b.str]", ("collections.abc",)),
    "number_set": ("_abc.Set[_b.int | _decimal.Decimal]", ("collections.abc", "decimal")),
    "list": ("_b.list[_t.Any]", ("typing",)),
    "map": ("_b.dict[_b.str, _t.Any]", ("typing",)),
    "any": ("_t.Any", ("typing",)),
}


class _Imports:
    """``import module as alias`` lines of the modules the module uses, sorted (stdlib first)."""

    def __init__(self) -> None:
        self.modules: set[str] = {"builtins"}

    def add(self, *modules: str) -> None:
        self.modules.update(modules)

    def lines(self) -> list[str]:
        stdlib = sorted(m for m in self.modules if not m.startswith("constructs_lib"))
        ours = sorted(m for m in self.modules if m.startswith("constructs_lib"))
        out: list[str] = []
        for group in (stdlib, ours):
            out += [f"import {m} as {ALIASES[m]}" for m in group]
            if group:
                out.append("")
        return out


def _literal(values: Iterable[str]) -> str:
    return f"_t.Literal[{', '.join(_quote(v) for v in values)}]"


def _quote(text: str) -> str:
    """A double-quoted Python string literal (repr with the project's quote style)."""
    body = repr(text)[1:-1]
    if repr(text)[0] == "'":
        body = body.replace("\\'", "'").replace('"', '\\"')
    return f'"{body}"'


def _docstring(text: str, indent: str) -> list[str]:
    """A docstring of ``text`` (backslashes and triple quotes escaped; lines too long wrapped)."""
    safe = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip()
    width = LINE_LENGTH - len(indent) - 6  # room for the quotes
    lines = [part for line in safe.split("\n")
             for part in (textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""])]
    if safe.endswith('"'):
        lines[-1] += " "
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *[f"{indent}{line}" if line else "" for line in lines[1:]], f'{indent}"""']


def _signature(name: str, params: Sequence[str], returns: str, *, keyword_from: int | None) -> list[str]:
    """``def name(self, ...) -> returns:``; ``keyword_from``: index of the first keyword-only parameter."""
    parts = ["self"]
    for i, p in enumerate(params):
        if i == keyword_from:
            parts.append("*")
        parts.append(p)
    one = f"{INDENT}def {name}({', '.join(parts)}) -> {returns}:"
    if len(one) <= LINE_LENGTH:
        return [one]
    return [f"{INDENT}def {name}(", *[f"{INDENT * 2}{p}," for p in parts], f"{INDENT}) -> {returns}:"]


def _call(head: str, args: Sequence[str], indent: str, tail: str = "") -> list[str]:
    """``head(args)`` + ``tail`` on one line, or one argument per line."""
    one = f"{indent}{head}({', '.join(args)}){tail}"
    if len(one) <= LINE_LENGTH:
        return [one]
    return [f"{indent}{head}(", *[f"{indent}{INDENT}{a}," for a in args], f"{indent}){tail}"]


@dataclass(frozen=True)
class _EntityNames:
    item: str
    patch: str
    attribute: str
    removable: str
    method: str


class _Generator:
    def __init__(self, model: Model, target: str | None) -> None:
        self.model = model
        self.target = target
        self.imports = _Imports()
        self.imports.add("typing", "constructs_lib.runtime", "constructs_lib.runtime.contract")
        entity_namer = Namer(reserved=())
        self.entities: dict[str, _EntityNames] = {}
        for entity in model.entities.values():
            method = entity_namer.claim(snake(entity.name))
            self.entities[entity.name] = _EntityNames(
                f"{entity.name}Item", f"{entity.name}Patch", f"{entity.name}Attribute", f"{entity.name}Removable", method
            )
        # ResolvedEntity methods are put_/get_/update_/delete_ + the name: claim those too, then the patterns.
        self.namer = Namer({
            *RESERVED_MEMBERS,
            *(f"{op}_{n.method}" for n in self.entities.values() for op in ("put", "get", "update", "delete")),
        })
        self.patterns: dict[str, str] = {
            name: self.namer.claim(snake(name), with_suffixes=("", "_all"))
            for name in model.resolved_patterns
        }

    # Types --------------------------------------------------------------------------------------------
    def field_type(self, field: Field) -> str:
        if field.kind == "string":
            if field.choices:
                return _literal(field.choices)
            return "_b.str"
        if field.kind == "number":
            return "_b.int"
        self.imports.add("datetime")
        return "_dt.datetime | _b.str" if field.kind == "timestamp" else "_dt.date | _b.str"

    def attribute_type(self, kind: str) -> str:
        annotation, needs = ATTRIBUTE_TYPES[kind]
        self.imports.add(*needs)
        return annotation

    def item_keys(self, entity: ResolvedEntity) -> list[tuple[str, str, bool]]:
        """(attribute, annotation, required) of every attribute an item of ``entity`` may carry."""
        model = self.model
        required = set(entity.table_key_fields) | set(entity.required)
        keys: dict[str, str] = {}
        fields: dict[str, Field] = entity.fields  # type: ignore[assignment]
        for name in (*entity.table_key_fields, *fields):
            keys.setdefault(name, self.field_type(fields[name]))
        for name in entity.required:
            if name not in keys:
                keys[name] = self.attribute_type(entity.attributes.get(name, "any"))
        for name, kind in entity.attributes.items():
            keys.setdefault(name, self.attribute_type(kind))
        if entity.version_attribute:
            keys.setdefault(entity.version_attribute, "_b.int")
        if model.ttl_attribute:
            keys.setdefault(model.ttl_attribute, "_b.int")
        keys.setdefault(model.entity_attribute, _literal([entity.name]))
        return [(name, annotation, name in required) for name, annotation in keys.items()]

    def removable(self, entity: ResolvedEntity) -> list[tuple[str, str]]:
        """(attribute, annotation) an update may set or remove: all but the table key, the entity
        attribute and the version attribute (which the runtime maintains)."""
        fixed = {*entity.table_key_fields, self.model.entity_attribute, entity.version_attribute}
        return [(name, annotation) for name, annotation, _ in self.item_keys(entity) if name not in fixed]

    # Module ----------------------------------------------------------------------------------------------
    def module(self) -> str:
        body: list[str] = []
        model = self.model
        body += [
            f"MODEL_NAME = {_quote(model.name)}",
            "#: Fingerprint of the model's keys (``python -m constructs_lib fingerprint``).",
            f"MODEL_FINGERPRINT = {_quote(fingerprint(model))}",
            "#: Digest of the whole model this module was generated from; the table class refuses another.",
            f"MODEL_DIGEST = {_quote(model_digest(model))}",
            "",
            "#: The model's entity names (``TableClient.put(entity, ...)`` and friends).",
            f"EntityName = {_literal(model.entities)}",
        ]
        if model.resolved_patterns:
            body += [
                "#: The model's access pattern names (``TableClient.query(pattern, ...)``).",
                *self._assignment("PatternName", list(model.resolved_patterns)),
            ]
        for entity in model.entities.values():
            body += ["", "", *self.entity_types(entity)]
        body += ["", "", *self.transaction_class()]
        body += ["", "", *self.table_class()]
        head = [
            f"# Generated by `python -m constructs_lib codegen` from data model {_quote(model.name)}. Do not edit:",
            "# regenerate after changing the model (`codegen --check` fails while this file is stale).",
            *_docstring(
                f"Typed access to data model {_quote(model.name)}: one TypedDict per entity and a table class whose\n"
                "methods (one per entity operation and access pattern) delegate to ``TableClient``.\n\n"
                f"Model fingerprint {fingerprint(model)}, digest {model_digest(model)}."
                + (f"\nGenerated from {self.target}." if self.target else ""),
                "",
            ),
            "",
            "from __future__ import annotations",
            "",
            # lines() ends each group with a blank line: one blank line between imports and code.
            *self.imports.lines(),
        ]
        return "\n".join(head + body).rstrip("\n") + "\n"

    def _assignment(self, name: str, values: list[str]) -> list[str]:
        one = f"{name} = {_literal(values)}"
        if len(one) <= LINE_LENGTH:
            return [one]
        return [f"{name} = _t.Literal[", *[f"{INDENT}{_quote(v)}," for v in values], "]"]

    def entity_types(self, entity: ResolvedEntity) -> list[str]:
        names = self.entities[entity.name]
        keys = self.item_keys(entity)
        doc = f"An item of entity {_quote(entity.name)}: table key {entity.pk}" + (f" / {entity.sk}" if entity.sk else "") + "."
        if entity.description:
            doc += f"\n\n{entity.description}"
        out = self._typed_dict(names.item, [(k, a if r else f"_t.NotRequired[{a}]") for k, a, r in keys], doc, total=True)
        removable = self.removable(entity)
        out += ["", ""]
        out += self._typed_dict(
            names.patch, [(k, f"{a} | None") for k, a in removable],
            f"Attributes of {_quote(entity.name)} an update may set (None removes one); also its add/delete amounts.",
            total=False,
        )
        out += ["", "", f"#: Every attribute name of {_quote(entity.name)} (e.g. to read only some)."]
        out += self._assignment(names.attribute, [k for k, _, _ in keys])
        out.append(f"#: Attributes of {_quote(entity.name)} an update may remove.")
        if removable:
            out += self._assignment(names.removable, [k for k, _ in removable])
        else:
            out.append(f"{names.removable} = _t.Never")
        return out

    def _typed_dict(self, name: str, keys: list[tuple[str, str]], doc: str, *, total: bool) -> list[str]:
        flag = "" if total else ", total=False"
        if all(is_class_key(k) for k, _ in keys):
            lines = [f"class {name}(_t.TypedDict{flag}):", *_docstring(doc, INDENT)]
            if keys:
                lines.append("")
            return lines + [f"{INDENT}{k}: {a}" for k, a in keys]
        lines = [f"#: {doc.splitlines()[0]}", f"{name} = _t.TypedDict(", f"{INDENT}{_quote(name)},", f"{INDENT}{{"]
        lines += [f"{INDENT * 2}{_quote(k)}: {a}," for k, a in keys]
        return lines + [f"{INDENT}}},", *([f"{INDENT}total=False,"] if not total else []), ")"]

    # The table class ---------------------------------------------------------------------------------------
    def table_class(self) -> list[str]:
        model = self.model
        cls = f"{camel(model.name)}Table"
        self.class_name = cls
        out = [
            f"class {cls}:",
            *_docstring(
                f"Typed access to a table of data model {_quote(model.name)}; every method delegates to ``client``.\n\n"
                "Raises ModelMismatchError when ``client``'s model is not the one this module was generated from.",
                INDENT,
            ),
            "",
            f"{INDENT}def __init__(self, client: _rt.TableClient) -> None:",
            f"{INDENT * 2}digest = _contract.model_digest(client.model)",
            f"{INDENT * 2}if digest != MODEL_DIGEST:",
            f"{INDENT * 3}raise _rt.ModelMismatchError(",
            f'{INDENT * 4}f"the client\'s model {{client.model.name!r}} (digest {{digest}}) is not the model this typed module "',
            f'{INDENT * 4}f"was generated from ({{MODEL_NAME!r}}, digest {{MODEL_DIGEST}}); regenerate it with "',
            f'{INDENT * 4}"python -m constructs_lib codegen",',
            f"{INDENT * 4}bundled=digest,",
            f"{INDENT * 4}deployed=MODEL_DIGEST,",
            f"{INDENT * 3})",
            f"{INDENT * 2}#: The untyped client every method delegates to.",
            f"{INDENT * 2}self.client = client",
            "",
            f"{INDENT}@classmethod",
            f"{INDENT}def from_environment(cls, **kwargs: _t.Any) -> {cls}:",
            *_docstring("Inside a generated Lambda function: ``TableClient.from_environment(**kwargs)``, typed.", INDENT * 2),
            f"{INDENT * 2}return cls(_rt.TableClient.from_environment(**kwargs))",
        ]
        transaction = f"{camel(model.name)}Transaction"
        out += [
            "",
            f"{INDENT}def transaction(self, *, client_request_token: _b.str | None = None) -> {transaction}:",
            *_docstring("``TableClient.transaction``, typed: ``with table.transaction() as tx: tx.put_...(...)``.",
                        INDENT * 2),
            f"{INDENT * 2}return {transaction}(self.client.transaction(client_request_token=client_request_token))",
        ]
        for entity in model.entities.values():
            out += self.entity_methods(entity)
        for name, resolved in model.resolved_patterns.items():
            out += self.pattern_methods(name, resolved)
        return out

    def _options(self, method: str, entities: Sequence[str], resolved: ResolvedPattern | None = None) -> list[Option]:
        """The options of ``method`` that apply, their ``{attributes}`` placeholder filled in with
        the attribute names of ``entities``."""
        names = " | ".join(self.entities[e].attribute for e in entities)
        chosen = [o for o in OPTIONS[method] if o.name in accepted(method) and o.applies(resolved, self.model)]
        for option in chosen:
            self.imports.add(*option.imports)
        return [replace(o, annotation=o.annotation.replace("{attributes}", names)) for o in chosen]

    def _method(
        self, name: str, params: list[str], returns: str, doc: str, call: str, args: list[str], *,
        keyword_from: int | None, cast: str | None, receiver: str = "self.client",
    ) -> list[str]:
        """A method whose body is one call of ``receiver.call``: its result cast to ``cast``, or
        (``cast`` None) the call as a statement and ``return self`` (a transaction's chaining)."""
        out = ["", *_signature(name, params, returns, keyword_from=keyword_from), *_docstring(doc, INDENT * 2)]
        if cast is None:
            return out + _call(f"{receiver}.{call}", args, INDENT * 2) + [f"{INDENT * 2}return self"]
        one = f"{INDENT * 2}return _t.cast({_quote(cast)}, {receiver}.{call}({', '.join(args)}))"
        if len(one) <= LINE_LENGTH:
            return out + [one]
        wrapped = _call(f"{receiver}.{call}", args, INDENT * 3, ",")
        return out + [f"{INDENT * 2}return _t.cast(", f"{INDENT * 3}{_quote(cast)},", *wrapped, f"{INDENT * 2})"]

    def _key_params(self, entity: ResolvedEntity, fields: Sequence[str], taken: Iterable[str]) -> list[tuple[str, str, str]]:
        """(field, parameter, annotation) of each key field: the parameter is the field's name
        unless that is a keyword, ``self``, a module alias or in ``taken`` (``class`` → ``class_``)."""
        declared: dict[str, Field] = entity.fields  # type: ignore[assignment]
        names = parameters(fields, taken)
        return [(f, names[f], self.field_type(declared[f])) for f in fields]

    def entity_methods(self, entity: ResolvedEntity, *, transaction: str | None = None) -> list[str]:
        """``put_``/``get_``/``update_``/``delete_`` of ``entity`` on the table class; with
        ``transaction`` (the class name), ``put_``/``update_``/``delete_``/``condition_check_``
        adding an action to a transaction and returning it."""
        ops = ("put", "update", "delete", "condition_check") if transaction else ("put", "get", "update", "delete")
        return [line for op in ops for line in self._entity_op(entity, op, transaction)]

    def _entity_op(self, entity: ResolvedEntity, op: str, transaction: str | None) -> list[str]:
        n = self.entities[entity.name]
        ent = _quote(entity.name)
        name = f"{op}_{n.method}"
        where = f"{name} of entity {entity.name!r}"
        options = self._options(f"transaction.{op}" if transaction else op, [entity.name])
        option_params = [f"{o.name}: {o.annotation} = {o.default}" for o in options]
        option_args = [o.call for o in options]
        returns: str = {"put": n.item, "get": f"{n.item} | None", "update": n.item, "delete": f"{n.item} | None"}.get(op, "")
        what = f"``{'Transaction' if transaction else 'TableClient'}.{op}({ent}, {'item' if op == 'put' else 'key'}, ...)``"
        doc = {
            "put": "write a whole item" + ("" if transaction else "; returns it as stored"),
            "get": "the item with this table key, or None",
            "update": "a partial update" + ("" if transaction else "; returns the updated item"),
            "delete": "delete the item" + ("" if transaction else "; returns the deleted item, or None"),
            "condition_check": "the transaction commits only if this item passes the check",
        }[op]
        doc = f"{what}: {doc}."
        if transaction:
            returns, cast, receiver = transaction, None, "self.transaction"
        else:
            cast, receiver = returns, "self.client"
        if op == "put":
            return self._method(name, [f"item: {n.item}", "/", *option_params], returns, doc, op,
                                [ent, "item", *option_args], keyword_from=2, cast=cast, receiver=receiver)
        changes: list[tuple[str, str]] = []
        if op == "update":
            self.imports.add("collections.abc")
            changes = [
                (f"set: {n.patch} | None = None", "set=set"),
                (f"remove: _abc.Sequence[{n.removable}] = ()", "remove=remove"),
                (f"add: {n.patch} | None = None", "add=add"),
                (f"delete: {n.patch} | None = None", "delete=delete"),
            ]
        if op == "get":
            check_get_keys(entity.table_key_fields, get_parameters(), where=where)
        keys = self._key_params(entity, entity.table_key_fields, [c.split(":")[0] for c, _ in changes]
                                + [o.name for o in options])
        params = [f"{p}: {a}" for _, p, a in keys] + [c for c, _ in changes] + option_params
        if op == "get":  # TableClient.get takes the key fields as keywords; a keyword's through **
            spelled = [f"{k}={p}" for k, p, _ in keys if not keyword.iskeyword(k)]
            unspellable = [f"{_quote(k)}: {p}" for k, p, _ in keys if keyword.iskeyword(k)]
            if unspellable:  # typed as Any: mypy would check the values against get's own parameters
                spelled.append(f"**_t.cast(\"_b.dict[_b.str, _t.Any]\", {{{', '.join(unspellable)}}})")
            args = [ent, *option_args, *spelled]
        else:
            key = "{" + ", ".join(f"{_quote(k)}: {p}" for k, p, _ in keys) + "}"
            args = [ent, key, *(a for _, a in changes), *option_args]
        return self._method(name, params, returns, doc, op, args, keyword_from=0, cast=cast, receiver=receiver)

    def transaction_class(self) -> list[str]:
        cls = f"{camel(self.model.name)}Transaction"
        out = [
            f"class {cls}:",
            *_docstring(
                f"Typed actions of one transaction on data model {_quote(self.model.name)} (``TableClient.transaction``):\n"
                "each adds an action and returns the transaction; leaving the ``with`` block commits them atomically.",
                INDENT,
            ),
            "",
            f"{INDENT}def __init__(self, transaction: _rt.Transaction) -> None:",
            f"{INDENT * 2}#: The untyped transaction every method adds to.",
            f"{INDENT * 2}self.transaction = transaction",
            "",
            f"{INDENT}def __enter__(self) -> {cls}:",
            f"{INDENT * 2}return self",
            "",
            f"{INDENT}def __exit__(self, exc_type: _b.object, exc: _b.object, tb: _b.object) -> None:",
            f"{INDENT * 2}self.transaction.__exit__(exc_type, exc, tb)",
            "",
            f"{INDENT}def commit(self) -> None:",
            *_docstring("Commit the actions (``with`` does it on leaving the block).", INDENT * 2),
            f"{INDENT * 2}self.transaction.commit()",
        ]
        for entity in self.model.entities.values():
            out += self.entity_methods(entity, transaction=cls)
        return out

    def pattern_methods(self, name: str, resolved: ResolvedPattern) -> list[str]:
        method = self.patterns[name]
        p = resolved
        entity = self.model.entities[p.entities[0]]
        # A time-bucketed partition key takes the range field too: it is one parameter. The key
        # goes to query() as one mapping, so a field may share an option's name (its parameter won't).
        taken = {o.name for call in ("query", "query_all") for o in self._options(call, p.entities, resolved)}
        keys = self._key_params(entity, list(dict.fromkeys(resolved.pk_fields + resolved.sk_fields)), taken)
        if p.sk == "between" and resolved.sk_fields:
            keys = [(k, q, f"_b.tuple[{a}, {a}]" if k == resolved.sk_fields[-1] else a) for k, q, a in keys]
        values = "{" + ", ".join(f"{_quote(k)}: {q}" for k, q, _ in keys) + "}"
        item = " | ".join(self.entities[e].item for e in p.entities)
        where_read = "the table" if resolved.index is None else f"index {resolved.index.name}"
        doc = f"Access pattern {_quote(name)}: {resolved.operation} on {where_read}"
        if p.sk:
            doc += f", sort key {p.sk}" + (f" on {', '.join(resolved.sk_fields)}" if resolved.sk_fields else "")
        if p.descending:
            doc += ", descending"
        doc += "."
        if name in self.model.consumer_patterns:
            doc += " Consumer-only: declared by this consumer's view, not by the table's owner."
        if p.description:
            doc += f"\n\n{p.description}"
        out: list[str] = []
        for suffix, call, returns in (("", "query", f"_rt.Page[{item}]"), ("_all", "query_all", f"_abc.Iterator[{item}]")):
            if suffix == "_all":
                if resolved.operation != "Query":
                    continue
                self.imports.add("collections.abc")
            options = self._options(call, p.entities, resolved)
            params = [f"{q}: {a}" for _, q, a in keys] + [f"{o.name}: {o.annotation} = {o.default}" for o in options]
            args = [_quote(name), values, *(o.call for o in options)]
            text = doc if not suffix else f"Every item of access pattern {_quote(name)}, following cursors (``query_all``)."
            out += self._method(method + suffix, params, returns, text, call, args, keyword_from=0, cast=returns)
        return out


def generate(model: Model, *, target: str | None = None) -> str:
    """The typed module of ``model`` as text (``target``: how to regenerate it, for the docstring).

    Raises
    ------
    CodegenError
        A table-key field has the name of a parameter of ``TableClient.get`` (``consistent``,
        ``attributes``...), which takes the key as keyword arguments beside them.
    """
    return _Generator(model, target).module()
