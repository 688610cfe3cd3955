"""Command line: see a data model.

``describe TARGET``: Markdown + Mermaid; ``export --format workbench``: NoSQL Workbench JSON;
``fingerprint``; ``codegen TARGET -o FILE [--check]``: a typed module; ``lock`` / ``diff`` /
``backfill``: model evolution; ``contract export TARGET``: the contract file; ``cost``: monthly cost.
TARGET: a module or Python file, optionally ``:attribute``, or a contract file (``*.json``).
A model module is read without importing the AWS CDK; an app is built, never synthesized; a
function target is called with no arguments. Exit 0 on success, 2 when the target cannot be
found, holds no model or needs arguments (or on usage errors), 1 on any other error
(docs/cli.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .capacity.exceptions import CapacityError
from .codegen.exceptions import CodegenError
from .evolution.exceptions import ContractReadError, EvolutionError
from .exceptions import CliError, CostInputError, TargetError  # TargetError: importable from here too
from .model.exceptions import ModelError
from .model.model import Model

PROG = "python -m constructs_lib"
_ATTRIBUTE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


# Loading targets ------------------------------------------------------------------------------------
def _split(target: str) -> tuple[str, str | None]:
    head, sep, tail = target.rpartition(":")
    if sep and head and _ATTRIBUTE.match(tail):
        return head, tail
    return target, None


def _is_file_target(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec


def _source_of(spec: str) -> tuple[str, Path | None]:
    """(source text, file path if a file target) of a module or file target, without running it."""
    if _is_file_target(spec):
        path = Path(spec).expanduser().resolve()
        if not path.is_file():
            raise TargetError(f"target {spec!r}: no such file ({path})")
        return path.read_text(encoding="utf-8", errors="replace"), path
    try:
        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError) as exc:
        raise TargetError(f"target {spec!r}: no such module ({exc})") from None
    if found is None:
        raise TargetError(f"target {spec!r}: no such module (use a dotted module path or a .py file)")
    origin = found.origin
    if origin and os.path.isfile(origin):
        return Path(origin).read_text(encoding="utf-8", errors="replace"), None
    return "", None


@contextlib.contextmanager
def _no_synth(source: str) -> Iterator[None]:
    """While a CDK app loads, make ``synth()`` a no-op so that describing never synthesizes."""
    if not re.search(r"\baws_cdk\b", source):
        yield
        return
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    import aws_cdk as cdk

    # Typed as any class: a method of theirs is replaced below, which their declared types forbid.
    stages: tuple[type[Any], ...] = (cdk.App, cdk.Stage)
    patched = [(cls, cls.__dict__["synth"]) for cls in stages if "synth" in cls.__dict__]
    for cls, _ in patched:
        cls.synth = lambda self, *args, **kwargs: None
    # Apps that honour $CDK_OUTDIR stage their assets in a scratch directory, not in the
    # project's cloud assembly (assets are staged when constructs are built, not at synth).
    saved = os.environ.get("CDK_OUTDIR")
    with tempfile.TemporaryDirectory(prefix="constructs_lib-describe-") as scratch:
        os.environ["CDK_OUTDIR"] = scratch
        try:
            yield
        finally:
            for cls, original in patched:
                cls.synth = original
            if saved is None:
                os.environ.pop("CDK_OUTDIR", None)
            else:
                os.environ["CDK_OUTDIR"] = saved


@contextlib.contextmanager
def _in_project(path: Path | None) -> Iterator[str]:
    """While a file target loads, the working directory is its project directory (the nearest
    ``cdk.json`` above it), where ``cdk synth`` runs the app: its relative paths (``entry=``,
    a contract file) mean what they mean there. No ``cdk.json`` above it: nothing changes.
    Yields the working directory the command was started in."""
    from .model.project_paths import project_directory

    before = os.getcwd()
    project = project_directory(path) if path is not None else None
    if project is None:
        yield before
        return
    os.chdir(project)
    try:
        yield before
    finally:
        os.chdir(before)


def _import(spec: str, path: Path | None, launched_from: str | None = None) -> Any:
    if path is None:
        try:
            return importlib.import_module(spec)
        except ModuleNotFoundError as exc:
            if exc.name and (spec == exc.name or spec.startswith(exc.name + ".")):
                raise TargetError(f"target {spec!r}: no such module") from None
            raise
    name = f"_constructs_lib_target_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise TargetError(f"target {spec!r}: {path} cannot be imported as a Python module")
    # As ``python FILE`` does: the file's directory (and the working directories: the project's and
    # the one the command started in) lead sys.path while the file runs — and only then, so later
    # imports are not redirected to its siblings.
    added = [p for p in dict.fromkeys((str(path.parent), os.getcwd(), launched_from or os.getcwd())) if p not in sys.path]
    sys.path[:0] = added
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    finally:
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)
    return module


def _is_construct(obj: object) -> bool:
    if "constructs" not in sys.modules:
        return False
    from constructs import Construct

    return isinstance(obj, Construct)


#: (title, model, the table's view — None for a model found in a module or a contract file, the
#: table construct or None).
_Found = tuple[str | None, Model, Any, Any]


def _literal(value: str | None) -> str | None:
    import aws_cdk as cdk

    return value if value is not None and not cdk.Token.is_unresolved(value) else None


def _functions_of(root: Any, table: Any) -> tuple[Any, ...]:
    """The ``TableFunction``s built on ``table`` with their scopes and the statements derived from them."""
    from .constructs.scope_policy import derive_statements
    from .constructs.table_function import TableFunction
    from .docgen.tables import FunctionView

    out = []
    for fn in (c for c in root.node.find_all() if isinstance(c, TableFunction) and c.table is table):
        lines: tuple[str, ...] = ()
        if fn.scope is not None:
            lines = tuple(
                f"{', '.join(a.removeprefix('dynamodb:') for a in s.actions)} on {s.index or 'the table'} for "
                f"{', '.join(s.leading_keys)}{' (in transactions only)' if s.transaction_only else ''}"
                for s in derive_statements(fn.table.model, fn.scope)
            )
        out.append(FunctionView(fn.node.path, fn.scope, lines, _coarse_grant(getattr(fn, "access", None))))
    return tuple(out)


def _coarse_grant(access: str | None) -> str | None:
    """What ``TableFunction(access=...)`` grants without a declared scope (``ModelBoundTable.grant_*_data``)."""
    from .constructs import perms

    if access is None:
        return None
    read, write = perms.READ_DATA if "read" in access else (), perms.WRITE_DATA if "write" in access else ()
    actions = ", ".join(a.removeprefix("dynamodb:") for a in (*read, *write, *perms.DESCRIBE))
    return f"{access}: {actions} on the table{' and every index' if read else ''}, any key"


def _view_of(top: Any, table: Any) -> Any:
    """The :class:`~constructs_lib.docgen.tables.TableView` of an owned or imported table."""
    from .constructs.imported_table import ImportedSingleTable
    from .docgen.tables import DEPLOY_TIME, TableView

    functions = _functions_of(top, table)
    if not isinstance(table, ImportedSingleTable):
        contract = getattr(table, "contract", None)
        prefix = contract.contract.parameter_prefix if contract is not None else None
        return TableView(table.node.path, table.model, parameter_prefix=prefix, functions=functions)
    if table.parameter_prefix is not None:
        expected, pinned = table.expected_fingerprint, getattr(table, "pinned_contract", None)
        return TableView(table.node.path, table.model, imported=True, parameter_prefix=table.parameter_prefix,
                         expected_fingerprint=_literal(expected) or (DEPLOY_TIME if expected else None),
                         pinned_contract=f"{pinned.source}, fingerprint {pinned.fingerprint}" if pinned else None,
                         functions=functions)
    deployed = table.model_fingerprint
    return TableView(table.node.path, table.model, imported=True,
                     deployed_fingerprint=_literal(deployed) or (DEPLOY_TIME if deployed else None),
                     table_name=_literal(table.table_name) or _literal(table.table_arn), functions=functions)


def _tables_in(root: Any) -> list[_Found]:
    """Every table (owned ``SingleTable`` or imported) in ``root``'s construct tree, in tree order."""
    from .constructs.bound_table import ModelBoundTable

    found = [c for c in [root, *root.node.find_all()] if isinstance(c, ModelBoundTable)]
    unique = {c.node.path: c for c in found}
    top = root.node.root
    views = [(_view_of(top, c), c) for c in unique.values()]
    return [(view.title, view.model, view, c) for view, c in views]


def _imported_in(root: Any) -> list[_Found]:
    """Tables imported from published parameters in ``root`` with their views (a consumer app)."""
    from .constructs.imported_table import ImportedSingleTable

    found = [c for c in [root, *root.node.find_all()]
             if isinstance(c, ImportedSingleTable) and c.contract_parameter is not None]
    top = root.node.root
    views = [(_view_of(top, c), c) for c in found]
    return [(c.node.path, c.model, view, c) for view, c in views]


def load_consumers(target: str) -> list[Any]:
    """Every table the consumer app ``target`` imports from published parameters, with its
    functions (``evolution.contracts.Consumer``)."""
    from .constructs.table_function import TableFunction
    from .evolution.contracts import Consumer, ConsumerFunction

    out = []
    for title, model, view, table in _load(target, finder=_imported_in):
        if table is None:
            continue
        built = {c.node.path: c for c in table.node.root.node.find_all() if isinstance(c, TableFunction)}
        functions = tuple(
            ConsumerFunction(f.path, f.scope, tuple(source for _, source in getattr(built.get(f.path), "handler_files", ())))
            for f in view.functions
        )
        out.append(Consumer(str(title), model, functions, table.pinned_contract))
    return out


def _from_object(obj: object, what: str, *, call: bool = True, finder: Any = None) -> tuple[list[_Found], str]:
    """The tables or models ``obj`` holds (``finder``: which tables of a construct tree; default
    every owned or imported one), and how to name it when it holds none."""
    if isinstance(obj, Model):
        return [(None, obj, None, None)], what
    if _is_construct(obj):
        return (finder or _tables_in)(obj), _tree_of(obj, what)
    if call and callable(obj):
        return _from_object(_call(obj, what), what, call=False, finder=finder)
    raise TargetError(f"{what} is a {type(obj).__name__}, not a Model, a construct or a function returning one")


def _call(function: Any, what: str) -> Any:
    """``function()``; a :class:`TargetError` naming it and its signature when it needs arguments."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read (a builtin): call it and see
        return function()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    required = [p.name for p in signature.parameters.values() if p.kind in kinds and p.default is p.empty]
    if not required:
        return function()
    name = getattr(function, "__qualname__", None) or type(function).__name__
    needs = ", ".join(map(repr, required))
    raise TargetError(
        f"{what} cannot be called: {name}{signature} needs {len(required)} argument"
        f"{'s' if len(required) > 1 else ''} ({needs}), and the command line calls a target's function with none. "
        "Expected a function taking no arguments that returns a Model, a cdk.App or a construct: give "
        f"{needs} a default, or name a function that calls it with its arguments as TARGET:function"
    )


def _tree_of(root: Any, what: str) -> str:
    import aws_cdk as cdk

    stacks = [c.node.path for c in root.node.find_all() if isinstance(c, cdk.Stack)]
    return f"{what}: its construct tree ({', '.join(stacks) or 'no stack'})"


def load_models(target: str) -> list[tuple[str | None, Model]]:
    """Every ``(title, model)`` pair ``target`` holds (title None for a plain model module), for the
    tables the app owns (what the model lock records; an imported table is its owner's to lock).

    Raises
    ------
    TargetError
        If the target does not exist, the attribute is missing, or no owned model is found.
    """
    found = _load(target)
    owned = [(title, model) for title, model, view, _ in found if view is None or not view.imported]
    if not owned:
        paths = ", ".join(view.path for _, _, view, _ in found)
        raise TargetError(
            f"target {target!r} holds only imported tables ({paths}); the model lock records the tables an app owns: "
            "lock the model in its owner's repository"
        )
    return owned


_NO_MODEL = ("expected Model instances in the module's globals, a build_app() function or a cdk.App whose construct "
             "tree holds tables: SingleTable constructs, owned or imported (SingleTable.from_parameters, "
             "from_table_name, from_table_attributes)")


def _load(target: str, *, finder: Any = None) -> list[_Found]:
    """Every table (owned or imported) or model ``target`` holds, tables with their views
    (``finder``: which tables of a construct tree; default every one)."""
    finder = finder or _tables_in
    if target.endswith(".json"):
        return [(None, _read_contract(target).model, None, None)]
    spec, attribute = _split(target)
    source, path = _source_of(spec)
    where = f"target {target!r}"
    with _no_synth(source), _in_project(path) as launched_from:
        module = _import(spec, path, launched_from)
        if attribute is not None:
            obj: Any = module
            for part in attribute.split("."):
                if not hasattr(obj, part):
                    raise TargetError(f"target {target!r}: {spec!r} has no attribute {attribute!r}")
                obj = getattr(obj, part)
            pairs, where = _from_object(obj, f"target {target!r}", finder=finder)
        elif callable(getattr(module, "build_app", None)):
            pairs, where = _from_object(module.build_app, f"target {target!r}: build_app()", finder=finder)
        else:
            roots = [v for v in vars(module).values() if _is_construct(v) and getattr(v, "node", None) is not None
                     and v.node.scope is None]
            if roots:
                pairs = [p for root in roots for p in finder(root)]
                where = "; ".join(_tree_of(root, f"target {target!r}") for root in roots)
            else:
                seen: dict[int, Model] = {}
                for value in vars(module).values():
                    if isinstance(value, Model):
                        seen.setdefault(id(value), value)
                pairs = [(None, m, None, None) for m in seen.values()]
    if not pairs:
        if where != f"target {target!r}":
            raise TargetError(f"{where} holds no table; {_NO_MODEL}")
        raise TargetError(f"no data model found in target {target!r}: {_NO_MODEL}")
    return pairs


def _read_contract(target: str) -> Any:
    """The checked contract file ``target`` (``TargetError`` when there is no such file)."""
    from .model.contract_file import read_contract

    path = Path(target).expanduser()
    if not path.is_file():
        raise TargetError(f"target {target!r}: no such contract file ({path.resolve()})")
    return read_contract(path, Model)


# Commands ---------------------------------------------------------------------------------------
def _emit(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    Path(output).write_text(text, encoding="utf-8")
    print(f"wrote {output}", file=sys.stderr)


def _describe(args: argparse.Namespace) -> str:
    from .docgen.describe import describe
    from .docgen.tables import describe_table

    return "\n---\n\n".join(describe(model, title=title) if view is None else describe_table(view)
                              for title, model, view, _ in _load(args.target))


def _pairs(target: str) -> list[tuple[str | None, Model]]:
    """``(title, model)`` of every table, owned or imported, or model ``target`` holds."""
    return [(title, model) for title, model, _, _ in _load(target)]


def _export(args: argparse.Namespace) -> str:
    from .docgen.workbench import to_workbench_json

    pairs = _pairs(args.target)
    tables = [((title or model.name).split(" — ")[0].replace("/", "."), model) for title, model in pairs]
    name = pairs[0][1].name if len(pairs) == 1 else _split(args.target)[0].rsplit("/", 1)[-1].removesuffix(".py")
    return to_workbench_json(tables, model_name=name)


def _fingerprint(args: argparse.Namespace) -> str:
    from .runtime.contract import fingerprint

    return "".join(f"{fingerprint(model)}  {title or model.name}\n" for title, model in _pairs(args.target))


def _codegen(args: argparse.Namespace) -> str:
    from .codegen import generate

    unique: dict[str, tuple[str | None, Model]] = {}
    for title, model in _pairs(args.target):  # a model owned here and imported there counts once
        unique.setdefault(model.to_json(), (title, model))
    pairs = list(unique.values())
    if len(pairs) != 1:
        names = ", ".join(repr(title or model.name) for title, model in pairs)
        raise TargetError(f"target {args.target!r} holds {len(pairs)} data models ({names}); name one as TARGET:attribute")
    text = generate(pairs[0][1], target=args.target)
    if args.check:
        if args.output is None:
            raise TargetError("codegen --check needs --output FILE (the typed module to compare)")
        path = Path(args.output)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        args.output = None
        if current == text:
            return f"{path} is up to date with {args.target}\n"
        args.exit_status = 1
        state = "missing" if current is None else "stale"
        return f"{path} is {state}: regenerate it with {PROG} codegen {args.target} -o {path}\n"
    return text


def _contract_export(args: argparse.Namespace) -> str:
    from .model.contract_file import build_contract, contract_json

    found = _load(args.target)
    if args.table is not None:
        chosen = [f for f in found if args.table in _table_names(f)]
        if not chosen:
            raise TargetError(f"target {args.target!r} has no table {args.table!r}; tables: {_listing(found)}")
        found = chosen[:1]
    if len(found) != 1:
        raise TargetError(
            f"target {args.target!r} holds {len(found)} tables ({_listing(found)}); choose one with --table NAME"
        )
    _, model, _, table = found[0]
    if table is not None and callable(getattr(table, "contract_json", None)):
        return str(table.contract_json())
    return contract_json(build_contract(model))


def _table_names(found: _Found) -> tuple[str, ...]:
    """What ``--table`` may name: the construct path or id, or the model name."""
    _, model, _, table = found
    return (model.name,) if table is None else (table.node.path, table.node.id, model.name)


def _listing(found: list[_Found]) -> str:
    return ", ".join(repr(f[3].node.path if f[3] is not None else f[1].name) for f in found)


def _evolution(args: argparse.Namespace) -> str:
    from .evolution.cli import run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="See a constructs_lib data model.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    describe = commands.add_parser(
        "describe", help="Markdown + Mermaid documentation of the model(s) in TARGET",
        description="Print Markdown documentation (with a Mermaid diagram) of every data model in TARGET.",
    )
    export = commands.add_parser(
        "export", help="export the model(s) in TARGET for another tool",
        description="Export every data model in TARGET, e.g. as a NoSQL Workbench data model.",
    )
    export.add_argument("--format", choices=["workbench"], default="workbench",
                        help="output format (default: workbench — NoSQL Workbench data model JSON, version 3.0)")
    fingerprint = commands.add_parser(
        "fingerprint", help="key-schema fingerprint of the model(s) in TARGET",
        description="Print the fingerprint of every data model in TARGET (what SingleTable publishes and "
                    "imported tables check).",
    )
    codegen = commands.add_parser(
        "codegen", help="typed module (TypedDicts and a typed table class) of the model in TARGET",
        description="Generate a Python module with one TypedDict per entity and a table class with one typed method "
                    "per entity operation and access pattern, delegating to TableClient.",
    )
    codegen.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 when FILE (--output) differs from what would be generated")
    for sub in (describe, export, fingerprint, codegen):
        sub.add_argument("target", metavar="TARGET",
                         help="module (examples.shop.model), file (app.py) or either with :attribute, "
                              "or a contract file (shop.contract.json)")
        sub.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    contract = commands.add_parser(
        "contract", help="the model contract file a producer publishes and consumers build against",
        description="Work with contract files (docs/contract-format.md).",
    )
    contract_commands = contract.add_subparsers(dest="contract_command", required=True, metavar="ACTION")
    contract_export = contract_commands.add_parser(
        "export", help="write the contract file of the table in TARGET",
        description="Write the contract file (<model name>.contract.json) of the SingleTable in TARGET: the model, "
                    "its fingerprints and the table's key schema, indexes, TTL and stream.",
    )
    contract_export.add_argument("target", metavar="TARGET",
                                 help="app (app.py, a module with build_app()) or model module, optionally :attribute")
    contract_export.add_argument("--table", metavar="NAME",
                                 help="the table, when TARGET has several: construct path or id, or model name")
    contract_export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    contract_export.set_defaults(run=_contract_export)
    from .evolution.contracts import add_commands as add_contract_commands

    add_contract_commands(contract_commands, load_consumers=load_consumers)
    from .evolution.cli import add_commands

    add_commands(commands, _evolution, load_models=load_models, target_error=TargetError)
    from .capacity.cli import add_command as add_cost_command

    add_cost_command(commands, load_tables=_load)
    describe.set_defaults(run=_describe)
    export.set_defaults(run=_export)
    fingerprint.set_defaults(run=_fingerprint)
    codegen.set_defaults(run=_codegen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        try:
            text = args.run(args)
        except CapacityError as exc:  # a rates or price file the cost estimate cannot use
            raise CostInputError(str(exc)) from exc
    except (TargetError, ContractReadError) as exc:
        print(f"{PROG} {args.command}: {exc}", file=sys.stderr)
        return 2
    except ModelError as exc:
        print(f"{PROG} {args.command}: model error in target {args.target!r}: {exc}", file=sys.stderr)
        return 1
    except CodegenError as exc:
        print(f"{PROG} {args.command}: cannot generate code for target {args.target!r}: {exc}", file=sys.stderr)
        return 1
    except (EvolutionError, CliError) as exc:  # a refused lock/diff/contract step, or another command-line error
        print(f"{PROG} {args.command}: {exc}", file=sys.stderr)
        return 1
    try:
        _emit(text, args.output)
    except OSError as exc:
        print(f"{PROG} {args.command}: cannot write {args.output!r}: {exc}", file=sys.stderr)
        return 1
    return int(getattr(args, "exit_status", 0))


if __name__ == "__main__":
    sys.exit(main())
