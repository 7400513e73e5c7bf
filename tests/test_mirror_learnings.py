"""`lore mirror postgres` carries what a learning says (its body, anchors, prevention steps and
solutions), redacted, into lorebook_learnings; a rerun replaces it, never duplicates it; a
database a version-1 lorebook made is migrated (0002, 0003) and filled on the next mirror; the
learnings are sent again only when their files, the redaction settings or the code that makes
their rows changed (0003's digest), in any clone. Against the real PostgreSQL of
tests/pg_server.py and the real `lore`."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from conftest import git
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
    assert done["schema_version"] == 3
    versions = [v for (v,) in query(dsn, "SELECT version FROM lorebook_schema ORDER BY 1")]
    assert versions == [1, 2, 3]
    (body,) = query(dsn, "SELECT body FROM lorebook_learnings")[0]
    assert "The deploy hung on the health URL." in str(body)
    assert json.dumps(query(dsn, "SELECT count(*) FROM lorebook_learnings")) == "[[1]]"


def versions_of(dsn: str, repository: str) -> dict[str, str]:
    """Each learning row's id -> its row version (xmin): a rewritten row gets a new one."""
    found = query(dsn, "SELECT id, xmin::text FROM lorebook_learnings WHERE repository = %s",
                  repository)  # fmt: skip
    return {str(i): str(x) for i, x in found}


def test_unchanged_learnings_are_left_as_they_are_and_any_change_sends_them(
    pg_server: Server, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    lid = lesson(root)
    dsn = pg_server.database()
    repo = repository_of(root)
    assert mirror(root, dsn)["learnings"] == 1
    first = versions_of(dsn, repo)
    (digest,) = query(dsn, "SELECT learnings_digest FROM lorebook_repositories")[0]
    assert isinstance(digest, str) and len(digest) == 32
    # a rerun with nothing changed rewrites no row, and still says how many the database holds
    assert mirror(root, dsn)["learnings"] == 1
    assert versions_of(dsn, repo) == first
    # a new draft: the set is sent again
    with Lorebook.open(root, env={}) as book:
        draft = book.learnings.new(title="Retry the flaky upload", body="## Problem\nIt fails.\n")
    assert mirror(root, dsn)["learnings"] == 2
    assert set(versions_of(dsn, repo)) == {lid, draft.id}
    # a new redaction rule changes what the rows say: sent again, redacted by it
    config = root / ".lore" / "config.yaml"
    rule = "redaction:\n  extra_patterns:\n    host: 'health URL'\n"
    config.write_text(config.read_text() + rule)
    assert mirror(root, dsn)["learnings"] == 2
    body = str(query(dsn, "SELECT body FROM lorebook_learnings WHERE id = %s", lid)[0][0])
    assert "health URL" not in body and "[REDACTED:host]" in body
    # rows deleted by hand are restored, though the files did not change
    query(dsn, "DELETE FROM lorebook_learnings WHERE id = %s RETURNING id", lid)
    assert mirror(root, dsn)["learnings"] == 2
    assert set(versions_of(dsn, repo)) == {lid, draft.id}
    # a learning removed from the repository leaves the table
    next((root / "learnings").glob(f"{lid}.md")).unlink()
    assert mirror(root, dsn)["learnings"] == 1
    assert set(versions_of(dsn, repo)) == {draft.id}


def test_another_clone_with_the_same_learnings_sends_nothing_and_parses_nothing(
    pg_server: Server, tmp_path: Path
) -> None:
    """The digest hashes content, not mtimes: a fresh clone (new files, new times) of the same
    commit finds the learnings unchanged, and a run that sends none never loads the model."""
    origin = "https://git.example.com/team/service.git"
    root = make_repo(tmp_path / "repo", origin)
    lesson(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a lesson")
    dsn = pg_server.database()
    mirror(root, dsn)
    repo = repository_of(root)
    before = versions_of(dsn, repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    git(clone, "remote", "set-url", "origin", origin)
    assert repository_of(clone) == repo
    probe = (
        "import sys\nfrom lorebook import Lorebook\n"
        f"done = Lorebook.open({str(clone)!r}, env={{}}).mirror_postgres({dsn!r})\n"
        "print(done['learnings'], 'pydantic' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=False, timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["1", "False"]
    assert versions_of(dsn, repo) == before
