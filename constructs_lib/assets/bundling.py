"""Lambda asset bundling: the runtime part (model, runtime, model JSON), then the user's code.

Every generated function's asset holds a stub ``constructs_lib/__init__.py``, the modules of
``constructs_lib/model/`` and ``constructs_lib/runtime/`` its code can import (slimmed) and ``model.json``; a
``TableFunction`` adds its handler code and the wheels of its requirements. No file of the user
part may take a path or a top-level import name of another part. :class:`Bundle` lists the files
of each part. Output is deterministic, so the asset hash changes only with the code, the
dependencies or the model. Modules also ship as bytecode for the function's Python version when
an interpreter of that version is found (:mod:`.bytecode`).
See docs/adr/0018-bundling-ships-model-and-runtime.md.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..runtime.environment import MODEL_FILE
from . import bytecode
from .exceptions import AssetError
from .lambda_platform import LAMBDA_PYTHON_VERSION
from .slim import blank_type_checking, slim_source

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..model import Model
    from .handler_code import HandlerCode

__all__ = ["BUNDLED_PACKAGES", "MODEL_FILE", "Bundle", "bundle"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: Sub-packages shipped in every generated Lambda.
BUNDLED_PACKAGES = ("model", "runtime")
#: The backfill job's modules: shipped with the backfill function's handler alone, so every other
#: function's runtime part stays within its size budget.
BACKFILL_ONLY = ("runtime/patterns/backfill/", "runtime/handlers/backfill.py")
BACKFILL_HANDLER = "constructs_lib.runtime.handlers.backfill.handler"
#: The generated stream consumers' own modules: each ships with its handler alone (a user's
#: function increments and reads counters and audit trails, it does not aggregate or write them).
COUNTER_HANDLER = "constructs_lib.runtime.handlers.counter.handler"
AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"
#: The counters' recompute layout (transactional increments, recomputed totals): shipped with the
#: aggregator and with functions bound to a family without a stream (``recompute_counters``).
RECOMPUTE_ONLY = ("runtime/patterns/counter/recompute.py",)
HANDLER_ONLY = {
    COUNTER_HANDLER: ("runtime/handlers/counter.py", "runtime/patterns/counter/aggregation.py",
                      "runtime/patterns/counter/redrive.py", "runtime/patterns/counter/watermarks.py"),
    AUDIT_HANDLER: ("runtime/handlers/audit.py",),
}
#: The tenant-confined client (``TableClient.for_tenant``): shipped with functions whose model
#: declares a ``tenant_field`` alone; on any other model ``for_tenant`` refuses before loading it.
TENANT_ONLY = ("runtime/tenant.py",)
#: Model modules no function runs: reading a contract file (and where its path points), building a
#: consumer's view (its patterns are in the bundled model JSON already) and the design warnings
#: happen at synth.
SYNTH_ONLY = ("model/contract_file.py", "model/view.py", "model/design_warnings.py", "model/project_paths.py")
#: The cold-start check of a published contract (ADR 0042): shipped with functions bound to a table
#: imported from published parameters (``contract_check=True``) alone.
CONTRACT_CHECK_ONLY = ("model/slices.py",)
#: Traffic recording (``TableClient.record_traffic``): shipped with functions that ask for it
#: (``traffic_insight=True``) alone. The package's front ships always, so asking for it elsewhere
#: raises ``TrafficInsightNotBundledError`` naming the option rather than an ImportError.
TRAFFIC_INSIGHT_ONLY = ("runtime/stats/",)
TRAFFIC_INSIGHT_FRONT = "runtime/stats/__init__.py"
#: Handlers whose first call reads the bundled model only to check an imported table's contract or
#: pinned fingerprint (``contract.verify``): the model package's bytecode ships with them only then.
MODEL_FOR_VERIFY_ONLY = ("constructs_lib.runtime.handlers.counter.handler", "constructs_lib.runtime.handlers.audit.handler")
_STUB_INIT = ""  # the package's root, as bundled: model + runtime only


@dataclass(frozen=True)
class Bundle:
    """A staged asset directory and which part each of its files belongs to.

    Attributes
    ----------
    directory : Path
        The asset directory (``lambda.Code.from_asset`` of it).
    runtime_files : tuple of str
        Asset-relative paths of the runtime part: ``constructs_lib/**`` and ``model.json``.
    user_files : tuple of str
        The user's handler module(s) and data files.
    dependency_files : tuple of str
        Files installed from the function's requirements.
    """

    directory: Path
    runtime_files: tuple[str, ...]
    user_files: tuple[str, ...] = ()
    dependency_files: tuple[str, ...] = ()


def shipped(rel: str, handler: str | None, contract_check: bool = False, traffic_insight: bool = False,
            recompute_counters: bool = False, tenancy: bool = True) -> bool:
    """Whether the package module ``rel`` (``"runtime/client.py"``) ships with ``handler``, in a
    function that checks a published contract at cold start (``contract_check``) or not, records
    its traffic (``traffic_insight``) or not, is bound to a recomputed counter family
    (``recompute_counters``) or not, and whose model declares a tenant field (``tenancy``) or not."""
    if rel.startswith(RECOMPUTE_ONLY) and not recompute_counters and handler != COUNTER_HANDLER:
        return False
    if rel.startswith(TENANT_ONLY) and not tenancy:
        return False
    if rel.startswith(SYNTH_ONLY) or (rel.startswith(CONTRACT_CHECK_ONLY) and not contract_check):
        return False
    if rel.startswith(TRAFFIC_INSIGHT_ONLY) and rel != TRAFFIC_INSIGHT_FRONT and not traffic_insight:
        return False
    if any(rel.startswith(only) and handler != owner for owner, only in HANDLER_ONLY.items()):
        return False
    return handler == BACKFILL_HANDLER or not rel.startswith(BACKFILL_ONLY)


def _runtime_files(
    model: Model, handler: str | None = None, contract_check: bool = False, traffic_insight: bool = False,
    recompute_counters: bool = False,
) -> dict[str, bytes]:
    files: dict[str, bytes] = {"constructs_lib/__init__.py": _STUB_INIT.encode()}
    for package in BUNDLED_PACKAGES:
        for path in sorted((PACKAGE_DIR / package).rglob("*.py")):
            if "__pycache__" not in path.parts and shipped(path.relative_to(PACKAGE_DIR).as_posix(), handler,
                                                           contract_check, traffic_insight, recompute_counters,
                                                           tenancy=model.tenant_field is not None):
                # Docstrings and comments blanked, every line kept (see ._slim): a smaller asset.
                source = slim_source(path.read_text(encoding="utf-8"))
                files[f"constructs_lib/{path.relative_to(PACKAGE_DIR).as_posix()}"] = source.encode()
    files[MODEL_FILE] = model.to_json().encode()
    return files


def _without_type_checking(rel: str, source: bytes | Path) -> bytes | Path:
    if not rel.endswith(".py") or not isinstance(source, bytes) or b"TYPE_CHECKING" not in source:
        return source
    return blank_type_checking(source.decode("utf-8")).encode("utf-8")


def _dependency_files(directory: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for base, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            path = Path(base) / name
            found[path.relative_to(directory).as_posix()] = path
    return found


def _import_name(rel: str) -> str | None:
    """Top-level import name an asset path provides (None for metadata such as ``*.dist-info``)."""
    top = rel.split("/")[0]
    if top.endswith((".dist-info", ".data")) or top == MODEL_FILE:
        return None
    if "/" not in rel:
        return top.split(".")[0] if top.endswith((".py", ".so", ".pyd")) or "." not in top else top
    return top


def _check_parts(parts: Mapping[str, Mapping[str, object]], what: str) -> None:
    """No two parts may ship the same path or the same top-level import name."""
    owner: dict[str, str] = {}
    for part, files in parts.items():
        for name in sorted({n for n in map(_import_name, files) if n} | {f for f in files if "/" not in f}):
            if name in owner and owner[name] != part:
                raise AssetError(
                    f"{what}: {name!r} is provided by both the {owner[name]} and the {part}; one would shadow the "
                    "other in the Lambda's import path (the runtime part owns constructs_lib/ and model.json): "
                    "rename the module or drop the dependency"
                )
            owner.setdefault(name, part)


def bundle(
    model: Model,
    *,
    code: HandlerCode | None = None,
    dependencies: Path | None = None,
    extra_files: dict[str, str] | None = None,
    what: str = "function",
    python_version: str = LAMBDA_PYTHON_VERSION,
    handler: str | None = None,
    contract_check: bool = False,
    fingerprint_check: bool = False,
    traffic_insight: bool = False,
    recompute_counters: bool = False,
) -> Bundle:
    """Stage an asset directory and return it with its parts.

    Parameters
    ----------
    model
        Serialized to ``model.json`` at the asset root.
    code
        The user's handler code, copied to the asset root. Default None: the handler lives in the
        bundled runtime package (counter aggregator, audit writer).
    dependencies
        A directory of installed packages (``pip install --target``), copied to the asset root.
        Default none.
    extra_files
        Asset-relative path → text, for generated modules (runtime part). Default none.
    what
        The construct, for error messages. Default ``"function"``.
    python_version
        ``MAJOR.MINOR`` of the function's runtime: the runtime and user modules get
        ``__pycache__/*.cpython-3X.pyc`` compiled by an interpreter of that version, if one is
        found. Default :data:`.lambda_platform.LAMBDA_PYTHON_VERSION`.
    handler
        The Lambda handler (``module.function``): bytecode ships for the modules importing it
        loads (:func:`.bytecode.import_path`) and for the model package when its first call
        loads it: always but for :data:`MODEL_FOR_VERIFY_ONLY`, which load it only to check a
        contract or a fingerprint. Default: ``code``'s handler; without ``code`` and ``handler``,
        no bytecode.
    contract_check
        Whether the function checks a published contract at cold start (bound to a table imported
        from published parameters): only then does the slice check ship. Default False.
    fingerprint_check
        Whether the function compares the bundled model's fingerprint with a pinned one at cold
        start (bound to a table imported with a fingerprint). Default False.
    traffic_insight
        Whether the function records its traffic (``TableClient.record_traffic``): only then do
        the modules of ``runtime/stats/`` ship (:data:`TRAFFIC_INSIGHT_ONLY`). Default False.
    recompute_counters
        Whether the function is bound to a counter family recomputed from its shards (a table
        without a stream): only then does that layout's code ship (:data:`RECOMPUTE_ONLY`).
        Default False.

    Raises
    ------
    AssetError
        A user file or a dependency takes a path or an import name of another part, or a module
        does not compile for ``python_version``.
    """
    runtime: dict[str, bytes | Path] = dict(_runtime_files(model, handler, contract_check, traffic_insight,
                                                          recompute_counters))
    runtime.update({rel: text.encode() for rel, text in (extra_files or {}).items()})
    user: dict[str, bytes | Path] = dict(code.files) if code is not None else {}
    deps: dict[str, bytes | Path] = dict(_dependency_files(dependencies)) if dependencies is not None else {}
    _check_parts({"runtime part": runtime, "function's code": user, "function's dependencies": deps}, what)
    compiler = bytecode.compiler_for(python_version)
    pycs: dict[str, str] = {}  # pyc path -> its source's path
    handler = handler or (code.handler if code is not None else None)
    if handler:
        sources = {rel: _read(source) for part in (runtime, user) for rel, source in part.items() if rel.endswith(".py")}
        # Only the package modules the function's code can import, ever (a smaller asset): from the
        # handler, every module of the user's code and every dependency module naming the package.
        users = [rel for rel in user if rel.endswith(".py")]
        for rel, source in deps.items():
            if rel.endswith(".py") and b"constructs_lib" in (data := _read(source)):
                sources[rel] = data
                users.append(rel)
        entries = [handler.rpartition(".")[0], *map(_module_name, users)]
        reachable = bytecode.import_closure(sources, entries)
        runtime = {rel: source for rel, source in runtime.items() if _kept(rel, reachable)}
        # What never runs leaves the asset: the import analysis has read the TYPE_CHECKING blocks.
        runtime = {rel: _without_type_checking(rel, source) for rel, source in runtime.items()}
        if compiler is not None:
            # What importing the handler loads and, if it ships, the model package when the first
            # call loads it (``from_environment`` reads model.json) and would otherwise compile it then.
            reads_model = handler not in MODEL_FOR_VERIFY_ONLY or contract_check or fingerprint_check
            loaded = [handler.rpartition(".")[0]] + (["constructs_lib.model"] if MODEL_INIT in reachable and reads_model
                                                      else [])
            for rel in sorted(bytecode.import_path(sources, loaded)):
                pycs[bytecode.pyc_path(rel, compiler.tag)] = rel
    files: dict[str, bytes | Path] = {**deps, **user, **runtime}
    # Stage under a name derived from the content: re-synthesizing reuses the directory
    # instead of leaving a new temporary one behind each time. The pycs are a function of their
    # sources, the compiling interpreter's version and how the worker compiles them (its own code).
    digest = hashlib.sha256()
    digest.update(f"bytecode {compiler.full_version if compiler else 'none'} {bytecode.EXTRA_FLAGS} {sorted(pycs)}".encode())
    digest.update(bytecode.worker_digest())
    for rel in sorted(files):
        source = files[rel]
        data = source if isinstance(source, bytes) else source.read_bytes()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    staging = Path(tempfile.gettempdir()) / "constructs-lib-assets" / digest.hexdigest()[:32]
    if not staging.is_dir():
        if compiler is not None and pycs:
            sources = {rel: _read(files[rel]) for rel in pycs.values()}
            compiled = compiler.compile(sources, what=what)
            files.update({pyc: compiled[rel] for pyc, rel in pycs.items()})
        partial = staging.with_name(f"{staging.name}.{os.getpid()}.tmp")
        shutil.rmtree(partial, ignore_errors=True)
        for rel, source in files.items():
            target = partial / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, bytes):
                target.write_bytes(source)
            else:
                shutil.copyfile(source, target)
        try:
            partial.rename(staging)
        except OSError:  # another process staged the same content first
            shutil.rmtree(partial, ignore_errors=True)
    runtime_pycs = [pyc for pyc, rel in pycs.items() if rel in runtime]
    user_pycs = [pyc for pyc, rel in pycs.items() if rel in user]
    return Bundle(staging, tuple(sorted([*runtime, *runtime_pycs])), tuple(sorted([*user, *user_pycs])),
                  tuple(sorted(deps)))


MODEL_INIT = "constructs_lib/model/__init__.py"


def _module_name(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _kept(rel: str, reachable: set[str]) -> bool:
    """Whether the runtime part's file ``rel`` ships: every non-module file, the package stub, and
    the package modules in ``reachable``."""
    return not (rel.endswith(".py") and rel.startswith("constructs_lib/")) or rel in reachable or (
        rel == "constructs_lib/__init__.py")


def _read(source: bytes | Path) -> bytes:
    return source if isinstance(source, bytes) else source.read_bytes()
