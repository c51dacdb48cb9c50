"""The documents' cross-references hold: every relative link of README.md, docs/*.md and
reproduction/docs/*.md names a file that exists (and, with ``#anchor``, a heading of it), and
every test docs/RELIABILITY.md names as proof of a promise exists (its file, and the function
named after ``::``)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "reproduction" / "docs").glob("*.md")])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
TEST_REF = re.compile(r"`((?:reproduction/)?(?:tests|benchmarks)/[\w/]+\.py)(?:::([\w\[\]*-]+))?`|`::([\w\[\]*-]+)`")


def anchors(page: Path) -> set:
    """GitHub's heading anchors: lowercased, punctuation but hyphens and underscores dropped,
    spaces made hyphens, a repeated anchor numbered -1, -2, ..."""
    seen, found = {}, set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(page: Path):
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if not re.match(r"[a-z]+:", target):
            yield target


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_an_existing_file_and_heading(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def named_tests():
    """(file, function or None) for each test RELIABILITY names; ``::name`` alone belongs to the
    file named last before it."""
    current = None
    for line in (ROOT / "docs" / "RELIABILITY.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            current = None
        if not line.startswith("|"):
            continue
        for file, function, bare in TEST_REF.findall(line):
            if file:
                current = file
                yield file, function or None
            else:
                assert current, f"RELIABILITY names ::{bare} before any test file"
                yield current, bare


def test_every_test_reliability_names_exists():
    refs = list(named_tests())
    assert len(refs) > 250  # the page's promises name some 330 tests; a parsing slip would show here
    missing = []
    for file, function in refs:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif function:
            name = function.split("[")[0]
            if not re.search(rf"^\s*(async )?def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
                missing.append(f"{file}::{function}")
    assert not missing, "docs/RELIABILITY.md names tests that do not exist: " + ", ".join(missing)


# The product's pages (issue 51): what a user reads, the references included; the research
# wing's pages (reproduction/docs) are the maintainers' and are not counted.
PRODUCT_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAX_PRODUCT_WORDS = 20_000


def test_the_product_pages_stay_within_their_word_budget() -> None:
    # a word is a run of non-space characters, as `wc -w` counts them
    words = {page.relative_to(ROOT).as_posix(): len(page.read_text(encoding="utf-8").split()) for page in PRODUCT_PAGES}
    assert sum(words.values()) <= MAX_PRODUCT_WORDS, words
    assert "docs/RELIABILITY.md" in words and "README.md" in words  # the pages counted are the product's
