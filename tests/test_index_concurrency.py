"""Several real processes on one embedded index: a writer re-indexing while searchers query.
Nothing hangs, nothing crashes, and the index ends consistent with the files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import clean_env
from lorebook.index.manifest import Manifest
from search_fixtures import open_book

WRITER = """
import sys, time
from pathlib import Path
from lorebook import Lorebook
root = Path(sys.argv[1])
book = Lorebook.open(root, env={})
for i in range(int(sys.argv[2])):
    path = root / "learnings" / f"churn-{i % 5}.md"
    path.write_text(f"---\\nid: churn-{i % 5}\\ntitle: Churn lesson {i} about cache eviction\\n"
                    f"status: published\\n---\\n## Key Takeaway\\nRevision {i}.\\n")
    if i % 7 == 3:
        (root / "learnings" / f"churn-{(i + 1) % 5}.md").unlink(missing_ok=True)
    book.index.update()
print("writer done")
"""

READER = """
import json, sys, time
from lorebook import Lorebook
book = Lorebook.open(sys.argv[1], env={})
found = 0
slowest = 0.0
for i in range(int(sys.argv[2])):
    t0 = time.monotonic()
    hits = book.index.search("RLS policy blocks insert", limit=3)
    slowest = max(slowest, time.monotonic() - t0)
    found += bool(hits) and hits[0].id == "rls-anon-insert"
print(json.dumps({"found": found, "slowest": slowest, "warnings": book.index.warnings}))
"""


@pytest.mark.slow
def test_writer_and_searchers_in_parallel(search_store: Path) -> None:
    open_book(search_store).index.update()  # the initial build, so readers start warm
    env = clean_env()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(search_store), "25"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    ]
    procs += [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(search_store), "15"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    deadline = time.monotonic() + 600
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
        assert proc.returncode == 0, err[-2000:]
        outputs.append(out)
    assert "writer done" in outputs[0]
    for out in outputs[1:]:
        report = json.loads(out.strip().splitlines()[-1])
        assert report["found"] == 15, report  # every search answered, the right learning on top
    # consistent afterwards: the manifest matches the files and the store matches the manifest
    book = open_book(search_store)
    report = book.index.update()
    assert not report.rebuilt and report.added == [] and report.removed == [], report
    manifest = Manifest.load(search_store / ".lore" / "cache" / "index" / "manifest.json")
    assert manifest is not None
    on_disk = {f"learnings/{p.name}" for p in (search_store / "learnings").glob("*.md")}
    assert set(manifest.files) == on_disk
    assert book.index.store.count() == sum(e.chunks for e in manifest.files.values())
    churn = [h.id for h in book.index.search("churn lesson cache eviction", limit=10)]
    assert {
        f"churn-{i}" for i in range(5) if (search_store / "learnings" / f"churn-{i}.md").exists()
    } <= set(churn)
