"""The README is a front page (what, quickstart, the commands, links) and every page of docs/ is one click
from it; no link of the README or of docs/ points at a file that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")

#: The README's sections before it became a front page: each is now a heading of a page it links to.
FORMER_SECTIONS = (
    "Running mm2 on your clusters",
    "Reloading the configuration",
    "Secured clusters: TLS, mutual TLS, SASL",
    "Secrets in internal topics",
    "Securing the REST API: HTTPS and authentication",
    "Backfill",
    "Failover and failback",
    "Proving a mirror identical: `mm2 verify`",
    "Exactly-once mirroring",
    "Sink connectors in `mm2 connect`",
    "Plugins of your own",
    "The container image",
    "Tests",
    "Where things are",
    "Monitoring: Prometheus and Grafana",
    "REST API: OpenAPI and input validation",
)


def _local_links(page: Path) -> list[Path]:
    return [
        (page.parent / target).resolve()
        for target, _ in LINK.findall(page.read_text())
        if not target.startswith(("http://", "https://", "mailto:"))
    ]


def test_the_front_page_is_short_and_starts_with_the_quickstart() -> None:
    text = README.read_text()
    assert len(text.encode()) < 10 * 1024
    assert text.index("## Quickstart") < text.index("## Documentation")


def test_every_docs_page_is_one_click_from_the_readme() -> None:
    linked = set(_local_links(README))
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set()


def test_every_former_readme_section_is_a_heading_of_a_linked_page() -> None:
    headings = {
        line.lstrip("#").strip()
        for page in _local_links(README)
        if page.suffix == ".md"
        for line in page.read_text().splitlines()
        if line.startswith("#")
    }
    assert [s for s in FORMER_SECTIONS if s not in headings] == []


def test_no_link_in_the_readme_or_docs_points_nowhere() -> None:
    missing = [
        f"{page.name} -> {target}"
        for page in (README, *sorted((ROOT / "docs").glob("*.md")))
        for target in _local_links(page)
        if not target.exists()
    ]
    assert missing == []
