"""The data model: pure Python, no AWS CDK import (it is bundled into Lambda functions).

Declare entities with key templates, secondary indexes and access patterns; the model
validates itself on construction and serializes to the JSON the runtime reads.
"""

from __future__ import annotations

from .access import CONDITIONS, AccessPattern
from .entity import SHARD, Entity, IndexKey
from .exceptions import (
    AccessPatternError,
    AccessScopeError,
    ContractError,
    ContractFormatError,
    ContractIntegrityError,
    ContractVersionError,
    ModelError,
    ModelFormatError,
    ModelValidationError,
    TemplateError,
    ViewError,
)
from .fields import Field
from .indexes import TABLE, Index
from .model import FORMAT, MAX_GSIS, MAX_LSIS, VERSION, Model, ModelWarning
from .resolved import ResolvedEntity, ResolvedIndex, ResolvedIndexKey, ResolvedPattern
from .scope import ANY_TENANT, WRITE_KINDS, AccessScope, principal_tag
from .templates import SEPARATOR, KeyTemplate, Placeholder

__all__ = [
    "ANY_TENANT",
    "WRITE_KINDS",
    "AccessScope",
    "AccessScopeError",
    "principal_tag",
    "CONDITIONS",
    "FORMAT",
    "MAX_GSIS",
    "MAX_LSIS",
    "SEPARATOR",
    "SHARD",
    "TABLE",
    "VERSION",
    "AccessPattern",
    "AccessPatternError",
    "ContractError",
    "ContractFormatError",
    "ContractIntegrityError",
    "ContractVersionError",
    "Entity",
    "Field",
    "Index",
    "IndexKey",
    "KeyTemplate",
    "Model",
    "ModelError",
    "ModelFormatError",
    "ModelValidationError",
    "ModelWarning",
    "Placeholder",
    "ResolvedEntity",
    "ResolvedIndex",
    "ResolvedIndexKey",
    "ResolvedPattern",
    "TemplateError",
    "ViewError",
]
