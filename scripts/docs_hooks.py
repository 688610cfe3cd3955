"""Hooks of the documentation build (mkdocs.yml ``hooks:``), offline:

* the Mermaid script is copied from the npm package ``mermaid`` (pinned in package.json, installed
  by ``npm ci``) into the site as ``assets/javascripts/mermaid.min.js`` and loaded by the pages
  with a diagram, so Material renders them without reaching for its CDN copy;
* a line ``<!-- describe TARGET: SECTION -->`` in a page becomes the section ``## SECTION`` of
  what ``python -m constructs_lib describe TARGET`` prints (its headings one level down), so the
  example models' diagrams and access patterns on the site are the models' own, built each time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url
from pymdownx.superfences import fence_code_format

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # mkdocs loads this file by its path
    sys.path.insert(0, str(REPO))

from scripts.docs_pages import expand_describe  # noqa: E402

MERMAID = REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
MERMAID_URL = "assets/javascripts/mermaid.min.js"


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


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    try:
        return expand_describe(markdown)
    except LookupError as error:
        raise PluginError(f"{page.file.src_path}: {error}") from None


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
