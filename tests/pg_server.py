"""One private PostgreSQL server for the test session (benchmarks/_postgres.py starts it:
initdb/pg_ctl on 127.0.0.1, as root run as `postgres`), and a fresh database per test."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
try:
    import _postgres
    import generate_store
finally:
    sys.path.remove(str(BENCH))

_numbers = itertools.count(1)


class Server:
    """The running server: `database()` makes an empty database and returns its DSN."""

    def __init__(self, pg: Any) -> None:
        self.pg = pg
        self.port = pg.port

    def database(self) -> str:
        name = f"t{next(_numbers)}"
        self.pg.psql("-c", f"CREATE DATABASE {name}", database="postgres")
        return f"host=127.0.0.1 port={self.port} user={_postgres.USER} dbname={name}"


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from conftest import require_real

    why = _postgres.missing()
    if why:
        require_real(why)
    with _postgres.PrivatePostgres(tmp_path_factory.mktemp("pg")) as pg:
        yield Server(pg)


__all__ = ["Server", "generate_store", "pg_server"]
