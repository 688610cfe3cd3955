"""Lambda asset bundling: the runtime package + the model JSON + one handler module.

The asset holds exactly ``constructs_lib/__init__.py`` (a stub), ``constructs_lib/model/``,
``constructs_lib/runtime/``, ``model.json`` and the handler file — no CDK, no third-party
packages (boto3 comes with the Lambda Python runtime). Output is deterministic so the asset
hash only changes when the code or the model does.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ._slim import slim_source
from .exceptions import ConstructPropsError

if TYPE_CHECKING:
    from .model import Model

PACKAGE_DIR = Path(__file__).resolve().parent
#: Sub-packages shipped in every generated Lambda.
BUNDLED_PACKAGES = ("model", "runtime")
#: Modules of those packages a function never runs: the model's documentation writers (Markdown,
#: Mermaid, NoSQL Workbench), used at synth time and by ``python -m constructs_lib``. Nothing in
#: the bundled packages imports them (tests/synth checks the asset imports without them).
NOT_BUNDLED = frozenset({"model/describe.py", "model/workbench.py"})
MODEL_FILE = "model.json"
_STUB_INIT = '"""constructs_lib, as bundled into a Lambda function: model + runtime only."""\n'


def bundle(model: Model, handler_file: str | Path | None, *, extra_files: dict[str, str] | None = None) -> Path:
    """Stage an asset directory and return its path.

    Parameters
    ----------
    model
        Serialized to ``model.json`` at the asset root.
    handler_file
        Path of the handler module (a ``.py`` file); copied to the asset root under its own name.
        None when the handler lives in the bundled runtime package.
    extra_files
        Asset-relative path → text, for generated handler modules. Default none.

    Raises
    ------
    ConstructPropsError
        If the handler file does not exist or is not a ``.py`` file.
    """
    handler = Path(handler_file) if handler_file is not None else None
    if handler is not None and (handler.suffix != ".py" or not handler.is_file()):
        raise ConstructPropsError(f"handler file {str(handler)!r} must be an existing .py file")
    files: dict[str, bytes] = {"constructs_lib/__init__.py": _STUB_INIT.encode()}
    for package in BUNDLED_PACKAGES:
        for path in sorted((PACKAGE_DIR / package).rglob("*.py")):
            if "__pycache__" not in path.parts and path.relative_to(PACKAGE_DIR).as_posix() not in NOT_BUNDLED:
                # Docstrings and comments blanked, every line kept (see ._slim): a smaller asset.
                source = slim_source(path.read_text(encoding="utf-8"))
                files[f"constructs_lib/{path.relative_to(PACKAGE_DIR).as_posix()}"] = source.encode()
    files[MODEL_FILE] = model.to_json().encode()
    if handler is not None:
        files[handler.name] = handler.read_bytes()
    for rel, text in (extra_files or {}).items():
        files[rel] = text.encode()
    # Stage under a name derived from the content: re-synthesizing reuses the directory
    # instead of leaving a new temporary one behind each time.
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    staging = Path(tempfile.gettempdir()) / "constructs-lib-assets" / digest.hexdigest()[:32]
    if not staging.is_dir():
        partial = staging.with_name(f"{staging.name}.{os.getpid()}.tmp")
        shutil.rmtree(partial, ignore_errors=True)
        for rel, data in files.items():
            target = partial / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            partial.rename(staging)
        except OSError:  # another process staged the same content first
            shutil.rmtree(partial, ignore_errors=True)
    return staging


def module_name(handler_file: str | Path) -> str:
    return Path(handler_file).stem
