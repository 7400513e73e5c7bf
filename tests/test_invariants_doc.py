"""docs/invariants.md names the tests that hold each invariant: every one must exist, so the page
never promises what no test checks, and the invariants stay numbered 1..N without gaps."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "invariants.md"
REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
NUMBERED = re.compile(r"^(\d+)\. \*\*", re.MULTILINE)


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_named_test_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    refs = REF.findall(text)
    assert len(refs) >= 20, "the page names the tests that hold its invariants"
    missing = [
        f"{file}::{name}"
        for file, name in refs
        if not (ROOT / file).is_file() or name not in _tests_in(ROOT / file)
    ]
    assert not missing, f"docs/invariants.md names tests that do not exist: {missing}"


def test_every_invariant_names_a_test_and_the_numbers_have_no_gaps() -> None:
    text = PAGE.read_text(encoding="utf-8")
    numbers = [int(n) for n in NUMBERED.findall(text)]
    assert numbers == list(range(1, len(numbers) + 1))
    blocks = re.split(r"^\d+\. \*\*", text, flags=re.MULTILINE)[1:]
    for number, block in enumerate(blocks, 1):
        block = block.split("\n## ")[0]
        assert REF.search(block), f"invariant {number} names no test"


def test_the_checker_finds_a_missing_test(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_here() -> None:\n    pass\n", encoding="utf-8")
    assert _tests_in(probe) == {"test_here"}
    assert "test_gone" not in _tests_in(probe)
