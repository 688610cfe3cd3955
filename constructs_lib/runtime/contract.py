"""The model as a contract between a table's owner and the functions of other stacks.

A model's **fingerprint** hashes only what decides which keys and index entries an item gets
(key attribute names, indexes, entities' templates, typed fields, sparse conditions, version
attribute); access patterns, descriptions, required attributes and the model's name are left
out (:mod:`constructs_lib.model.fingerprints`, re-exported here). A function on a table imported
from published parameters gets the contract parameter's name in :data:`ENV_CONTRACT_PARAMETER`;
at cold start :func:`verify` reads it once and raises :class:`ContractBreakError` when an entity
or index it uses (its slice) changed; with :data:`ENV_MODEL_FINGERPRINT` it compares whole ones.

See docs/adr/0020-model-fingerprint-and-published-contract.md, docs/adr/0042-compatibility-by-slice.md.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .environment import ENV_CONTRACT_PARAMETER, ENV_MODEL_FINGERPRINT, ENV_MODEL_PATH, MODEL_FILE
from .exceptions import ContractBreakError, ContractUnavailableError, ModelMismatchError

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ..model import AccessScope, Model
    from ..model.fingerprints import FINGERPRINT_LENGTH as FINGERPRINT_LENGTH
    from ..model.fingerprints import fingerprint as fingerprint
    from ..model.fingerprints import key_schema as key_schema

#: Names re-exported from the model's fingerprints, loaded on first use: a function whose table
#: pins no fingerprint never loads them (nor, for a counter or audit writer, the model package).
_FINGERPRINTS = ("FINGERPRINT_LENGTH", "fingerprint", "key_schema")

#: Published contracts read by this process: parameter name -> the parsed document (one read per cold start).
_PUBLISHED: dict[str, Any] = {}


def model_digest(model: Model) -> str:
    """SHA-256 of the whole model's JSON (patterns, attributes and descriptions too), first
    :data:`FINGERPRINT_LENGTH` hex digits: what a generated typed module was made from."""
    from ..model.fingerprints import FINGERPRINT_LENGTH
    return hashlib.sha256(model.to_json(indent=None).encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def load_bundled_model(path: str | os.PathLike[str] | None = None) -> Model:
    """Load the model JSON shipped in a Lambda asset.

    Parameters
    ----------
    path
        Explicit path. Default: ``$CONSTRUCTS_LIB_MODEL_PATH`` if set, else ``model.json`` at the
        root of the asset (the directory holding the ``constructs_lib`` package in use).
    """
    from ..model import Model

    if path is None:
        path = os.environ.get(ENV_MODEL_PATH) or Path(__file__).resolve().parents[2] / MODEL_FILE
    return Model.from_json(Path(path).read_text(encoding="utf-8"))


def published_contract(parameter: str, *, client: BaseClient | None = None) -> Any:
    """The published contract in SSM parameter ``parameter``, read once per process
    (:class:`ContractUnavailableError` when it cannot be read or is not a published contract)."""
    from ..model.slices import SliceError, read_published

    if parameter not in _PUBLISHED:
        from . import _aws

        text = _aws.get_parameter(parameter, client=client)
        try:
            _PUBLISHED[parameter] = read_published(text, source=f"SSM parameter {parameter!r}")
        except SliceError as exc:
            raise ContractUnavailableError(str(exc), parameter=parameter) from exc
    return _PUBLISHED[parameter]


def verify(
    model: Model | None = None, *, environ: Mapping[str, str] | None = None, scope: AccessScope | None = None,
    client: BaseClient | None = None,
) -> None:
    """Refuse to run against a table whose contract no longer serves this function.

    With :data:`ENV_CONTRACT_PARAMETER` set (a table imported from published parameters): read
    the published contract (once per process) and compare the fingerprints of the entities and
    indexes this function uses — those of ``scope``, else the whole model — with it. Else with
    :data:`ENV_MODEL_FINGERPRINT` set: compare whole fingerprints. Else nothing (a table the
    stack owns). ``model`` defaults to the bundled ``model.json``; ``client``: an SSM client.

    Raises
    ------
    ContractBreakError
        An entity or index of the slice is missing from the published contract or changed its
        keys, or an entity it puts or updates is written differently (TTL attribute, declared
        fields, required attributes); the message names each, old → new.
    ContractUnavailableError
        The contract parameter cannot be read or parsed (the check is never skipped).
    ModelMismatchError
        The pinned whole fingerprint differs from the bundled model's.
    """
    env = os.environ if environ is None else environ
    parameter = env.get(ENV_CONTRACT_PARAMETER)
    if parameter:
        if model is None:
            model = load_bundled_model()
        _verify_slice(model, scope, parameter, client)
        return
    deployed = env.get(ENV_MODEL_FINGERPRINT)
    if not deployed:
        return
    from ..model.fingerprints import fingerprint

    if model is None:
        model = load_bundled_model()
    bundled = fingerprint(model)
    if bundled != deployed:
        raise ModelMismatchError(
            f"model {model.name!r} bundled with this function has fingerprint {bundled}, but the table's published "
            f"model has fingerprint {deployed} ({ENV_MODEL_FINGERPRINT}): their keys, typed fields or indexes "
            "differ, so this function could write keys the table was not designed for. Rebuild and redeploy the "
            "function with the table owner's current model (python -m constructs_lib fingerprint <model> shows a "
            "model's fingerprint); nothing was read or written.",
            bundled=bundled,
            deployed=deployed,
        )


def _verify_slice(model: Model, scope: AccessScope | None, parameter: str, client: BaseClient | None) -> None:
    from ..model.slices import check_slice, slice_of

    published = published_contract(parameter, client=client)
    piece = slice_of(model, scope)
    breaks = check_slice(piece, published, model=model)
    if breaks:
        raise ContractBreakError(
            f"the table's published contract ({parameter}, model {published.model_name!r} {published.fingerprint}) "
            f"no longer serves what this function uses of model {model.name!r} ({piece.contract_fingerprint}): "
            + "; ".join(b.describe() for b in breaks)
            + ". Its keys or what it stores would not match the table's, so nothing was read or written: rebuild "
            "the function "
            "against the producer's current contract (python -m constructs_lib contract verify) and redeploy it.",
            bundled=piece.contract_fingerprint, deployed=published.fingerprint, breaks=breaks,
        )


def __getattr__(name: str) -> Any:
    if name in _FINGERPRINTS:
        from ..model import fingerprints

        return getattr(fingerprints, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FINGERPRINT_LENGTH", "fingerprint", "key_schema", "load_bundled_model", "model_digest", "published_contract", "verify",
]
