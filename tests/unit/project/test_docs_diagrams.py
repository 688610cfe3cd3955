"""The worked examples' pages show each model's own diagram and access patterns: every
``<!-- describe TARGET: SECTION -->`` line of docs/ resolves to that section of what ``describe``
prints (the docs build's hook expands them with scripts/docs_pages.py), the Mermaid block is the
model's ``mermaid()`` exactly, and every example model has its page."""

from __future__ import annotations

import re

import pytest

from constructs_lib.__main__ import load_models
from constructs_lib.docgen.describe import mermaid
from scripts.docs_pages import DESCRIBE, DOCS, REPO, describe_section, expand_describe

PAGES = sorted((DOCS / "examples").glob("*.md"))


def directives() -> list[tuple[str, str, str]]:
    """(page, target, section) of every describe line under docs/."""
    return [(page.relative_to(DOCS).as_posix(), match["target"], match["section"])
            for page in sorted(DOCS.rglob("*.md"))
            for match in DESCRIBE.finditer(page.read_text(encoding="utf-8"))]


def test_every_example_model_has_a_page_with_its_diagram() -> None:
    # GIVEN the example apps and the describe lines of the docs
    examples = {path.parent.name for path in REPO.glob("examples/*/app.py")}
    found = directives()
    # THEN each example has a page drawing its model's item collections and listing its patterns
    drawn = {page.removeprefix("examples/").removesuffix(".md")
             for page, _, section in found if section == "Item collections"}
    assert drawn == examples
    assert {page for page, _, section in found if section == "Access patterns"} == {
        page for page, _, section in found if section == "Item collections"}


@pytest.mark.parametrize(("page", "target", "section"), directives())
def test_a_diagram_is_the_models_own(page: str, target: str, section: str) -> None:
    # GIVEN a describe line of a page
    # WHEN the build expands it
    text = describe_section(target, section)
    # THEN it is that section of describe's output, and a diagram is the model's Mermaid exactly
    assert text.strip() and not text.startswith("## ")
    if section == "Item collections":
        (model,) = [model for _, model in load_models(target)]
        assert f"```mermaid\n{mermaid(model)}\n```" in text, page


def test_an_unknown_section_is_refused() -> None:
    # GIVEN a describe line naming a section describe does not print
    # THEN expanding it fails, naming the target and the section
    with pytest.raises(LookupError, match=re.escape("describe examples.shop.model: no section 'Nope'")):
        expand_describe("<!-- describe examples.shop.model: Nope -->\n")
