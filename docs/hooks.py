"""mkdocs hook: the figures that the docs show from benchmarks/results/ (outside docs/).

Pages link them as ``../benchmarks/results/...`` (correct when the Markdown is read in the
repository); the build copies each linked figure to ``assets/results/...`` and rewrites the links.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\((?:\.\./)+benchmarks/results/([^)\s]+\.png)\)")


def on_files(files, config):
    """Add every figure the pages link under benchmarks/results/ to the site."""
    wanted = set()
    for path in Path(config["docs_dir"]).rglob("*.md"):
        if "notebooks" not in path.parts:
            wanted.update(LINK.findall(path.read_text(encoding="utf-8")))
    for name in sorted(wanted):
        source = ROOT / "benchmarks" / "results" / name
        files.append(File.generated(config, f"assets/results/{name}", abs_src_path=str(source)))
    return files


def on_page_markdown(markdown, page, config, files):
    """Point the figure links at their copies under assets/results/."""
    depth = page.file.src_uri.count("/")
    return LINK.sub(lambda m: f"({'../' * depth}assets/results/{m.group(1)})", markdown)
