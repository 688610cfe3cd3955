"""The pages read in a browser: the Markdown of every page but the decision records and the API
reference keeps its code within 88 columns and its paragraphs (list items, admonitions and table
cells included) within 90 words; every guide page leads with a titled example of at most 25 lines
after at most two sentences; the home page is the README's promise, then links
(scripts/docs_pages.py reads the pages; tests/integration/test_docs_examples.py runs the examples)."""

from __future__ import annotations

import re
from pathlib import Path

from scripts.docs_pages import (
    DOCS,
    MAX_CODE_LINE,
    MAX_LEAD_LINES,
    MAX_LEAD_SENTENCES,
    MAX_PARAGRAPH_WORDS,
    NOT_GUIDES,
    REPO,
    TESTED_ELSEWHERE,
    Page,
    guide_pages,
    readable_pages,
    sentences,
)

HOME = Page(DOCS / "index.md")
README = REPO / "README.md"
#: What "a screen" holds at 1400 x 900: the home page's words before its first link list.
SCREEN_WORDS = 120


def test_no_code_line_is_wider_than_88_columns() -> None:
    # GIVEN the readable pages
    # WHEN the lines of their code blocks are measured
    wide = [f"{page.name}:{block.line}: {len(line)} columns: {line[:60]}..."
            for page in readable_pages() for block in page.code_blocks()
            for line in block.lines if len(line) > MAX_CODE_LINE]
    # THEN none is wider than 88 columns
    assert wide == []


def test_no_paragraph_is_longer_than_90_words() -> None:
    # GIVEN the readable pages
    # WHEN their paragraphs, list items, admonitions and table cells are counted
    long = [f"{page.name}:{p.line}: {p.words} words: {p.text[:60]}..."
            for page in readable_pages() for p in page.paragraphs() if p.words > MAX_PARAGRAPH_WORDS]
    # THEN none is longer than 90 words
    assert long == []


def test_every_guide_page_leads_with_a_short_titled_example() -> None:
    # GIVEN the guide pages
    problems = []
    for page in guide_pages():
        # WHEN the prose and headings before the first code block are read
        prose, blocks, headings = page.lead()
        # THEN the first code block is a titled example of at most 25 lines (with the files beside
        # it), after at most two sentences and no heading but the page's title
        if not blocks:
            problems.append(f"{page.name}: no code block")
            continue
        block, lines = blocks[0], sum(len(b.lines) for b in blocks)
        said = sum(sentences(p.text) for p in prose)
        if said > MAX_LEAD_SENTENCES:
            problems.append(f"{page.name}: {said} sentences before the example")
        if headings:
            problems.append(f"{page.name}: headings before the example: {headings}")
        if page.name not in TESTED_ELSEWHERE and block.title is None:
            problems.append(f'{page.name}:{block.line}: the example has no title="<file name>"')
        if lines > MAX_LEAD_LINES:
            problems.append(f"{page.name}:{block.line}: the example has {lines} lines")
    assert problems == []


def test_the_pages_tested_elsewhere_name_their_test() -> None:
    # GIVEN the guide pages whose example a test of its own runs
    for page, test in TESTED_ELSEWHERE.items():
        # THEN that test exists and reads the page
        assert (DOCS / page).is_file(), page
        assert Path(page).name in (REPO / test).read_text(encoding="utf-8"), (page, test)
    # AND the pages that are no guide exist
    assert {name for name in NOT_GUIDES if not (DOCS / name).is_file()} == set()


def test_the_counts_catch_a_wide_line_a_long_paragraph_and_a_late_example(tmp_path: Path) -> None:
    # GIVEN a page with a 89-column code line, a 91-word list item, a 91-word table cell and three
    # sentences before its first code block
    page = tmp_path / "page.md"
    words = " ".join(["word"] * 91)
    page.write_text(f"# Page\n\nOne. Two [a link](x.md). Three:\n\n```python title=\"a.py\"\n{'x' * 89}\n```\n\n"
                    f"- {words}\n\n| a | b |\n| --- | --- |\n| {words} | short |\n", encoding="utf-8")
    parsed = Page.__new__(Page)
    object.__setattr__(parsed, "path", page)
    # WHEN it is read
    prose, (block,), _ = parsed.lead()
    # THEN each is seen
    assert block.title == "a.py" and max(map(len, block.lines)) == 89
    assert sum(sentences(p.text) for p in prose) == 3
    assert sorted(p.words for p in parsed.paragraphs())[-2:] == [91, 91]


def first_paragraph(text: str) -> str:
    body = text.split("\n\n", 2)[1]
    return " ".join(body.split())


def test_the_home_page_is_the_promise_then_links() -> None:
    # GIVEN the home page and the README
    text = HOME.path.read_text(encoding="utf-8")
    # THEN it opens with the README's promise
    assert first_paragraph(text) == first_paragraph(README.read_text(encoding="utf-8"))
    # AND what comes before its first list of links fits a screen
    first_list = re.search(r"^(- |\| )", text, flags=re.MULTILINE)
    assert first_list is not None
    assert len(text[: first_list.start()].split()) <= SCREEN_WORDS
    # AND after the promise every paragraph, list item and table cell holds a link, but headings
    rest = [p for p in HOME.paragraphs() if p.line > 4]
    assert rest and [p.text for p in rest if "](" not in p.text and len(rest) > 0] == []
    # AND it shows no code
    assert HOME.code_blocks() == []
