"""A private, throw-away PostgreSQL server for the side-by-side benchmark.

`initdb` a temporary data directory, start it with `pg_ctl` on a free port of 127.0.0.1 (its
socket directory inside the temporary directory too), and remove everything on exit, including
Ctrl-C. PostgreSQL refuses to run as root: as root the server binaries run as the `postgres`
user (the Debian package creates it) or, failing that, `nobody`, owning the temporary directory.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from types import FrameType

INSTALL_HINT = "apt-get install -y postgresql"  # Debian/Ubuntu: server, initdb, pg_ctl, psql
DB = "bench"
USER = "bench"


def find_binary(name: str) -> str | None:
    """`name` on PATH, else in the newest /usr/lib/postgresql/<version>/bin (where Debian puts
    the server binaries, off PATH)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = glob.glob(f"/usr/lib/postgresql/*/bin/{name}")
    candidates.sort(
        key=lambda p: [int(x) if x.isdigit() else 0 for x in p.split("/")[4].split(".")]
    )
    return candidates[-1] if candidates else None


def missing() -> str | None:
    """Why the benchmark cannot run here (one line), or None."""
    absent = [n for n in ("initdb", "pg_ctl", "psql") if find_binary(n) is None]
    if absent:
        return (
            f"PostgreSQL not found ({', '.join(absent)} missing): install it with `{INSTALL_HINT}`"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: `pip install 'psycopg[binary]'` (in the dev extras)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as() -> str | None:
    """The user to run the server binaries as (None: the current one)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise SystemExit("running as root and no `postgres` or `nobody` user to run PostgreSQL as")


class PrivatePostgres:
    """One server for the length of a `with` block: `.dsn`, `.psql_args`, `.version`."""

    def __init__(self, parent: Path, settings: dict[str, str] | None = None) -> None:
        self.parent = parent
        self.settings = settings or {}
        self.tmp: Path | None = None
        self.port = 0
        self.user = _run_as()
        self.running = False

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> PrivatePostgres:
        self.parent.mkdir(parents=True, exist_ok=True)
        # run as another user (as root), the server must reach its folder: under the system's
        # temporary folder, not under a parent that may be private to root (pytest's tmp_path)
        self.tmp = Path(tempfile.mkdtemp(prefix="pg-", dir=None if self.user else self.parent))
        atexit.register(self.stop)
        previous = signal.getsignal(signal.SIGTERM)

        def on_term(signum: int, frame: FrameType | None) -> None:
            self.stop()
            if callable(previous):
                previous(signum, frame)
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, on_term)
        if self.user:
            record = pwd.getpwnam(self.user)
            os.chown(self.tmp, record.pw_uid, record.pw_gid)
        data = self.tmp / "data"
        self._server(
            find_binary("initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        self.port = free_port()
        options = [
            f"-c listen_addresses=127.0.0.1 -p {self.port}",
            f"-c unix_socket_directories={self.tmp}",
        ]
        options += [f"-c {k}={v}" for k, v in self.settings.items()]
        self._server(
            find_binary("pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(self.tmp / "server.log"),
            "-o",
            " ".join(options),
            "-w",
            "-t",
            "60",
            "start",
        )
        self.running = True
        self.psql("-c", f"CREATE DATABASE {DB}", database="postgres")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server and delete its directory; safe to call more than once."""
        if self.tmp is None:
            return
        if self.running:
            self.running = False
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self._server(
                    find_binary("pg_ctl"),
                    "-D",
                    str(self.tmp / "data"),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                    check=False,
                )
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None

    def _server(self, binary: str | None, *args: str, check: bool = True) -> None:
        """A server binary as the server's user, in a session of its own (so Ctrl-C on the
        terminal reaches this script, which stops the server, and not the server itself)."""
        assert binary is not None and self.tmp is not None
        done = subprocess.run(
            [binary, *args],
            user=self.user,
            cwd=self.tmp,
            capture_output=True,
            text=True,
            start_new_session=True,
            check=False,
        )
        if check and done.returncode != 0:
            log = self.tmp / "server.log"
            tail = log.read_text()[-1500:] if log.exists() else ""
            raise SystemExit(
                f"{Path(binary).name} failed ({done.returncode}): "
                f"{done.stderr.strip()[-1500:]}\n{tail}"
            )

    # -- clients ----------------------------------------------------------------------------
    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user={USER} dbname={DB}"

    def psql_args(self, database: str = DB) -> list[str]:
        """`psql` with no ~/.psqlrc, connecting over TCP to this server."""
        psql = find_binary("psql")
        assert psql is not None
        return [
            psql,
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            USER,
            "-d",
            database,
        ]

    def psql(
        self, *args: str, database: str = DB, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run psql (stopping at the first error); with `check`, a failure ends the script."""
        done = subprocess.run(
            [*self.psql_args(database), "-v", "ON_ERROR_STOP=1", *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise SystemExit(f"psql {' '.join(args)[:200]} failed: {done.stderr.strip()}")
        return done

    @property
    def version(self) -> str:
        return self.psql("-At", "-c", "SHOW server_version").stdout.strip()
