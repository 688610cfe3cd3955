"""Do two apps synthesize the same resources? The parity check behind the synth benchmark's ratio.

The synth ratio compares ``app.py``'s stacks with ``handwritten_app.py``'s; it means something
only if both build the same resources. Per stack, two templates are compared on

1. the multiset of resource types (a resource added or removed on one side shows here), and
2. each resource's properties, resources matched by type and logical id *modulo its hash*
   (``DataTableFDBAD0F2`` and ``DataTable447BC44E`` are both ``DataTable``: the hash depends on
   the construct path, which a hand-written app need not reproduce). References (``Ref``,
   ``Fn::GetAtt``, ``${Id}`` in ``Fn::Sub``, ``DependsOn``) are compared the same way; a
   ``DependsOn`` already implied by a reference in the properties is not compared.

Ignored: ``Metadata`` (construct paths, asset paths), the ``AWS::CDK::Metadata`` resource's
properties (the analytics string names the construct classes), and free text naming construct
paths: the properties of :data:`TEXT` (descriptions) and the dashboards' Markdown widgets' text. Asset hashes are
compared as they are: the benchmark gives both apps the same asset bytes. Pure Python, no CDK.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TEXT", "base_id", "compare_templates", "load_templates", "normalize"]

#: A CDK logical id: a readable prefix and an 8-hex-digit hash of the construct path.
_HASHED = re.compile(r"^(?P<base>[A-Za-z0-9]+?)(?P<hash>[0-9A-F]{8})$")
_MARKDOWN = re.compile(r'"markdown":"(?:[^"\\]|\\.)*"')
_SUB_REF = re.compile(r"\$\{(?P<id>[A-Za-z0-9]+)(?P<attr>\.[A-Za-z0-9.]+)?\}")
#: Free text, per resource type, that names construct paths and is not compared.
TEXT: dict[str, frozenset[str]] = {
    "AWS::IAM::Role": frozenset({"Description"}),
    "AWS::Lambda::Function": frozenset({"Description"}),
    "AWS::CloudWatch::Alarm": frozenset({"AlarmDescription"}),
    "AWS::SecretsManager::Secret": frozenset({"Description"}),
    "AWS::SSM::Parameter": frozenset({"Description"}),
}


def base_id(logical_id: str) -> str:
    """``DataTableFDBAD0F2`` → ``DataTable``: the logical id without CDK's path hash."""
    m = _HASHED.match(logical_id)
    return m.group("base") if m else logical_id


def _strip(value: Any, ids: frozenset[str]) -> Any:
    """``value`` with every reference to a logical id in ``ids`` replaced by its :func:`base_id`."""
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in ids:
            return {"Ref": base_id(value["Ref"])}
        if set(value) == {"Fn::GetAtt"} and isinstance(value["Fn::GetAtt"], list) and value["Fn::GetAtt"][0] in ids:
            return {"Fn::GetAtt": [base_id(value["Fn::GetAtt"][0]), *value["Fn::GetAtt"][1:]]}
        return {k: _strip(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip(v, ids) for v in value]
    if isinstance(value, str) and value in ids:  # a generated name (PolicyName) is the logical id
        return base_id(value)
    if isinstance(value, str) and "${" in value:
        return _SUB_REF.sub(lambda m: "${" + (base_id(m["id"]) if m["id"] in ids else m["id"]) + (m["attr"] or "") + "}",
                            value)
    return value


def _references(value: Any) -> set[str]:
    """The logical ids ``value`` references (``Ref``, ``Fn::GetAtt``, ``${Id}`` in a string)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("Ref"), str):
            found.add(value["Ref"])
        if isinstance(value.get("Fn::GetAtt"), list) and value["Fn::GetAtt"]:
            found.add(value["Fn::GetAtt"][0])
        for v in value.values():
            found |= _references(v)
    elif isinstance(value, list):
        for v in value:
            found |= _references(v)
    elif isinstance(value, str):
        found |= {m["id"] for m in _SUB_REF.finditer(value)}
    return found


def _leaves(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it."""
    if isinstance(value, dict):
        return {k: _leaves(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_leaves(v, change) for v in value]
    return change(value) if isinstance(value, str) else value


def normalize(template: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """``(type, base id)`` → the resource's compared parts (``Properties`` without :data:`TEXT`,
    ``DependsOn`` as a sorted list), references by base id. Two resources of one type whose ids
    differ only by hash keep their full ids (the check then needs the same construct paths)."""
    resources: dict[str, Any] = template.get("Resources", {})
    ids = frozenset(resources)
    bases = Counter((r["Type"], base_id(i)) for i, r in resources.items())
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for logical_id, resource in resources.items():
        rtype = resource["Type"]
        key = (rtype, base_id(logical_id) if bases[(rtype, base_id(logical_id))] == 1 else logical_id)
        if rtype == "AWS::CDK::Metadata":
            out[key] = {}
            continue
        props = {k: v for k, v in resource.get("Properties", {}).items() if k not in TEXT.get(rtype, ())}
        if rtype == "AWS::CloudWatch::Dashboard":  # its text widgets' Markdown is free text
            props = _leaves(props, lambda text: _MARKDOWN.sub('"markdown":"(text)"', text))
        depends = resource.get("DependsOn", [])
        parts: dict[str, Any] = {"Properties": _strip(props, ids)}
        # A DependsOn on a resource the properties already reference adds nothing (CloudFormation
        # orders them anyway): compared are the explicit orderings only.
        referenced = _references(props)
        explicit = sorted(base_id(d) for d in ([depends] if isinstance(depends, str) else depends) if d not in referenced)
        if explicit:
            parts["DependsOn"] = explicit
        for extra in ("DeletionPolicy", "UpdateReplacePolicy", "Condition"):
            if extra in resource:
                parts[extra] = resource[extra]
        out[key] = parts
    return out


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where ``a`` and ``b`` first differ (``Properties.Environment.Variables.X``), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}{k} only in {'app.py' if k in a else 'hand-written'}"
            found = _first_difference(a[k], b[k], f"{path}{k}.")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}{i}.")
            if found:
                return found
        return None
    if a == b:
        return None
    return f"{path.rstrip('.')}: app.py {json.dumps(a)[:160]} vs hand-written {json.dumps(b)[:160]}"


def compare_templates(ours: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]]) -> list[str]:
    """Every difference between two apps' templates (stack name → template), empty when they match.

    Per stack: stacks present on one side only, resource types in different numbers, resources
    with no counterpart (same type and base id) and the first differing property of each pair.
    """
    diffs: list[str] = []
    for stack in sorted(set(ours) | set(theirs)):
        if stack not in ours or stack not in theirs:
            diffs.append(f"{stack}: only in {'app.py' if stack in ours else 'the hand-written app'}")
            continue
        a_types = Counter(r["Type"] for r in ours[stack].get("Resources", {}).values())
        b_types = Counter(r["Type"] for r in theirs[stack].get("Resources", {}).values())
        for rtype in sorted(set(a_types) | set(b_types)):
            if a_types[rtype] != b_types[rtype]:
                diffs.append(f"{stack} {rtype}: app.py {a_types[rtype]}, hand-written {b_types[rtype]}")
        a, b = normalize(ours[stack]), normalize(theirs[stack])
        for key in sorted(set(a) | set(b)):
            rtype, name = key
            if key not in a or key not in b:
                diffs.append(f"{stack} {rtype} {name}: only in {'app.py' if key in a else 'the hand-written app'}")
                continue
            found = _first_difference(a[key], b[key])
            if found:
                diffs.append(f"{stack} {rtype} {name}: {found}")
        outputs_a, outputs_b = set(ours[stack].get("Outputs", {})), set(theirs[stack].get("Outputs", {}))
        if outputs_a != outputs_b:
            diffs.append(f"{stack} outputs: app.py {sorted(outputs_a)}, hand-written {sorted(outputs_b)}")
    return diffs


def load_templates(outdir: Path, stacks: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """Stack name → template, from the ``*.template.json`` files of a cloud assembly (only ``stacks``)."""
    out = {}
    for path in sorted(outdir.glob("*.template.json")):
        name = path.name.removesuffix(".template.json")
        if stacks is None or name in stacks:
            out[name] = json.loads(path.read_text(encoding="utf-8"))
    return out
