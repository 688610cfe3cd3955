"""Translate CloudFormation DynamoDB table resources into CreateTable requests (private).

Pure: no AWS calls, standard library only. Used by :mod:`constructs_lib.testing.local_deploy`.
Every property that cannot be reproduced in DynamoDB Local is collected as a path in
``TablePlan.ignored``; nothing is dropped silently.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from constructs_lib.testing.exceptions import LocalDeployError

TABLE = "AWS::DynamoDB::Table"
GLOBAL_TABLE = "AWS::DynamoDB::GlobalTable"
LAMBDA_FUNCTION = "AWS::Lambda::Function"
#: Resource types :func:`deploy_template` creates; everything else is skipped.
SUPPORTED_RESOURCE_TYPES = frozenset({TABLE, GLOBAL_TABLE})

#: Account id DynamoDB Local puts in every ARN; used for ``{"Ref": "AWS::AccountId"}``.
LOCAL_ACCOUNT_ID = "000000000000"
TABLE_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]*$")
_CDK_HASH_RE = re.compile(r"^[0-9A-F]{8}$")


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------
def load_template(template: Mapping[str, Any] | str | os.PathLike[str]) -> Mapping[str, Any]:
    """A template dict, or the parsed JSON of the template file at *template*."""
    if isinstance(template, Mapping):
        loaded: Any = template
    elif isinstance(template, (str, os.PathLike)):
        path = Path(template)
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise LocalDeployError(f"Template file {str(path)!r} does not exist.") from exc
        except json.JSONDecodeError as exc:
            raise LocalDeployError(f"Template file {str(path)!r} is not valid JSON: {exc}") from exc
    else:
        raise LocalDeployError(
            f"template must be a mapping or a path to a template JSON file, got {type(template).__name__}"
        )
    if not isinstance(loaded, Mapping) or not isinstance(loaded.get("Resources"), Mapping):
        raise LocalDeployError("Template has no 'Resources' mapping; is it a CloudFormation template?")
    return loaded


def match_logical_id(candidates: Iterable[str], key: str, what: str) -> str:
    """Resolve an exact logical id or a unique prefix (CDK appends an 8-hex-digit hash).

    When several ids start with *key*, the one whose remainder is exactly a CDK hash wins
    (``"DataTable"`` picks ``DataTable447BC44E`` over ``DataTableArchive1A2B3C4D``).
    """
    ids = list(candidates)
    if key in ids:
        return key
    matches = sorted(c for c in ids if c.startswith(key)) if key else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        hashed = [c for c in matches if _CDK_HASH_RE.match(c[len(key) :])]
        if len(hashed) == 1:
            return hashed[0]
        raise LocalDeployError(f"{what} {key!r} is ambiguous: it matches {', '.join(matches)}.")
    known = ", ".join(sorted(ids)) or "none"
    raise LocalDeployError(f"No {what} with logical id or prefix {key!r}. Known: {known}.")


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


# --------------------------------------------------------------------------------------------
# Planning: template resource -> CreateTable request (pure, no AWS calls)
# --------------------------------------------------------------------------------------------
@dataclass
class TablePlan:
    logical_id: str
    resource_type: str
    request: dict[str, Any]
    ttl_attribute: str | None
    ignored: list[str]


class TablePlanner:
    """Translates one table resource; collects the paths it cannot reproduce."""

    def __init__(self, logical_id: str, resource: Mapping[str, Any], *, region: str) -> None:
        self.lid = logical_id
        self.type = str(resource["Type"])
        props = resource.get("Properties") or {}
        if not isinstance(props, Mapping):
            raise self.error("Properties", "must be a mapping")
        self.props: Mapping[str, Any] = props
        self.region = region
        self.ignored: list[str] = []
        if "Condition" in resource:
            self.ignored.append("Condition")

    # -- value checks -----------------------------------------------------------------------
    def error(self, path: str, problem: str) -> LocalDeployError:
        return LocalDeployError(f"{self.type} {self.lid!r}: {path} {problem}.")

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be a plain string to deploy locally, got {value!r}")
        return value

    def number(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.error(path, f"must be a number, got {value!r}")
        try:
            return int(value)
        except ValueError as exc:
            raise self.error(path, f"must be a number, got {value!r}") from exc

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(path, f"must be a mapping, got {value!r}")
        return value

    def items(self, value: Any, path: str) -> list[Mapping[str, Any]]:
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {value!r}")
        return [self.mapping(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def ignore_rest(self, obj: Mapping[str, Any], handled: Iterable[str], path: str) -> None:
        handled_set = set(handled)
        self.ignored.extend(f"{path}{k}" for k in obj if k not in handled_set)

    # -- pieces -----------------------------------------------------------------------------
    def key_schema(self, value: Any, path: str) -> list[dict[str, str]]:
        return [
            {
                "AttributeName": self.string(k.get("AttributeName"), f"{path}[{i}].AttributeName"),
                "KeyType": self.string(k.get("KeyType"), f"{path}[{i}].KeyType"),
            }
            for i, k in enumerate(self.items(value, path))
        ]

    def projection(self, value: Any, path: str) -> dict[str, Any]:
        proj = self.mapping(value if value is not None else {}, path)
        out: dict[str, Any] = {
            "ProjectionType": self.string(proj.get("ProjectionType", "ALL"), f"{path}.ProjectionType")
        }
        if "NonKeyAttributes" in proj:
            attrs = proj["NonKeyAttributes"]
            if not isinstance(attrs, list):
                raise self.error(f"{path}.NonKeyAttributes", f"must be a list, got {attrs!r}")
            out["NonKeyAttributes"] = [self.string(a, f"{path}.NonKeyAttributes") for a in attrs]
        self.ignore_rest(proj, ("ProjectionType", "NonKeyAttributes"), f"{path}.")
        return out

    def throughput(self, read: int, write: int) -> dict[str, int]:
        return {"ReadCapacityUnits": max(read, 1), "WriteCapacityUnits": max(write, 1)}

    def autoscaled_or_fixed(self, settings: Any, fixed_key: str, auto_key: str, path: str) -> int:
        """Capacity from a GlobalTable ``Read/WriteProvisionedThroughputSettings``: the fixed
        units, or the autoscaling ``MinCapacity`` (autoscaling itself is recorded as ignored)."""
        s = self.mapping(settings, path)
        if fixed_key in s:
            value = self.number(s[fixed_key], f"{path}.{fixed_key}")
        elif auto_key in s:
            auto = self.mapping(s[auto_key], f"{path}.{auto_key}")
            value = self.number(auto.get("MinCapacity", 1), f"{path}.{auto_key}.MinCapacity")
            self.ignored.append(f"{path}.{auto_key}")
        else:
            raise self.error(path, f"has neither {fixed_key} nor {auto_key}")
        self.ignore_rest(s, (fixed_key, auto_key), f"{path}.")
        return value

    # -- the plan ---------------------------------------------------------------------------
    def plan(self, name_prefix: str) -> TablePlan:
        p = self.props
        is_global = self.type == GLOBAL_TABLE
        request: dict[str, Any] = {}

        name = p.get("TableName")
        if isinstance(name, str) and name:
            request["TableName"] = name
        else:
            if name is not None:
                self.ignored.append("TableName")  # an intrinsic: cannot evaluate it locally
            base = f"{name_prefix}{self.lid}"[:246]
            request["TableName"] = f"{base}-{secrets.token_hex(4)}"

        request["KeySchema"] = self.key_schema(p.get("KeySchema"), "KeySchema")
        request["AttributeDefinitions"] = [
            {
                "AttributeName": self.string(a.get("AttributeName"), f"AttributeDefinitions[{i}].AttributeName"),
                "AttributeType": self.string(a.get("AttributeType"), f"AttributeDefinitions[{i}].AttributeType"),
            }
            for i, a in enumerate(self.items(p.get("AttributeDefinitions"), "AttributeDefinitions"))
        ]

        has_table_pt = not is_global and "ProvisionedThroughput" in p
        default_billing = "PROVISIONED" if has_table_pt else "PAY_PER_REQUEST"
        billing = self.string(p.get("BillingMode", default_billing), "BillingMode")
        if billing not in ("PROVISIONED", "PAY_PER_REQUEST"):
            raise self.error("BillingMode", f"must be PROVISIONED or PAY_PER_REQUEST, got {billing!r}")
        provisioned = billing == "PROVISIONED"
        request["BillingMode"] = billing

        replica, replica_path = self.local_replica(provisioned) if is_global else ({}, "")
        replica_gsis = self.replica_gsis(replica, replica_path, provisioned)

        if provisioned:
            request["ProvisionedThroughput"] = self.table_throughput(replica, replica_path)
        elif has_table_pt:
            self.ignored.append("ProvisionedThroughput")

        gsis = []
        for i, gsi in enumerate(self.items(p.get("GlobalSecondaryIndexes", []), "GlobalSecondaryIndexes")):
            index = self.string(gsi.get("IndexName"), f"GlobalSecondaryIndexes[{i}].IndexName")
            path = f"GlobalSecondaryIndexes[{index}]"
            out: dict[str, Any] = {
                "IndexName": index,
                "KeySchema": self.key_schema(gsi.get("KeySchema"), f"{path}.KeySchema"),
                "Projection": self.projection(gsi.get("Projection"), f"{path}.Projection"),
            }
            handled = ["IndexName", "KeySchema", "Projection"]
            if provisioned:
                out["ProvisionedThroughput"] = self.gsi_throughput(gsi, path, replica_gsis.get(index), index)
                handled.append("WriteProvisionedThroughputSettings" if is_global else "ProvisionedThroughput")
            self.ignore_rest(gsi, handled, f"{path}.")
            gsis.append(out)
        if gsis:
            request["GlobalSecondaryIndexes"] = gsis

        lsis = []
        for i, lsi in enumerate(self.items(p.get("LocalSecondaryIndexes", []), "LocalSecondaryIndexes")):
            index = self.string(lsi.get("IndexName"), f"LocalSecondaryIndexes[{i}].IndexName")
            path = f"LocalSecondaryIndexes[{index}]"
            lsis.append(
                {
                    "IndexName": index,
                    "KeySchema": self.key_schema(lsi.get("KeySchema"), f"{path}.KeySchema"),
                    "Projection": self.projection(lsi.get("Projection"), f"{path}.Projection"),
                }
            )
            self.ignore_rest(lsi, ("IndexName", "KeySchema", "Projection"), f"{path}.")
        if lsis:
            request["LocalSecondaryIndexes"] = lsis

        if "StreamSpecification" in p:
            spec = self.mapping(p["StreamSpecification"], "StreamSpecification")
            view = self.string(spec.get("StreamViewType"), "StreamSpecification.StreamViewType")
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view}
            self.ignore_rest(spec, ("StreamViewType",), "StreamSpecification.")

        ttl_attribute = None
        if "TimeToLiveSpecification" in p:
            ttl = self.mapping(p["TimeToLiveSpecification"], "TimeToLiveSpecification")
            if _is_true(ttl.get("Enabled")):
                ttl_attribute = self.string(ttl.get("AttributeName"), "TimeToLiveSpecification.AttributeName")
            self.ignore_rest(ttl, ("Enabled", "AttributeName"), "TimeToLiveSpecification.")

        handled_top = {
            "TableName", "KeySchema", "AttributeDefinitions", "BillingMode",
            "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "StreamSpecification",
            "TimeToLiveSpecification", "ProvisionedThroughput",
        }  # fmt: skip
        if is_global:
            handled_top.add("Replicas")
            handled_top.discard("ProvisionedThroughput")
            if provisioned:
                handled_top.add("WriteProvisionedThroughputSettings")
        self.ignore_rest(p, handled_top, "")
        return TablePlan(self.lid, self.type, request, ttl_attribute, self.ignored)

    def local_replica(self, provisioned: bool) -> tuple[Mapping[str, Any], str]:
        """The replica standing for "this region": Region ``{"Ref": "AWS::Region"}`` or equal
        to the client's region, else the first. Other replicas are recorded as ignored."""
        replicas = self.items(self.props.get("Replicas", []), "Replicas")
        chosen = 0
        for i, r in enumerate(replicas):
            if r.get("Region") == {"Ref": "AWS::Region"} or r.get("Region") == self.region:
                chosen = i
                break
        for i in range(len(replicas)):
            if i != chosen:
                self.ignored.append(f"Replicas[{i}]")
        if not replicas:
            return {}, "Replicas[0]"
        path = f"Replicas[{chosen}]"
        replica = replicas[chosen]
        handled = ["Region", "GlobalSecondaryIndexes"] + (["ReadProvisionedThroughputSettings"] if provisioned else [])
        self.ignore_rest(replica, handled, f"{path}.")
        return replica, path

    def replica_gsis(
        self, replica: Mapping[str, Any], path: str, provisioned: bool
    ) -> dict[str, tuple[Mapping[str, Any], str]]:
        out: dict[str, tuple[Mapping[str, Any], str]] = {}
        for i, g in enumerate(self.items(replica.get("GlobalSecondaryIndexes", []), f"{path}.GlobalSecondaryIndexes")):
            name = self.string(g.get("IndexName"), f"{path}.GlobalSecondaryIndexes[{i}].IndexName")
            gpath = f"{path}.GlobalSecondaryIndexes[{name}]"
            out[name] = (g, gpath)
            handled = ["IndexName"] + (["ReadProvisionedThroughputSettings"] if provisioned else [])
            self.ignore_rest(g, handled, f"{gpath}.")
        return out

    def table_throughput(self, replica: Mapping[str, Any], replica_path: str) -> dict[str, int]:
        if self.type == TABLE:
            pt = self.mapping(self.props.get("ProvisionedThroughput"), "ProvisionedThroughput")
            return self.throughput(
                self.number(pt.get("ReadCapacityUnits"), "ProvisionedThroughput.ReadCapacityUnits"),
                self.number(pt.get("WriteCapacityUnits"), "ProvisionedThroughput.WriteCapacityUnits"),
            )
        write = self.autoscaled_or_fixed(
            self.props.get("WriteProvisionedThroughputSettings"),
            "WriteCapacityUnits",
            "WriteCapacityAutoScalingSettings",
            "WriteProvisionedThroughputSettings",
        )
        read = self.autoscaled_or_fixed(
            replica.get("ReadProvisionedThroughputSettings"),
            "ReadCapacityUnits",
            "ReadCapacityAutoScalingSettings",
            f"{replica_path}.ReadProvisionedThroughputSettings",
        )
        return self.throughput(read, write)

    def gsi_throughput(
        self,
        gsi: Mapping[str, Any],
        path: str,
        replica_gsi: tuple[Mapping[str, Any], str] | None,
        index: str,
    ) -> dict[str, int]:
        if self.type == TABLE:
            pt = self.mapping(gsi.get("ProvisionedThroughput"), f"{path}.ProvisionedThroughput")
            return self.throughput(
                self.number(pt.get("ReadCapacityUnits"), f"{path}.ProvisionedThroughput.ReadCapacityUnits"),
                self.number(pt.get("WriteCapacityUnits"), f"{path}.ProvisionedThroughput.WriteCapacityUnits"),
            )
        write = self.autoscaled_or_fixed(
            gsi.get("WriteProvisionedThroughputSettings"),
            "WriteCapacityUnits",
            "WriteCapacityAutoScalingSettings",
            f"{path}.WriteProvisionedThroughputSettings",
        )
        if replica_gsi is None:
            raise self.error(
                f"Replicas[].GlobalSecondaryIndexes[{index}]",
                "is missing: a PROVISIONED global table needs the index's read capacity in the replica",
            )
        rg, rpath = replica_gsi
        read = self.autoscaled_or_fixed(
            rg.get("ReadProvisionedThroughputSettings"),
            "ReadCapacityUnits",
            "ReadCapacityAutoScalingSettings",
            f"{rpath}.ReadProvisionedThroughputSettings",
        )
        return self.throughput(read, write)
