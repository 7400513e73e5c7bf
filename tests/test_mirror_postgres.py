"""`lore mirror postgres` against a real PostgreSQL server (one per test session, private on
127.0.0.1): two repositories into one database, reruns, a kill -9 half-way, two clones at
once, the dashboard SQL of docs/org-scale.md against `lore report` / `lore actions`, and the
one-line failures that never print the password."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, git, lore
from lorebook import Lorebook
from pg_server import Server, generate_store, pg_server

__all__ = ["pg_server"]  # the session fixture, used by name

psycopg = pytest.importorskip("psycopg")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "org-scale.md"


def make_repo(root: Path, origin: str | None = None) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    if origin:
        git(root, "remote", "add", "origin", origin)
    (root / "README.md").write_text(f"# {root.name}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    Lorebook.init(root, env={})
    return root


def fill(root: Path, *, project: str, failures: int) -> None:
    """Two sessions of a few actions (deploys that fail, applications of a lesson)."""
    with Lorebook.open(root, env={}) as book:
        lesson = book.learnings.new(title=f"Check the health URL of {project}", publish=True,
                                    category="deployment", tags=["deploy"])  # fmt: skip
        with book.session(agent="PS", project=project) as s:
            book.log("plan", session=s.id, epic="epic-1", context={"approach": "x"})
            for n in range(failures):
                book.log("deploy", session=s.id, outcome="failure", duration_s=30.0 + n,
                         error="health check failed", context={"service": "api"})  # fmt: skip
            book.log("deploy", session=s.id, outcome="success", duration_s=12.5)
            book.knowledge.apply(lesson.id, outcome="success", session=s.id)
        s2 = book.start_session(agent="MS", project=project)
        book.log("spawn", session=s2.id, context={"subagent_type": "implementation"})
        book.log("spawn", session=s2.id, outcome="failure", context={"subagent_type": "tests"})
        book.knowledge.apply(lesson.id, outcome="failure", session=s2.id)
        book.log(
            "commit",
            session=s2.id,
            context={"message": "add key", "api_key": "sk-live-0123456789abcdefABCDEF"},
        )


def mirror(root: Path, dsn: str, *args: str, env: dict[str, str] | None = None) -> Any:
    done = lore("mirror", "postgres", dsn, "--json", *args, cwd=root, env=env, timeout=300)
    assert done.code == 0, done.err
    return json.loads(done.out)


def query(dsn: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def count(dsn: str, table: str, repository: str | None = None) -> int:
    if repository is None:
        return int(query(dsn, f"SELECT count(*) FROM {table}")[0][0])
    return int(query(dsn, f"SELECT count(*) FROM {table} WHERE repository = %s", repository)[0][0])


def repository_of(root: Path) -> str:
    with Lorebook.open(root, env={}) as book:
        key = book.appender.repo_key()
    assert key
    return key


def totals_of(dsn: str, repository: str) -> dict[str, int]:
    rows = query(dsn, "SELECT session_id, total_actions FROM supervisor_sessions"
                      " WHERE repository = %s", repository)  # fmt: skip
    return {str(sid): int(n) for sid, n in rows}


def lore_json(root: Path, *args: str) -> Any:
    done = lore(*args, "--json", cwd=root)
    assert done.code == 0, done.err
    return json.loads(done.out)


def all_actions(root: Path) -> list[dict[str, Any]]:
    return list(lore_json(root, "actions", "--limit", "100000", "--since", "3650d"))


# -- two repositories, reruns, equality with the store's own answers ----------------------------
def two_repositories(pg_server: Server, tmp_path: Path) -> tuple[str, Path, Path]:
    """A fresh database and two repositories with 2 and 3 failures among their actions."""
    dsn = pg_server.database()
    a = make_repo(tmp_path / "alpha")
    b = make_repo(tmp_path / "beta")
    fill(a, project="alpha", failures=2)
    fill(b, project="beta", failures=3)
    return dsn, a, b


def test_two_repositories_share_one_database_and_a_rerun_adds_nothing(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn, a, b = two_repositories(pg_server, tmp_path)
    first = mirror(a, dsn)
    mirror(b, dsn)
    ra, rb = repository_of(a), repository_of(b)
    assert ra != rb
    for root, repo in ((a, ra), (b, rb)):
        actions = all_actions(root)
        assert count(dsn, "supervisor_actions", repo) == len(actions)
        stored = {r[0] for r in query(dsn, "SELECT id FROM supervisor_actions"
                                            " WHERE repository = %s", repo)}  # fmt: skip
        assert stored == {x["id"] for x in actions}
        sessions = lore_json(root, "sessions")
        assert count(dsn, "supervisor_sessions", repo) == len(sessions)
        totals = dict(query(dsn, "SELECT session_id, total_actions FROM supervisor_sessions"
                                 " WHERE repository = %s", repo))  # fmt: skip
        assert totals == {s["id"]: s["action_count"] for s in sessions}
        assert count(dsn, "lorebook_learnings", repo) == len(lore_json(root, "learnings"))
        assert count(dsn, "lorebook_applications", repo) == 2
    assert first["actions"] == count(dsn, "supervisor_actions", ra)
    again = mirror(a, dsn)
    assert (again["actions"], again["applications"], again["batches"]) == (0, 0, 0)
    assert count(dsn, "supervisor_actions", ra) == len(all_actions(a))
    # the seed's helper functions run (as the seed wrote them, PostgreSQL 15 refused them)
    last = query(dsn, "SELECT * FROM get_last_session('alpha', 'MS', %s)", ra)
    session = last[0][0]
    mine = [x for x in all_actions(a) if x["session"] == session]
    newest = max(x["ts"] for x in mine)
    assert last[0][3] in {x["type"] for x in mine if x["ts"] == newest}
    assert {x["agent"] for x in mine} == {"MS"}
    recent = query(dsn, "SELECT * FROM get_session_actions(%s, 20, %s)", session, ra)
    assert len(recent) == totals_of(dsn, ra)[session]
    # the secret in a context never reaches the database
    dump = json.dumps(query(dsn, "SELECT context, metadata FROM supervisor_actions"))
    assert "sk-live-0123456789" not in dump


def test_new_lines_are_sent_once_and_a_rewritten_shard_is_resynced_by_key(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn = pg_server.database()
    a = make_repo(tmp_path / "alpha")
    fill(a, project="alpha", failures=1)
    mirror(a, dsn)
    with Lorebook.open(a, env={}) as book:
        book.log("validate", outcome="failure", error="3 tests failed")
    assert mirror(a, dsn)["actions"] == 1
    # a union merge appends a line the shard already holds: new bytes, a key already stored
    shard = max((a / "actionlog").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    with shard.open("ab") as handle:
        handle.write(shard.read_bytes().splitlines(keepends=True)[1])
    repeat = mirror(a, dsn)
    assert (repeat["actions"], repeat["shards_resynced"], repeat["batches"]) == (0, 0, 1)
    # a union merge interleaves another clone's line: the stored tail no longer matches ->
    # the shard is read again from the start, its keys drop what is already stored
    from lorebook.ids import new_ulid
    from lorebook.log.writer import encode

    lines = shard.read_bytes().splitlines(keepends=True)
    other = json.loads(lines[-1])
    other.update(id=new_ulid(), kind="action", type="validate", outcome="failure")
    shard.write_bytes(b"".join([*reversed(lines), encode(other)]))
    redo = mirror(a, dsn)
    assert (redo["shards_resynced"], redo["actions"]) == (1, 1)
    assert count(dsn, "supervisor_actions") == len(all_actions(a))
    # a reordering alone keeps the size and the rows: nothing to read
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(b"".join(reversed(lines)))
    assert mirror(a, dsn)["batches"] == 0


def test_a_symlinked_shard_and_a_directory_named_like_one_are_not_mirrored(
    pg_server: Server, tmp_path: Path
) -> None:
    """A shard is a regular file in the repository: a symlink (here to a file outside it,
    holding a valid record) is never read, nor is a directory named `*.jsonl`."""
    from lorebook.ids import new_ulid
    from lorebook.log.writer import encode

    dsn = pg_server.database()
    a = make_repo(tmp_path / "alpha")
    fill(a, project="alpha", failures=1)
    shard = next((a / "actionlog").rglob("*.jsonl"))
    outside = json.loads(shard.read_bytes().splitlines()[0])
    outside.update(id=new_ulid(), session="linked")
    target = tmp_path / "outside.jsonl"
    target.write_bytes(encode(outside))
    (shard.parent / "linked.jsonl").symlink_to(target)
    (shard.parent / "folder.jsonl").mkdir()
    done = mirror(a, dsn)
    assert done["actions"] == count(dsn, "supervisor_actions") > 0
    ids = {str(i) for (i,) in query(dsn, "SELECT id FROM supervisor_actions")}
    assert outside["id"] not in ids
    assert query(dsn, "SELECT count(*) FROM lorebook_shards WHERE path LIKE %s", "%linked%") == [
        (0,)
    ]


# -- the dashboard SQL of docs/org-scale.md ------------------------------------------------------
def dashboard_queries() -> dict[str, str]:
    """The named SQL blocks of docs/org-scale.md (`-- name: ...` first line)."""
    text = DOCS.read_text()
    found = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        first = block.splitlines()[0]
        if first.startswith("-- name:"):
            found[first.split(":", 1)[1].strip()] = block
    return found


def test_the_documented_dashboard_queries_agree_with_the_store(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn, a, b = two_repositories(pg_server, tmp_path)
    mirror(a, dsn)
    mirror(b, dsn)
    sql = dashboard_queries()
    assert {"failures_per_agent_this_week", "deploy_failure_cost", "lessons_applied",
            "activity_by_day", "recent_failures", "success_rate",
            "subagents_failed_this_week"} == set(sql)  # fmt: skip
    for root, repo in ((a, repository_of(a)), (b, repository_of(b))):
        actions = all_actions(root)
        week = (datetime.now(UTC) - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%S")
        want: dict[tuple[str, str], int] = {}
        for x in actions:
            if x["outcome"] == "failure" and x["ts"] >= week:
                key = (x["agent"], x["project"])
                want[key] = want.get(key, 0) + 1
        got = {(r[1], r[2]): r[3] for r in query(dsn, sql["failures_per_agent_this_week"])
               if r[0] == repo}  # fmt: skip
        assert got == want
        deploys = [x for x in actions if x["type"] == "deploy" and x["outcome"] == "failure"]
        rows = [r for r in query(dsn, sql["deploy_failure_cost"]) if r[0] == repo]
        assert rows[0][1] == len(deploys)
        assert float(rows[0][2]) == pytest.approx(sum(x["duration_s"] for x in deploys))
        applied = [r for r in query(dsn, sql["lessons_applied"]) if r[0] == repo]
        stats = lore_json(root, "stats")
        assert {r[1]: (r[3], r[4]) for r in applied} == {
            s["id"]: (s["applications"], s["successes"]) for s in stats if s["applications"]
        }
        report = lore_json(root, "report", "--days", "7", "--include-internal")
        by_day = [r for r in query(dsn, sql["activity_by_day"]) if r[0] == repo]
        assert sum(r[4] for r in by_day) == report["summary"]["total_actions"]
        rate = next(r for r in query(dsn, sql["success_rate"]) if r[0] == repo)
        assert rate[1] == report["summary"]["total_actions"]
        assert float(rate[2]) == pytest.approx(report["summary"]["success_rate"], abs=0.1)
        spawns = [r for r in query(dsn, sql["subagents_failed_this_week"]) if r[0] == repo]
        assert spawns == [(repo, "tests", 1)]
        failures = [r for r in query(dsn, sql["recent_failures"]) if r[0] == repo]
        assert {r[1] for r in failures} == {x["id"] for x in actions if x["outcome"] == "failure"}


# -- crashes and concurrency ----------------------------------------------------------------------
def big_store(tmp_path: Path, actions: int) -> Path:
    root = make_repo(tmp_path / "big")
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    store = tmp_path / "generated"
    generate_store.generate(store, actions, 20, 7, end, 1)
    for entry in (store / "actionlog").iterdir():
        entry.rename(root / "actionlog" / entry.name)
    return root


def test_kill_9_half_way_then_rerun_stores_every_row_once(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn = pg_server.database()
    root = big_store(tmp_path, 6000)
    repo = repository_of(root)
    command = [*LORE, "mirror", "postgres", dsn, "--batch", "500"]
    child = subprocess.Popen(command, cwd=root, env=clean_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        try:
            rows = query(dsn, "SELECT count(*) FROM lorebook_shards")[0][0]
        except psycopg.Error:
            rows = 0
        if rows:
            break
        time.sleep(0.05)
    assert child.poll() is None, "the mirror ended before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    stored = count(dsn, "supervisor_actions", repo)
    total = len(all_actions(root))
    assert 0 < stored < total
    # every stored row is covered by a watermark, none past it
    covered = int(query(dsn, "SELECT coalesce(sum(lines), 0) FROM lorebook_shards")[0][0])
    assert covered >= stored
    done = mirror(root, dsn, "--batch", "500")
    assert done["actions"] == total - stored
    assert count(dsn, "supervisor_actions", repo) == total
    assert mirror(root, dsn)["actions"] == 0


def test_two_clones_at_once_store_every_row_once(pg_server: Server, tmp_path: Path) -> None:
    dsn = pg_server.database()
    origin = big_store(tmp_path, 3000)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "log")
    clones = []
    for name in ("one", "two"):
        subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / name)], check=True)
        clones.append(tmp_path / name)
    assert repository_of(clones[0]) == repository_of(clones[1])
    runs = [subprocess.Popen([*LORE, "mirror", "postgres", dsn, "--json", "--batch", "400"],
                             cwd=c, env=clean_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for c in clones]  # fmt: skip
    outs = [r.communicate(timeout=300) for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outs
    sent = [json.loads(out)["actions"] for out, _ in outs]
    total = len(all_actions(clones[0]))
    assert sum(sent) == total  # one clone stored them, the other found the watermark moved
    assert count(dsn, "supervisor_actions") == total


# -- failures: one line, exit 1, never the password ---------------------------------------------
def fails(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = lore("mirror", "postgres", *args, cwd=root, env=env, timeout=120)
    assert done.code == 1, (done.out, done.err)
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert "Traceback" not in done.err
    return lines[0]


def test_bad_dsn_unreachable_server_and_auth_failure_are_one_line_without_the_password(
    pg_server: Server, tmp_path: Path
) -> None:
    a = make_repo(tmp_path / "alpha")
    dead = generate_store_free_port()
    line = fails(a, f"postgresql://lore:Sup3rSecretPw@127.0.0.1:{dead}/lore")
    assert "Sup3rSecretPw" not in line and "***" in line
    line = fails(a, "host=127.0.0.1 port=notaport password=Sup3rSecretPw")
    assert "Sup3rSecretPw" not in line
    bad_user = f"host=127.0.0.1 port={pg_server.port} user=nobody_here password=Sup3rSecretPw"
    line = fails(a, "--json", env=clean_env(LORE_PG_DSN=bad_user))
    assert "Sup3rSecretPw" not in line and "nobody_here" in line
    line = fails(a)
    assert "LORE_PG_DSN" in line


def generate_store_free_port() -> int:
    from pg_server import _postgres

    return int(_postgres.free_port())


def test_a_newer_schema_is_refused_and_nothing_is_written(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn = pg_server.database()
    a = make_repo(tmp_path / "alpha")
    fill(a, project="alpha", failures=1)
    mirror(a, dsn, "--dry-run")
    assert query(dsn, "SELECT to_regclass('lorebook_schema')")[0][0] is None  # dry run: nothing
    mirror(a, dsn)
    query(dsn, "INSERT INTO lorebook_schema(version) VALUES (999) RETURNING version")
    with Lorebook.open(a, env={}) as book:
        book.log("plan")
    before = count(dsn, "supervisor_actions")
    line = fails(a, dsn)
    assert "999" in line and "upgrade lorebook" in line
    assert count(dsn, "supervisor_actions") == before


def test_dry_run_counts_what_would_be_sent_and_writes_nothing(
    pg_server: Server, tmp_path: Path
) -> None:
    dsn = pg_server.database()
    a = make_repo(tmp_path / "alpha")
    fill(a, project="alpha", failures=2)
    plan = mirror(a, dsn, "--dry-run")
    assert plan["dry_run"] and plan["actions"] == len(all_actions(a))
    assert query(dsn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")[0][0] == 0
    mirror(a, dsn)
    assert mirror(a, dsn, "--dry-run")["actions"] == 0
    text = lore("mirror", "postgres", "--dry-run", cwd=a,
                env=clean_env(LORE_PG_DSN=dsn + " password=Sup3rSecretPw"))  # fmt: skip
    assert text.code == 0, text.err
    assert "would send 0 action(s)" in text.out and "Sup3rSecretPw" not in text.out


def test_mask_dsn_hides_every_form_of_password() -> None:
    from lorebook.mirror.dsn import mask_dsn, scrub

    for dsn in (
        "postgresql://u:pw-Secret1@h:5432/db",
        "host=h password=pw-Secret1 user=u",
        "host=h password='pw-Secret1' user=u",
        "postgres://h/db?password=pw-Secret1",
    ):
        assert "pw-Secret1" not in mask_dsn(dsn), dsn
        assert "pw-Secret1" not in scrub(f"failed for {dsn}", dsn)
    # the redaction module catches a URL's password too (errors are redacted when printed)
    from lorebook.redact.sanitize import Sanitizer

    assert "pw-Secret1" not in Sanitizer().redact_text("postgresql://u:pw-Secret1@h/db")[0]


def test_a_missing_driver_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "alpha")
    code = ("import sys; sys.modules['psycopg'] = None; from lorebook.cli import main;"
            " sys.exit(main(['mirror', 'postgres', 'host=127.0.0.1']))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], cwd=a, env=clean_env(),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith("the PostgreSQL driver is not installed: pip install 'lorebook[postgres]'")
