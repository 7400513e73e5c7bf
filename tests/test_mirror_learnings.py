"""`lore mirror postgres` carries what a learning says (its body, anchors, prevention steps and
solutions), redacted, into lorebook_learnings; a rerun replaces it, never duplicates it; a
database a version-1 lorebook made is migrated (0002) and filled on the next mirror. Against
the real PostgreSQL of tests/pg_server.py and the real `lore`."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from lorebook import Lorebook
from pg_server import Server, pg_server
from test_mirror_postgres import make_repo, mirror, query, repository_of

__all__ = ["pg_server"]  # the session fixture, used by name

psycopg = pytest.importorskip("psycopg")
TOKEN = "ghp_" + "Zq8Lr2Vt6Xw0Yb4Nc7Md1Pf5Hs9Jk3Ga8Ue"  # a GitHub token's shape
BODY = (
    "## Problem\nThe deploy hung on the health URL.\n\n## Solution\nSet the timeout to 30 s"
    f" in deploy.yaml; the old token {TOKEN} was in the log.\n"
)


def lesson(root: Path) -> str:
    with Lorebook.open(root, env={}) as book:
        item = book.learnings.new(
            title="Health URL timeouts hang deploys", body=BODY, publish=True,
            category="deployment", tags=["deploy"], anchors=["deploy.yaml"],
            prevention=["bound every health check"],
        )  # fmt: skip
    return item.id


def rows(dsn: str, repository: str) -> list[tuple[object, ...]]:
    return query(dsn, "SELECT id, title, body, anchors, prevention, solutions, tags"
                      " FROM lorebook_learnings WHERE repository = %s", repository)  # fmt: skip


def test_a_learnings_body_reaches_the_table_redacted_and_a_rerun_does_not_duplicate_it(
    pg_server: Server, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    lid = lesson(root)
    dsn = pg_server.database()
    assert mirror(root, dsn)["learnings"] == 1
    repo = repository_of(root)
    found = rows(dsn, repo)
    assert len(found) == 1
    rid, title, body, anchors, prevention, solutions, tags = found[0]
    assert (rid, title, anchors, prevention, tags) == (
        lid, "Health URL timeouts hang deploys", ["deploy.yaml"], ["bound every health check"],
        ["deploy"],
    )  # fmt: skip
    assert "The deploy hung on the health URL." in str(body)
    assert "Set the timeout to 30 s in deploy.yaml" in str(body)
    assert TOKEN not in str(body)
    assert "[REDACTED" in str(body)
    assert solutions == []
    assert mirror(root, dsn)["learnings"] == 1
    assert rows(dsn, repo) == found  # replaced in place: one row, the same text
    # an edited body replaces the old one
    path = next((root / "learnings").glob(f"{lid}.md"))
    path.write_text(path.read_text().replace("The deploy hung", "The rollout hung"))
    mirror(root, dsn)
    again = rows(dsn, repo)
    assert len(again) == 1
    assert "The rollout hung on the health URL." in str(again[0][2])


def test_a_version_1_database_is_migrated_and_gets_the_bodies(
    pg_server: Server, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    lesson(root)
    dsn = pg_server.database()
    first = resources.files("lorebook.mirror").joinpath("migrations", "0001_seed_schema.sql")
    with psycopg.connect(dsn, autocommit=True) as conn:  # what a version-1 lorebook made
        conn.execute(
            "CREATE TABLE lorebook_schema (version INTEGER PRIMARY KEY,"
            " applied_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now())"
        )
        conn.execute(first.read_text(encoding="utf-8").encode())
        conn.execute("INSERT INTO lorebook_schema(version) VALUES (1)")
        conn.execute(
            "INSERT INTO lorebook_learnings (repository, id, title, kind, status)"
            " VALUES (%s, 'old', 'an old row', 'lesson', 'published')",
            (repository_of(root),),
        )
    done = mirror(root, dsn)
    assert done["schema_version"] == 2
    versions = [v for (v,) in query(dsn, "SELECT version FROM lorebook_schema ORDER BY 1")]
    assert versions == [1, 2]
    (body,) = query(dsn, "SELECT body FROM lorebook_learnings")[0]
    assert "The deploy hung on the health URL." in str(body)
    assert json.dumps(query(dsn, "SELECT count(*) FROM lorebook_learnings")) == "[[1]]"
