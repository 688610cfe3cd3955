"""Lambda asset bundling: the runtime package + the model JSON + one handler module.

The asset holds exactly ``constructs_lib/__init__.py`` (a stub), ``constructs_lib/model/``,
``constructs_lib/runtime/``, ``model.json`` and the handler file — no CDK, no third-party
packages (boto3 comes with the Lambda Python runtime). Output is deterministic so the asset
hash only changes when the code or the model does.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .exceptions import ConstructPropsError

if TYPE_CHECKING:
    from .model import Model

PACKAGE_DIR = Path(__file__).resolve().parent
#: Sub-packages shipped in every generated Lambda.
BUNDLED_PACKAGES = ("model", "runtime")
MODEL_FILE = "model.json"
_STUB_INIT = '"""constructs_lib, as bundled into a Lambda function: model + runtime only."""\n'


def bundle(model: Model, handler_file: str | Path, *, extra_files: dict[str, str] | None = None) -> Path:
    """Stage an asset directory and return its path.

    Parameters
    ----------
    model
        Serialized to ``model.json`` at the asset root.
    handler_file
        Path of the handler module (a ``.py`` file); copied to the asset root under its own name.
    extra_files
        Asset-relative path → text, for generated handler modules. Default none.

    Raises
    ------
    ConstructPropsError
        If the handler file does not exist or is not a ``.py`` file.
    """
    handler = Path(handler_file)
    if handler.suffix != ".py" or not handler.is_file():
        raise ConstructPropsError(f"handler file {str(handler)!r} must be an existing .py file")
    staging = Path(tempfile.mkdtemp(prefix="constructs-lib-asset-"))
    target = staging / "constructs_lib"
    target.mkdir()
    (target / "__init__.py").write_text(_STUB_INIT, encoding="utf-8")
    for package in BUNDLED_PACKAGES:
        shutil.copytree(
            PACKAGE_DIR / package, target / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
        )
    (staging / MODEL_FILE).write_text(model.to_json(), encoding="utf-8")
    shutil.copyfile(handler, staging / handler.name)
    for rel, text in (extra_files or {}).items():
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return staging


def module_name(handler_file: str | Path) -> str:
    return Path(handler_file).stem
