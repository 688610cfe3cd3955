"""Hooks of the documentation build (mkdocs.yml ``hooks:``), offline:

* the Mermaid script is copied from the npm package ``mermaid`` (pinned in package.json, installed
  by ``npm ci``) into the site as ``assets/javascripts/mermaid.min.js`` and loaded by the pages
  with a diagram, so Material renders them without reaching for its CDN copy;
* a line ``<!-- describe TARGET: SECTION -->`` in a page becomes the section ``## SECTION`` of
  what ``python -m constructs_lib describe TARGET`` prints (its headings one level down), so the
  example models' diagrams and access patterns on the site are the models' own, built each time.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url
from pymdownx.superfences import fence_code_format

REPO = Path(__file__).resolve().parents[1]
MERMAID = REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
MERMAID_URL = "assets/javascripts/mermaid.min.js"
DIRECTIVE = re.compile(r"^<!-- describe (?P<target>[\w.:/-]+): (?P<section>[^>]+?) -->$", flags=re.MULTILINE)


def on_config(config: Any) -> Any:
    """Check the Mermaid script is there, and let ```` ```mermaid ```` blocks through to Material."""
    if not MERMAID.is_file():
        raise PluginError(f"{MERMAID.relative_to(REPO)} is missing: run `npm ci` (make docs runs it)")
    superfences = config["mdx_configs"].setdefault("pymdownx.superfences", {})
    fences = superfences.setdefault("custom_fences", [])
    if not any(fence.get("name") == "mermaid" for fence in fences):
        fences.append({"name": "mermaid", "class": "mermaid", "format": fence_code_format})
    return config


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, MERMAID_URL, abs_src_path=str(MERMAID)))
    return files


@functools.cache
def described(target: str) -> str:
    """What ``python -m constructs_lib describe TARGET`` prints."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from constructs_lib.__main__ import load_models
    from constructs_lib.docgen.describe import describe_all

    return describe_all(load_models(target))


def section(target: str, name: str) -> str:
    """The body of the section ``## name`` of *target*'s description, headings one level down."""
    text = described(target)
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    if found is None:
        raise PluginError(f"describe {target}: no section {name!r}")
    return re.sub(r"^(#+ )", r"#\1", found.group(1).strip(), flags=re.MULTILINE) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return DIRECTIVE.sub(lambda match: section(match["target"], match["section"]), markdown)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Load the Mermaid script on the pages with a diagram only (3.5 MB), before Material's bundle
    looks for it, so the bundle never fetches its own."""
    if 'class="mermaid"' not in output:
        return output
    script = f'<script src="{get_relative_url(MERMAID_URL, page.url)}"></script>'
    head, found, tail = output.partition("</head>")
    if not found:
        raise PluginError(f"{page.file.src_path}: no </head> to load Mermaid in")
    return head + script + found + tail
