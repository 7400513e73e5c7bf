"""A PostgreSQL password written in `.lore/config.yaml` (`mirror.postgres_dsn`, a file that is
committed with the repository) is warned about on every `lore mirror postgres`: one line on
stderr naming the file and the safe places (LORE_PG_DSN, ~/.pgpass, PGPASSWORD), never the
password; the same line is in `--json`'s `warnings`. A DSN without a password, or one given in
LORE_PG_DSN, says nothing. Against the real PostgreSQL of tests/pg_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import clean_env, lore
from pg_server import Server, pg_server
from test_mirror_postgres import make_repo

__all__ = ["pg_server"]  # the session fixture, used by name

psycopg = pytest.importorskip("psycopg")
PASSWORD = "s3cr3t-Pw-only-in-the-config"


def configure(root: Path, dsn: str) -> None:
    config = root / ".lore" / "config.yaml"
    config.write_text(config.read_text() + f"\nmirror:\n  postgres_dsn: {json.dumps(dsn)}\n")


@pytest.mark.parametrize(
    "form", ["{base} password={pw}", "postgresql://{user}:{pw}@127.0.0.1:{port}/{db}"]
)
def test_a_password_in_the_committed_config_is_warned_about_without_printing_it(
    pg_server: Server, tmp_path: Path, form: str
) -> None:
    base = pg_server.database()
    fields = dict(part.split("=", 1) for part in base.split())
    dsn = form.format(base=base, pw=PASSWORD, user=fields["user"], port=fields["port"],
                      db=fields["dbname"])  # fmt: skip
    root = make_repo(tmp_path / "repo")
    configure(root, dsn)
    for args in ((), ("--json",), ("--dry-run",)):
        done = lore("mirror", "postgres", *args, cwd=root)
        assert done.code == 0, done.err  # the server trusts 127.0.0.1: the password is unused
        lines = [line for line in done.err.splitlines() if "warning" in line]
        assert len(lines) == 1, done.err
        assert ".lore/config.yaml" in lines[0]
        for safe in ("LORE_PG_DSN", "~/.pgpass", "PGPASSWORD"):
            assert safe in lines[0]
        assert PASSWORD not in done.err + done.out
        if args == ("--json",):
            assert json.loads(done.out)["warnings"] == [lines[0].removeprefix("lore: warning: ")]


def test_no_password_in_the_config_or_a_dsn_from_the_environment_says_nothing(
    pg_server: Server, tmp_path: Path
) -> None:
    base = pg_server.database()
    root = make_repo(tmp_path / "repo")
    configure(root, base)
    done = lore("mirror", "postgres", "--json", cwd=root)
    assert done.code == 0, done.err
    assert "warning" not in done.err
    assert json.loads(done.out)["warnings"] == []
    (root / ".lore" / "config.yaml").write_text("")
    done = lore(
        "mirror", "postgres", cwd=root, env=clean_env(LORE_PG_DSN=f"{base} password={PASSWORD}")
    )
    assert done.code == 0, done.err
    assert "warning" not in done.err
    assert PASSWORD not in done.err + done.out
