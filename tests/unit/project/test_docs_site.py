"""The README and the documentation site: the README stays short and leads with the two commands,
every relative link of README.md and docs/ resolves (file and anchor), the site's nav lists every
page, and the site builds offline. ``make docs`` (``mkdocs build --strict``) checks the links of
docs/ again; README.md is outside the site, so only this test checks its links."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
DOCS = REPO / "docs"
MKDOCS = REPO / "mkdocs.yml"
TWO_COMMANDS = [
    "make demo   # install, synthesize app.py, run it end to end on a local DynamoDB (no AWS account)",
    "make test   # install, run the whole test suite",
]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.MULTILINE | re.DOTALL)


def prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (as mkdocs builds it) gives a heading."""
    text = re.sub(r"<[^>]+>", "", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+?)\s*$", prose(path.read_text(encoding="utf-8")), flags=re.MULTILINE)
    return {slug(h) for h in headings}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    return broken


def test_the_slug_is_mkdocs_anchor() -> None:
    # GIVEN headings with code, punctuation and a non-ASCII letter THEN the anchors are mkdocs'
    assert slug("Count at scale: `ShardedCounter`") == "count-at-scale-shardedcounter"
    assert slug("The two-repository recipe, file first") == "the-two-repository-recipe-file-first"
    assert slug("Use it in your project") == "use-it-in-your-project"


def test_the_readme_is_short_and_leads_with_the_two_commands() -> None:
    # GIVEN the README
    text = README.read_text(encoding="utf-8")
    # THEN it is at most 300 lines
    assert len(text.splitlines()) <= 300, len(text.splitlines())
    # AND its first code block is the two commands, and no command comes before it
    first_block = re.search(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert first_block is not None and first_block.group(1) == "bash"
    assert first_block.group(2).splitlines() == TWO_COMMANDS
    before = text[: first_block.start()]
    assert not re.search(r"`(make|pip|python|npm|npx|cdk) ", before), before
    # AND the Makefile has both targets
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, flags=re.MULTILINE) and re.search(r"^test:", makefile, flags=re.MULTILINE)


def test_the_readme_first_stack_is_the_tested_app() -> None:
    # GIVEN the README's python blocks and the model and app.py that tests/packaging/test_tutorial.py runs
    readme_blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    page = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    files = [re.search(rf'```python title="{name}"\n(.*?)```', page, flags=re.DOTALL) for name in ("notes_model.py", "app.py")]
    # THEN the README shows exactly those two files
    assert None not in files and readme_blocks == [f.group(1) for f in files if f is not None]


def test_every_relative_link_resolves() -> None:
    # GIVEN the README and every page of docs/
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    # WHEN their relative links are followed
    broken = {str(p.relative_to(REPO)): b for p in pages if (b := broken_links(p))}
    # THEN each names an existing file, and a heading of it when it has an anchor
    assert broken == {}


def test_the_link_check_catches_a_broken_file_and_anchor(tmp_path: Path) -> None:
    # GIVEN a page with one good and two broken links
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-section) [file](missing.md) [anchor](other.md#nope)\n"
                    "```\n[in code](ignored.md)\n```\n", encoding="utf-8")
    # WHEN checked THEN exactly the two broken ones are reported
    assert [b.split(":")[0] for b in broken_links(page)] == ["missing.md", "other.md#nope"]


def test_the_nav_lists_every_page() -> None:
    # GIVEN the site's nav and the pages of docs/
    config = MKDOCS.read_text(encoding="utf-8")
    nav = re.findall(r"^\s+- (?:[^\n]*?: )?([\w./-]+\.md)\s*$", config.split("\nnav:\n", 1)[1], flags=re.MULTILINE)
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    # THEN every page is in the nav once and the nav names no missing page (mkdocs --strict fails either)
    assert sorted(nav) == pages


def test_the_site_builds_offline() -> None:
    # GIVEN the site's configuration
    config = MKDOCS.read_text(encoding="utf-8")
    # THEN it fetches nothing: no web fonts, no plugin that downloads (social cards, privacy), no
    # remote inventories for cross-references, no remote snippets; nor material's offline plugin,
    # whose pages load a script from unpkg.com
    assert re.search(r"^  font: false$", config, flags=re.MULTILINE)
    assert not re.search(r"^\s+- (social|privacy|offline|blog|git-\w+)\b", config, flags=re.MULTILINE)
    assert not re.search(r"^\s+(inventories|import):", config, flags=re.MULTILINE) and "url_download" not in config
    assert re.search(r"^strict: true$", config, flags=re.MULTILINE)
