"""The documentation pages read as Markdown: which pages are guides, their code blocks,
paragraphs and lead examples. Read by the docs tests (tests/unit/project/test_docs_readability.py,
tests/integration/test_docs_examples.py) and the docs build's hooks (scripts/docs_hooks.py).

A *lead example* is the first fenced code block of a guide page, titled with the file it is
(```` ```python title="test_orders.py" ````) or, for commands, where they run (```` ```bash
title="in a checkout of this repository" ````), with any titled blocks right after it: the files
it needs beside it. It comes after at most two sentences of prose and no heading but the page's
title, and holds at most 25 lines in all.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

#: Records kept as written and the generated API reference: outside the readability rules.
RECORDS = ("adr/", "reference/")
#: Pages that are not guides to a feature, so lead with no runnable example: the home page (the
#: promise, then links) and the examples' index, the design and format references, the
#: repository's own test suite, benchmarks and release policy, and the LocalStack page, whose
#: commands install and start LocalStack (minutes; `make deploy-check` runs that path in CI).
NOT_GUIDES = frozenset({
    "index.md", "examples/index.md", "ARCHITECTURE.md", "layout.md", "contract-format.md",
    "testing.md", "benchmarks.md", "releases.md", "deploy-to-localstack.md",
})
#: Guide pages whose lead example runs verbatim in a test of its own (it needs files beside it or a
#: fresh project): page -> that test. The others run in tests/integration/test_docs_examples.py.
TESTED_ELSEWHERE = {
    "tutorial.md": "tests/packaging/test_tutorial.py",
    "testing-your-stacks.md": "tests/integration/test_readme_testing.py",
    "patterns/two-repositories.md": "tests/packaging/test_readme_recipe.py",
}
MAX_CODE_LINE = 88
MAX_PARAGRAPH_WORDS = 90
MAX_LEAD_LINES = 25
MAX_LEAD_SENTENCES = 2

#: A line ``<!-- describe TARGET: SECTION -->``: that section of ``describe TARGET`` (the build's hook).
DESCRIBE = re.compile(r"^<!-- describe (?P<target>[\w.:/-]+): (?P<section>[^>]+?) -->$", flags=re.MULTILINE)
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_ADMONITION = re.compile(r"^\s*(?:!!!|\?\?\?\+?)\s")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TITLE = re.compile(r'title="([^"]+)"')


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: its language, title (``title="..."``), lines and the line it opens on."""

    language: str
    title: str | None
    lines: tuple[str, ...]
    line: int

    @property
    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)


@dataclass(frozen=True)
class Paragraph:
    """A block of prose: a paragraph, a list item, an admonition's paragraph or a table cell."""

    text: str
    line: int

    @property
    def words(self) -> int:
        return len(_LINK.sub(r"\1", self.text).split())


@dataclass(frozen=True)
class Page:
    """A page of docs/ read as Markdown."""

    path: Path

    @property
    def name(self) -> str:
        """The path under docs/, with forward slashes (``patterns/backfill.md``)."""
        return self.path.relative_to(DOCS).as_posix()

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def is_record(self) -> bool:
        return self.name.startswith(RECORDS)

    @property
    def is_guide(self) -> bool:
        return not self.is_record and self.name not in NOT_GUIDES

    def code_blocks(self) -> list[CodeBlock]:
        return [item for item in _blocks(self.text) if isinstance(item, CodeBlock)]

    def paragraphs(self) -> list[Paragraph]:
        return [item for item in _blocks(self.text) if isinstance(item, Paragraph)]

    def lead(self) -> tuple[list[Paragraph], list[CodeBlock], list[str]]:
        """(the prose before the first code block, the lead example's blocks, the headings before
        it but the title). The example is the first code block and the titled blocks right after
        it (files beside it, such as a handler); no block when the page has none."""
        prose: list[Paragraph] = []
        headings: list[str] = []
        blocks: list[CodeBlock] = []
        for item in _blocks(self.text, headings=True):
            if isinstance(item, CodeBlock) and (not blocks or item.title is not None):
                blocks.append(item)
            elif blocks:
                break
            elif isinstance(item, Paragraph):
                prose.append(item)
            elif not item.startswith("# "):
                headings.append(item)
        return prose, blocks, headings


def pages() -> list[Page]:
    """Every page of docs/, sorted by path."""
    return [Page(path) for path in sorted(DOCS.rglob("*.md"))]


def readable_pages() -> list[Page]:
    """The pages the readability rules apply to: all but the records and the API reference."""
    return [page for page in pages() if not page.is_record]


def guide_pages() -> list[Page]:
    return [page for page in pages() if page.is_guide]


def sentences(text: str) -> int:
    """How many sentences *text* holds (a sentence ends with ``.``, ``!``, ``?`` or ``:`` followed by
    a space or the end; text left over after the last one counts as one more)."""
    plain = re.sub(r"`[^`]*`", "code", _LINK.sub(r"\1", text)).strip()
    ends = re.findall(r"[.!?:](?=\s|$)", plain)
    rest = re.split(r"[.!?:](?=\s|$)", plain)[-1].strip()
    return len(ends) + (1 if rest else 0)


def _blocks(text: str, *, headings: bool = False) -> Iterator[CodeBlock | Paragraph | str]:
    """The code blocks and paragraphs of *text* in order (and its headings, if asked)."""
    lines = text.splitlines()
    paragraph: list[str] = []
    start = 0
    index = 0

    def flush() -> Iterator[Paragraph]:
        nonlocal paragraph
        if paragraph:
            yield Paragraph(" ".join(paragraph), start)
        paragraph = []

    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        fence = _FENCE.match(line)
        if fence:
            yield from flush()
            indent, marker, info = len(fence["indent"]), fence["fence"], fence["info"].strip()
            body: list[str] = []
            opened = index + 1
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(marker):
                text = lines[index]
                body.append(text[indent:] if not text[:indent].strip() else text.lstrip())
                index += 1
            title = _TITLE.search(info)
            language = info.split()[0] if info.split() else ""
            yield CodeBlock(language, title.group(1) if title else None, tuple(body), opened)
            index += 1
            continue
        if stripped.startswith("<!--"):
            yield from flush()
            while index < len(lines) and "-->" not in lines[index]:
                index += 1
            index += 1
            continue
        if not stripped or stripped.startswith("#") or _ADMONITION.match(line):
            yield from flush()
            if headings and stripped.startswith("#"):
                yield stripped
            index += 1
            continue
        if stripped.startswith("|"):
            yield from flush()
            if not re.fullmatch(r"\|[\s:|-]+\|?", stripped):
                for cell in re.split(r"(?<!\\)\|", stripped.strip("|")):
                    if cell.strip():
                        yield Paragraph(cell.strip(), index + 1)
            index += 1
            continue
        if _LIST_ITEM.match(line):
            yield from flush()
        if not paragraph:
            start = index + 1
        paragraph.append(_LIST_ITEM.sub("", stripped, count=1) if not paragraph else stripped)
        index += 1
    yield from flush()


@functools.cache
def described(target: str) -> str:
    """What ``python -m constructs_lib describe TARGET`` prints (run from the repository's root)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from constructs_lib.__main__ import load_models
    from constructs_lib.docgen.describe import describe_all

    return describe_all(load_models(target))


def describe_section(target: str, name: str) -> str:
    """The body of the section ``## name`` of *target*'s description, its headings one level down.

    Raises
    ------
    LookupError
        If the description has no such section.
    """
    text = described(target)
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    if found is None:
        raise LookupError(f"describe {target}: no section {name!r}")
    return re.sub(r"^(#+ )", r"#\1", found.group(1).strip(), flags=re.MULTILINE) + "\n"


def expand_describe(markdown: str) -> str:
    """*markdown* with every ``<!-- describe TARGET: SECTION -->`` line replaced by that section."""
    return DESCRIBE.sub(lambda match: describe_section(match["target"], match["section"]), markdown)
