"""The model as a contract between a table's owner and the functions of other stacks.

A model's **fingerprint** hashes only what decides which keys and index entries an item gets
(key attribute names, indexes, entities' templates, typed fields, sparse conditions, version
attribute); access patterns, descriptions, required attributes and the model's name are left
out (computed by :mod:`constructs_lib.model.fingerprints`, re-exported here). Equal fingerprints
mean identical keys for every item. A function bound to an imported table
receives the deployed fingerprint in :data:`ENV_MODEL_FINGERPRINT`; :func:`verify` raises
:class:`ModelMismatchError` when it differs from the bundled model's.

See docs/adr/0020-model-fingerprint-and-published-contract.md.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.fingerprints import FINGERPRINT_LENGTH, fingerprint, key_schema
from .exceptions import ModelMismatchError

if TYPE_CHECKING:
    from ..model import Model

#: Environment variable overriding where the bundled model JSON is read from.
ENV_MODEL_PATH = "CONSTRUCTS_LIB_MODEL_PATH"
#: File name of the model JSON at the root of a bundled asset.
MODEL_FILE = "model.json"
#: Environment variable holding the fingerprint of the deployed table's model.
ENV_MODEL_FINGERPRINT = "CONSTRUCTS_LIB_MODEL_FINGERPRINT"


def model_digest(model: Model) -> str:
    """SHA-256 of the whole model's JSON (patterns, attributes and descriptions too), first
    :data:`FINGERPRINT_LENGTH` hex digits: what a generated typed module was made from."""
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


def verify(model: Model | None = None, *, environ: Mapping[str, str] | None = None) -> None:
    """Refuse to run against a table whose model is not this function's.

    Does nothing unless :data:`ENV_MODEL_FINGERPRINT` is set (functions on a table the stack
    owns do not need it). ``model`` defaults to the bundled ``model.json``.

    Raises
    ------
    ModelMismatchError
        The bundled model's fingerprint differs from the deployed one.
    """
    env = os.environ if environ is None else environ
    deployed = env.get(ENV_MODEL_FINGERPRINT)
    if not deployed:
        return
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


__all__ = [
    "ENV_MODEL_FINGERPRINT", "ENV_MODEL_PATH", "FINGERPRINT_LENGTH", "MODEL_FILE", "fingerprint", "key_schema",
    "load_bundled_model", "model_digest", "verify",
]
