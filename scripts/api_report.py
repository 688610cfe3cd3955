"""The public API report: one file per public package in ``api/``, generated with griffe.

``python -m scripts.api_report`` compares the committed report with the sources and exits 1 when
they differ, saying which names were added, changed or removed and what to do; ``--write``
(``make api-report``) writes it, refusing a removal or an incompatible change that the
compatibility policy does not allow (docs/releases.md). tests/unit/project/test_api_report.py
runs the comparison.

Each ``<package>.api`` file is a Python stub, one section per module (``# module <name>``): every
public name with its kind and signature (class members included, the pytest plugin's fixtures
with their decorator), then the module's deprecated names as comments (old name, where it went,
deprecated since, removed in). A line ending in ``# since X.Y.Z`` was added in that version (no
mark: in 0.1.0, or with its parent); ``parameters since X.Y.Z: a, b`` names a function's parameters
added after it. ``cli.api`` lists the command line's verbs and options.
Breaking changes are found by griffe's own check (``griffe.find_breaking_changes``) over the
committed and the generated stubs.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import griffe

REPO = Path(__file__).resolve().parents[1]
API_DIR = REPO / "api"
#: The version the first report describes; a line without a ``# since`` mark is from it.
FIRST = "0.1.0"
#: Report file -> the modules it covers: a package's ``__all__``, or a module's public names (its
#: ``__all__``, else what it defines without a leading underscore). The runtime's modules are
#: those its guides, examples and deprecation messages import from (docs/releases.md).
REPORTS: dict[str, tuple[str, ...]] = {
    "constructs_lib": ("constructs_lib", "constructs_lib.constructs.operations", "constructs_lib.constructs.stream_audit"),
    "constructs_lib.runtime": (
        "constructs_lib.runtime",
        *(f"constructs_lib.runtime.{m}" for m in (
            "buckets", "contract", "cursors", "environment", "exceptions", "items", "key_segments", "keys", "pages",
            "sharding", "tenant", "ttl", "ulid", "values", "versions", "stats", "patterns.audit", "patterns.counter",
            "patterns.backfill")),
    ),
    "constructs_lib.model": ("constructs_lib.model", "constructs_lib.model.contract_file", "constructs_lib.model.slices",
                             "constructs_lib.model.fingerprints"),
    "constructs_lib.capacity": ("constructs_lib.capacity",),
    "constructs_lib.codegen": ("constructs_lib.codegen",),
    "constructs_lib.testing": ("constructs_lib.testing", "constructs_lib.testing.plugin",
                               "constructs_lib.testing.localstack"),
}
#: Class members listed besides the public ones: the special methods callers use.
SPECIAL = frozenset({"__init__", "__call__", "__iter__", "__len__", "__getitem__", "__contains__", "__enter__",
                     "__exit__", "__bool__"})
#: Module-level names of the export machinery, never part of a module's surface.
MACHINERY = frozenset({"TYPE_CHECKING", "annotations", "EXPORTS", "DEPRECATED"})
#: Breakages a release may only bring with a deprecation or a major version (griffe's kinds).
BREAKING = frozenset({
    griffe.BreakageKind.OBJECT_REMOVED, griffe.BreakageKind.OBJECT_CHANGED_KIND,
    griffe.BreakageKind.PARAMETER_REMOVED, griffe.BreakageKind.PARAMETER_MOVED,
    griffe.BreakageKind.PARAMETER_CHANGED_KIND, griffe.BreakageKind.PARAMETER_CHANGED_REQUIRED,
    griffe.BreakageKind.PARAMETER_ADDED_REQUIRED, griffe.BreakageKind.CLASS_REMOVED_BASE,
})
#: The marks ending a line: ``# since X.Y.Z`` (the object), ``parameters since X.Y.Z: a, b`` (its
#: parameters added later than it), separated by ``; ``.
#: Parameter breakages that break no caller when the parameter is not in a release yet (making it
#: required, or adding a required one, does: the released callers do not pass it).
UNRELEASED_PARAMETER = frozenset({griffe.BreakageKind.PARAMETER_REMOVED, griffe.BreakageKind.PARAMETER_MOVED,
                                  griffe.BreakageKind.PARAMETER_CHANGED_KIND})
_MARK = re.compile(r"  # ((?:since|parameters since) \d+\.\d+\.\d+.*)$")
_PARAMETERS = re.compile(r"^parameters since (\d+\.\d+\.\d+): (.+)$")
_DEPRECATED = re.compile(r"^# deprecated (\w+) -> ([\w.]+) \(since (\d+\.\d+\.\d+), removed in (\d+\.\d+\.\d+)\)$")
_MODULE = re.compile(r"^# module ([\w.]+)$", flags=re.MULTILINE)
_HEADER = re.compile(r"^# (\S+) (\d+\.\d+\.\d+): ", flags=re.MULTILINE)


# Marks ---------------------------------------------------------------------------------------------
def parse_mark(line: str) -> tuple[str | None, dict[str, str]]:
    """(the version the line's object appeared in, parameter -> the version it was added in), as
    marked at the end of ``line`` (None, {}: no mark)."""
    found = _MARK.search(line)
    own, parameters = None, {}
    for part in found.group(1).split("; ") if found else ():
        if part.startswith("since "):
            own = part.removeprefix("since ")
        elif matched := _PARAMETERS.match(part):
            parameters.update(dict.fromkeys(matched.group(2).split(", "), matched.group(1)))
    return own, parameters


def strip_mark(line: str) -> str:
    return _MARK.sub("", line)


def mark(own: str | None, parameters: dict[str, str]) -> str:
    """The trailing mark of a line (empty when there is nothing to say)."""
    parts = [f"since {own}"] if own else []
    for version in sorted(set(parameters.values()), key=lambda v: tuple(int(x) for x in v.split("."))):
        parts.append(f"parameters since {version}: {', '.join(p for p, v in parameters.items() if v == version)}")
    return f"  # {'; '.join(parts)}" if parts else ""


# Versions -------------------------------------------------------------------------------------------
def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def major(version: str) -> int:
    """The major version: while the version is 0.x the first major is 1 (docs/releases.md)."""
    return version_key(version)[0]


def current_version() -> str:
    import tomllib

    return str(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


# Reading the package with griffe ---------------------------------------------------------------------
def load(root: Path = REPO) -> griffe.GriffeLoader:
    """The package as the API reference reads it (scripts/griffe_extensions.py)."""
    extensions = griffe.load_extensions(*(f"{REPO / 'scripts' / 'griffe_extensions.py'}:{name}"
                                          for name in ("LazyExports", "TupleAssignments", "PytestFixtures")))
    loader = griffe.GriffeLoader(search_paths=[str(root)], extensions=extensions, allow_inspection=False)
    loader.load("constructs_lib")
    loader.resolve_aliases(external=False, implicit=False)
    return loader


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object:
    return obj.final_target if obj.is_alias else obj


def public_names(module: griffe.Module) -> list[str]:
    """The module's ``__all__`` (read as Python computes it), else the names it defines publicly."""
    if module.exports is not None:
        return [str(name) for name in module.exports]
    return [name for name, member in module.members.items()
            if not name.startswith("_") and name not in MACHINERY and not member.is_alias and not member.is_module]


def _literal_tables(path: Path, variable: str) -> Any:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == variable and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


def deprecated_names(root: Path, module: str) -> list[tuple[str, str, str, str]]:
    """(old name, where it went as ``module.attribute``, since, removed in) of what ``module``
    answers for as deprecated: the runtime's in ``runtime/_deprecated.py`` (``TABLES``), the
    others' in their own ``_DEPRECATED`` (docs/releases.md)."""
    from importlib.util import resolve_name

    base = root.joinpath(*module.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.is_file():
        return []
    package = module if base.is_dir() else module.rpartition(".")[0]
    table = dict(_literal_tables(path, "_DEPRECATED"))
    lister = root / "constructs_lib" / "runtime" / "_deprecated.py"
    if lister.is_file():
        table.update(_literal_tables(lister, "TABLES").get(module, {}))
    return sorted((name, f"{resolve_name(where, package) if where.startswith('.') else where}.{attribute}", since,
                   removed_in) for name, (where, attribute, since, removed_in) in table.items())


# Rendering a stub -------------------------------------------------------------------------------------
def _value(text: str | griffe.Expr | None) -> str:
    value = str(text) if text is not None else "..."
    return value if len(value) <= 100 and "\n" not in value else "..."


def _def(func: griffe.Function) -> list[str]:
    decorators = []
    if "pytest fixture" in func.labels:
        scope = next(label.split()[0] for label in func.labels if label.endswith(" scope"))
        decorators.append(f'@pytest.fixture(scope="{scope}")')
    for label in ("property", "classmethod", "staticmethod"):
        if label in func.labels:
            decorators.append(f"@{label}")
    signature = func.signature()
    first = func.parameters[0].name if len(func.parameters) else None
    if func.parent is not None and func.parent.is_class and first in ("self", "cls"):
        head, _, rest = signature.partition("(")
        signature = f"{head}({first}{', ' if not rest.startswith(')') else ''}{rest}"
    asynchronous = "async " if "async" in func.labels else ""
    return [*decorators, f"{asynchronous}def {signature}: ..."]


def _attribute(attr: griffe.Attribute) -> str:
    """``name: annotation = value``; an instance attribute's value (set in a method) is left out."""
    annotation = f": {attr.annotation}" if attr.annotation is not None else ""
    if "instance-attribute" in attr.labels and "class-attribute" not in attr.labels:
        return f"{attr.name}{annotation}" if annotation else f"{attr.name} = ..."
    return f"{attr.name}{annotation} = {_value(attr.value)}"


def _members(cls: griffe.Class) -> Iterator[griffe.Object]:
    """The class's members, inherited from the package's own bases included, in a stable order."""
    seen: dict[str, griffe.Object] = {}
    for name, member in cls.all_members.items():
        if name.startswith("_") and name not in SPECIAL:
            continue
        try:
            target = _target(member)
        except griffe.AliasResolutionError:
            continue
        if target.is_module or ("pytest fixture" not in target.labels and target.is_function and target.name != name):
            continue
        seen[name] = target
    for name in sorted(seen, key=lambda n: (n != "__init__", n)):
        yield seen[name]


def render(obj: griffe.Object, name: str, since: dict[str, str], parent_since: str, version: str, path: str,
           indent: str = "", parameters: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Stub lines of ``obj`` under ``name``, each marked with the version it appeared in when
    that is not its parent's, and a function's parameters added after it (``since``: object path
    in the report -> version; ``parameters``: a function's path -> parameter -> version; both from
    the committed report)."""
    parameters = parameters or {}
    own = since.get(path, version)
    trailing = mark(own if own != parent_since else None, {})
    if obj.is_class:
        cls: griffe.Class = obj
        bases = ", ".join(str(base) for base in cls.bases)
        lines = [f"{indent}class {name}{f'({bases})' if bases else ''}:{trailing}"]
        body = []
        for member in _members(cls):
            body += render(member, member.name, since, own, version, f"{path}.{member.name}", indent + "    ",
                           parameters)
        return lines + (body or [f"{indent}    ..."])
    if obj.is_function:
        lines = _def(obj)
        known = parameters.get(path)
        later = {} if known is None else {p.name: known.get(p.name, version) for p in obj.parameters
                                           if known.get(p.name, version) != own and p.name not in ("self", "cls")}
        lines[-1] = lines[-1].replace(f"def {obj.name}(", f"def {name}(", 1) + mark(
            own if own != parent_since else None, later)
        return [indent + line for line in lines]
    if obj.is_attribute:
        return [indent + _attribute(obj).replace(obj.name, name, 1) + trailing]
    return [f"{indent}{name} = ...  # {obj.kind.value}{trailing}"]


def module_section(loader: griffe.GriffeLoader, module: str, since: dict[str, str], version: str,
                   root: Path = REPO, parameters: dict[str, dict[str, str]] | None = None) -> str:
    """The stub section of one module: its public names, then its deprecated names."""
    mod = loader.modules_collection[module]
    names = public_names(mod)
    lines = [f"# module {module}", f"__all__ = {sorted(names)!r}", ""]
    for name in sorted(names):
        member = mod.members.get(name)
        try:
            target = _target(member) if member is not None else None
        except griffe.AliasResolutionError:
            target = None
        if target is None:
            lines.append(f"{name} = ...  # unresolved")
            continue
        lines += render(target, name, since, FIRST, version, f"{module}.{name}", parameters=parameters)
    for old, where, since_version, removed_in in deprecated_names(root, module):
        lines.append(f"# deprecated {old} -> {where} (since {since_version}, removed in {removed_in})")
    return "\n".join(lines) + "\n"


def header(report: str, version: str, what: str) -> str:
    return (f"# {report} {version}: {what}. Generated by `make api-report` (python -m scripts.api_report --write);\n"
            "# do not edit. How to read it: docs/releases.md.\n")


def python_report(loader: griffe.GriffeLoader, report: str, committed: str, version: str, root: Path = REPO) -> str:
    """The report ``report`` of the sources, its marks carried over from the ``committed`` text."""
    since, parameters = inherited_since(committed), parameter_since(committed)
    sections = [module_section(loader, module, since, version, root, parameters) for module in REPORTS[report]]
    return header(report, version, "the public API") + "\n" + "\n".join(sections)


# The command line --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Argument:
    """One argument of a verb as the report shows it."""

    flags: str
    metavar: str
    required: bool
    default: str

    def line(self, since: str) -> str:
        text = f"  {self.flags}{f' {self.metavar}' if self.metavar else ''}"
        text += " (required)" if self.required and self.flags.startswith("-") else ""
        text += f" = {self.default}" if self.default else ""
        return text + since


def _arguments(parser: argparse.ArgumentParser) -> Iterator[tuple[str, Argument | None, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for verb, sub in action.choices.items():
                yield verb, None, sub
            continue
        flags = "/".join(action.option_strings) or (action.metavar if isinstance(action.metavar, str) else action.dest)
        if action.choices is not None:
            metavar = "{" + ",".join(map(str, action.choices)) + "}"
        elif action.nargs == 0:
            metavar = ""
        else:
            metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
            metavar += " ..." if isinstance(action, argparse._AppendAction) else ""
        shown = action.option_strings and action.default not in (None, False, [], "==SUPPRESS==")
        default = repr(action.default) if shown else ""
        yield "", Argument(flags, metavar if action.option_strings else "", action.required, default), parser


def cli_lines(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(verb path, line) of every verb and argument, verbs sorted, arguments as declared."""
    verbs: list[tuple[str, argparse.ArgumentParser]] = []
    arguments: list[Argument] = []
    for verb, argument, sub in _arguments(parser):
        if argument is None:
            verbs.append((f"{prefix} {verb}".strip(), sub))
        else:
            arguments.append(argument)
    if prefix:
        yield prefix, f"[{prefix}]"
        for argument in arguments:
            yield f"{prefix} {argument.flags}", argument.line("")
    for verb, sub in sorted(verbs):
        yield from cli_lines(sub, verb)


def cli_report(version: str, since: dict[str, str]) -> str:
    from constructs_lib.__main__ import PROG, build_parser

    lines = [header("cli", version, f"the command line, {PROG}").rstrip("\n"),
             "# [verb] then its arguments: a positional, or an option with its value and default", ""]
    for key, line in cli_lines(build_parser()):
        own = since.get(key, version)
        parent = FIRST if line.startswith("[") else since.get(key.rsplit(" ", 1)[0], version)
        lines.append(line + mark(own if own != parent else None, {}))
    return "\n".join(lines) + "\n"


# Reading a committed report back ---------------------------------------------------------------------
def sections(text: str) -> dict[str, str]:
    """Module name -> its stub section."""
    starts = list(_MODULE.finditer(text))
    return {m.group(1): text[m.start():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
            for i, m in enumerate(starts)}


def visit(module: str, code: str) -> griffe.Module:
    return griffe.visit(module, Path(f"{module.replace('.', '/')}.pyi"), code)


def _own_lines(obj: griffe.Object | griffe.Alias, lines: list[str]) -> list[str]:
    """The stub lines of ``obj`` itself: a function's decorators and ``def``, a class's ``class``
    line (not its members), an attribute's line."""
    if not obj.lineno:
        return []
    end = obj.endlineno if obj.is_function and obj.endlineno else obj.lineno
    return lines[obj.lineno - 1:end]


def since_marks(text: str) -> dict[str, str]:
    """Object path -> the version marked on its line, for every module section of a report."""
    marks: dict[str, str] = {}

    def walk(obj: griffe.Object, lines: list[str]) -> None:
        for member in obj.members.values():
            if member.is_alias:
                continue
            own = next((o for line in _own_lines(member, lines) if (o := parse_mark(line)[0])), None)
            if own:
                marks[member.path] = own
            if member.is_class:
                walk(member, lines)

    for module, code in sections(text).items():
        walk(visit(module, code), code.splitlines())
    return marks


def inherited_since(text: str) -> dict[str, str]:
    """Object path -> the version it appeared in (its own mark, else its parent's, else 0.1.0)."""
    marks = since_marks(text)
    out: dict[str, str] = {}

    def walk(obj: griffe.Object, parent: str) -> None:
        for member in obj.members.values():
            if member.is_alias:
                continue
            out[member.path] = marks.get(member.path, parent)
            if member.is_class:
                walk(member, out[member.path])

    for module, code in sections(text).items():
        walk(visit(module, code), FIRST)
    return out


def parameter_since(text: str) -> dict[str, dict[str, str]]:
    """A function's path -> each of its parameters -> the version it was added in (its mark, else
    the function's own), for every function of a committed report."""
    objects = inherited_since(text)
    out: dict[str, dict[str, str]] = {}

    def walk(obj: griffe.Object, lines: list[str]) -> None:
        for member in obj.members.values():
            if member.is_alias:
                continue
            if member.is_function:
                marked = next((p for line in _own_lines(member, lines) if (p := parse_mark(line)[1])), {})
                out[member.path] = {p.name: marked.get(p.name, objects[member.path]) for p in member.parameters}
            if member.is_class:
                walk(member, lines)

    for module, code in sections(text).items():
        walk(visit(module, code), code.splitlines())
    return out


def cli_since(text: str) -> dict[str, str]:
    """Verb or argument key -> the version it appeared in, from a committed ``cli.api``."""
    out: dict[str, str] = {}
    verb = ""
    for line in text.splitlines():
        own, body = parse_mark(line)[0], strip_mark(line)
        if body.startswith("["):
            verb = body.strip("[]")
            out[verb] = own or FIRST
        elif body.startswith("  ") and verb:
            key = f"{verb} {body.split()[0]}"
            out[key] = own or out[verb]
    return out


def deprecations(text: str) -> dict[str, tuple[str, str, str]]:
    """Old path -> (where it went, since, removed in), from the deprecated comments of a report."""
    found = {}
    for module, code in sections(text).items():
        for line in code.splitlines():
            if match := _DEPRECATED.match(line):
                found[f"{module}.{match.group(1)}"] = (match.group(2), match.group(3), match.group(4))
    return found


def report_version(text: str) -> str | None:
    found = _HEADER.search(text)
    return found.group(2) if found else None


# Comparing -------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """What differs between a committed report and the generated one."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: Removals and incompatible changes the policy does not allow, each with the reason.
    refused: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.refused)


def _entries(text: str) -> dict[str, str]:
    """Object path -> its stub line (members included), from every module section."""
    out = {}

    def walk(obj: griffe.Object, lines: list[str]) -> None:
        for member in obj.members.values():
            if member.is_alias or member.name == "__all__":
                continue
            out[member.path] = " ".join(strip_mark(line).strip() for line in _own_lines(member, lines))
            if member.is_class:
                walk(member, lines)

    for module, code in sections(text).items():
        walk(visit(module, code), code.splitlines())
    for path, (where, since, removed_in) in deprecations(text).items():
        out[f"{path} (deprecated)"] = f"-> {where} (since {since}, removed in {removed_in})"
    return out


def _cli_entries(text: str) -> dict[str, str]:
    out, verb = {}, ""
    for line in text.splitlines():
        body = strip_mark(line)
        if body.startswith("["):
            verb = body.strip("[]")
            out[verb] = body
        elif body.startswith("  ") and verb:
            out[f"{verb} {body.split()[0]}"] = body.strip()
    return out


def allowed(since: str, version: str, base_version: str) -> str | None:
    """Why removing or breaking what the report has listed since ``since`` is allowed in
    ``version`` (the committed report being at ``base_version``), or None: it was never
    released, or the major version changed."""
    if since == version:
        return "not released yet"
    if major(version) > major(base_version):
        return f"major version {major(version)}"
    return None


def compare(old: str, new: str, *, cli: bool = False) -> Comparison:
    """The differences from the committed report ``old`` to the generated ``new``."""
    result = Comparison()
    version = report_version(new) or current_version()
    base_version = report_version(old) or FIRST
    before, after = (_cli_entries(old), _cli_entries(new)) if cli else (_entries(old), _entries(new))
    result.added = sorted(set(after) - set(before))
    result.removed = sorted(set(before) - set(after))
    result.changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    since = cli_since(old) if cli else inherited_since(old)
    parameters = {} if cli else parameter_since(old)
    gone_deprecated = {p.removesuffix(" (deprecated)") for p in result.removed if p.endswith(" (deprecated)")}
    now_deprecated = set(deprecations(new))
    old_deprecated = deprecations(old)
    for path in gone_deprecated:
        where, since_version, removed_in = old_deprecated[path]
        if version_key(version) < version_key(removed_in) and since_version != version:
            result.refused.append(f"{path}: deprecated since {since_version}, to be removed in {removed_in}, not in "
                                  f"{version}")
    for path, (_, since_version, removed_in) in deprecations(new).items():
        if path not in old_deprecated and since_version != version:
            result.refused.append(f"{path}: deprecated now, so its deprecation is since {version}, not {since_version}")
        if major(removed_in) <= major(since_version) and version_key(removed_in) <= version_key(since_version):
            result.refused.append(f"{path}: removed in {removed_in}, not after it was deprecated ({since_version})")
    if cli:
        for key in result.removed:
            if not allowed(since.get(key, FIRST), version, base_version):
                result.refused.append(f"{key}: removed from the command line (in it since {since.get(key, FIRST)})")
        for key in result.changed:
            if "(required)" in after[key] and "(required)" not in before[key] and not allowed(
                    since.get(key, FIRST), version, base_version):
                result.refused.append(f"{key}: an optional argument made required")
        for key in result.added:
            verb, _, flag = key.rpartition(" ")
            new_verb = verb not in before if verb else True
            if flag and verb and not new_verb and ("(required)" in after[key] or not flag.startswith("-")) and not allowed(
                    since.get(verb, FIRST), version, base_version):
                result.refused.append(f"{key}: a new required argument of {verb!r}")
        return result
    for module in sorted(set(sections(old)) & set(sections(new))):
        for breakage in griffe.find_breaking_changes(visit(module, sections(old)[module]),
                                                     visit(module, sections(new)[module])):
            if breakage.kind not in BREAKING:
                continue
            path = breakage.obj.path
            if path in now_deprecated:  # moved to the deprecated names: importable still
                continue
            if allowed(since.get(path, FIRST), version, base_version):
                continue
            parameter = breakage.old_value if isinstance(breakage.old_value, griffe.Parameter) else breakage.new_value
            what = f"({parameter.name})" if isinstance(parameter, griffe.Parameter) else ""
            if breakage.kind in UNRELEASED_PARAMETER and isinstance(parameter, griffe.Parameter) and allowed(
                    parameters.get(path, {}).get(parameter.name, FIRST), version, base_version):
                continue  # a parameter the version being prepared added: no release has it
            result.refused.append(f"{path}{what}: {breakage.kind.value} (in the API since {since.get(path, FIRST)})")
    for module in sorted(set(sections(old)) - set(sections(new))):
        result.refused.append(f"{module}: the module's section is gone")
    return result


def explain(name: str, comparison: Comparison) -> str:
    """The message of a report that differs: what changed and what to do."""
    lines = [f"api/{name}.api differs from the sources:"]
    for label, items in (("added", comparison.added), ("changed", comparison.changed), ("removed", comparison.removed)):
        lines += [f"  {label}: {item}" for item in items]
    if comparison.refused:
        lines.append("  not allowed by the compatibility policy (docs/releases.md):")
        lines += [f"    {item}" for item in comparison.refused]
        lines.append("  Keep the name and deprecate it instead (an entry of runtime/_deprecated.py or _DEPRECATED: "
                     "importable, warning, removed in the "
                     "next major version), or make the change in a major version.")
    if comparison.added or comparison.changed or comparison.removed:
        lines.append("  If the change is intended, run `make api-report` and commit api/ with it; the diff of api/ is "
                     "what reviewers read. Say what changed in CHANGELOG.md.")
    return "\n".join(lines)


# Generating ------------------------------------------------------------------------------------------------
def generate(root: Path = REPO, committed: dict[str, str] | None = None, version: str | None = None) -> dict[str, str]:
    """Report name -> its text, as the sources at ``root`` make it (``committed``: the reports
    the ``since`` marks are carried over from)."""
    committed = committed if committed is not None else read_committed()
    version = version or current_version()
    loader = load(root)
    out = {name: python_report(loader, name, committed.get(name, ""), version, root) for name in REPORTS}
    out["cli"] = cli_report(version, cli_since(committed.get("cli", "")))
    return out


def read_committed(directory: Path = API_DIR) -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(directory.glob("*.api"))}


def check(generated: dict[str, str], committed: dict[str, str]) -> dict[str, Comparison]:
    """Report name -> how the committed one differs from the generated one (only those that differ)."""
    out = {}
    for name in sorted(set(generated) | set(committed)):
        if generated.get(name) == committed.get(name):
            continue
        comparison = compare(committed.get(name, ""), generated.get(name, ""), cli=name == "cli")
        if not comparison.differs:
            comparison.changed.append("(the header or the order of the file)")
        out[name] = comparison
    return out


def names_per_report(generated: dict[str, str]) -> dict[str, int]:
    """Report name -> how many public names it lists (module-level names; the CLI: verbs)."""
    counts = {}
    for name, text in generated.items():
        if name == "cli":
            counts[name] = sum(1 for line in text.splitlines() if line.startswith("["))
        else:
            counts[name] = sum(len(ast.literal_eval(found.group(1))) for code in sections(text).values()
                               if (found := re.search(r"^__all__ = (.*)$", code, re.MULTILINE)))
    return counts


def main(argv: Iterable[str] | None = None, directory: Path = API_DIR) -> int:
    """Check ``directory`` (``api/``) against the sources, or write it (``--write``); the exit status."""
    parser = argparse.ArgumentParser(prog="python -m scripts.api_report", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write api/ (refused if the policy forbids a change)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    committed = read_committed(directory)
    generated = generate(committed=committed)
    differences = check(generated, committed)
    refused = {name: c for name, c in differences.items() if c.refused}
    if args.write and not refused:
        directory.mkdir(exist_ok=True)
        for name, text in generated.items():
            (directory / f"{name}.api").write_text(text, encoding="utf-8")
        for stray in set(committed) - set(generated):
            (directory / f"{stray}.api").unlink()
        counts = names_per_report(generated)
        print("wrote api/: " + ", ".join(f"{name} {count}" for name, count in counts.items()))
        return 0
    for name, comparison in differences.items():
        print(explain(name, comparison), file=sys.stderr)
    if args.write:
        print("api/ not written: the compatibility policy refuses the changes above", file=sys.stderr)
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
