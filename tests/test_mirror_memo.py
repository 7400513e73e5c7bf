"""`lore mirror postgres` redacts no record again of a shard the catalog's memo vouches for
(verified clean under the current rules, unchanged since), and remembers the shards it read
whole and found clean; a shard edited since (a secret planted by hand) is redacted in full and
the secret never reaches PostgreSQL. Against the real PostgreSQL of tests/pg_server.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clean_memo import count_redactions, trust_at_once
from lorebook import Lorebook
from lorebook.mirror import postgres as mirror_pg
from pg_server import Server, pg_server
from test_mirror_postgres import make_repo, query

__all__ = ["pg_server"]  # the session fixture, used by name

psycopg = pytest.importorskip("psycopg")
TOKEN = "ghp_" + "Zq8Lr2Vt6Xw0Yb4Nc7Md1Pf5Hs9Jk3Ga8Ue"  # a GitHub token's shape
PLAIN = "a plain note that is not a secret at all, padded"  # as long as TOKEN + 8


@pytest.fixture
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    trust_at_once(monkeypatch)


@pytest.fixture
def redactions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records the mirror handed to the redactor."""
    return count_redactions(monkeypatch, mirror_pg)


def store(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = make_repo(tmp_path / "repo")
    with Lorebook.open(root, env={}) as book:
        for project in ("alpha", "beta"):
            with book.session(agent="PS", project=project) as s:
                for n in range(3):
                    book.log("commit", session=s.id, context={"note": f"{PLAIN} {n}"})
        book.catalog.sync()  # the catalog, with no shard verified yet
    return root, sorted((root / "actionlog").rglob("*.jsonl"))


def mirror(root: Path, dsn: str) -> Any:
    with Lorebook.open(root, env={}) as book:
        return book.mirror_postgres(dsn)


def texts(dsn: str) -> str:
    rows = query(dsn, "SELECT context::text, metadata::text, coalesce(error_message, '')"
                      " FROM supervisor_actions")  # fmt: skip
    return "\n".join("\t".join(row) for row in rows)


def test_vouched_shards_are_not_redacted_again_and_a_planted_secret_never_reaches_postgres(
    pg_server: Server, tmp_path: Path, trusted_at_once: None, redactions: list[int]
) -> None:
    root, shards = store(tmp_path)
    first, second, third = pg_server.database(), pg_server.database(), pg_server.database()
    assert mirror(root, first)["actions"] == 6
    assert redactions[0] == 10  # every record checked: no shard was vouched for yet
    redactions[0] = 0
    assert mirror(root, second)["actions"] == 6  # the memo now vouches for both shards
    assert redactions[0] == 0
    assert texts(second) == texts(first)
    # a secret planted by hand in a vouched shard, the line's length kept
    planted = shards[0]
    data = planted.read_bytes()
    assert PLAIN.encode() in data
    planted.write_bytes(data.replace(PLAIN.encode(), (TOKEN + " x").ljust(len(PLAIN)).encode(), 1))
    assert planted.stat().st_size == len(data)
    assert mirror(root, third)["actions"] == 6
    assert redactions[0] == 5  # the edited shard in full, the other still vouched for
    assert TOKEN not in texts(third)
    assert "[REDACTED" in texts(third)
    mirror(root, first)  # the watermark's tail changed: the shard is read again, by key
    assert TOKEN not in texts(first)
    with Lorebook.open(root, env={}) as book:  # and it is not vouched for now
        found = book.catalog.clean_shards({str(p): _identity(p) for p in shards})
    assert found == {str(shards[1])}


def _identity(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
