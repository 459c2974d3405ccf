"""The README's layout section names every source file (so it stays the map of the tree)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["py_engine", "web", "tools", "tests", "bench"]
SKIP = re.compile(r"(__pycache__|\.pyc$|\.hypothesis|/\.)")


def listed():
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## Layout"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    names, folder = set(), ""
    for line in block.splitlines():
        if not line.strip():
            continue
        first = line.split()[0]
        if line.startswith("   "):
            continue  # a description's continuation line, not an entry
        if not line.startswith(" "):
            folder = first if first.endswith("/") else ""
            if not first.endswith("/"):
                names.add(first)
        else:
            names.add(folder + first)
    return names


def test_every_source_file_is_in_the_readme_layout():
    names = listed()
    patterns = [re.compile("^" + re.escape(n).replace(r"\*", "[^/]*") + "$") for n in names]
    missing = []
    for top in SOURCES:
        for p in (ROOT / top).rglob("*"):
            rel = p.relative_to(ROOT).as_posix()
            if p.is_file() and not SKIP.search(rel) and not any(pt.match(rel) for pt in patterns):
                missing.append(rel)
    assert not missing, "not in README's layout: " + ", ".join(sorted(missing))
    for n in names:
        if "*" not in n:
            assert (ROOT / n).exists(), f"README's layout lists {n}, which does not exist"
