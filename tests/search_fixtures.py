"""Fixtures for search tests: the embedding model loaded once per test session, stores with
learnings, and a real `chroma run` server for the server-mode variants.

Registered as a pytest plugin in conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import stop_server
from lorebook import Lorebook

LEARNINGS: dict[str, dict[str, Any]] = {
    "rls-anon-insert": {
        "title": "Row level security policy prevents anonymous INSERT operations",
        "category": "database",
        "severity": "high",
        "tags": ["supabase", "postgres"],
        "created": "2026-10-01",
        "body": "## Problem\nInserts from the browser failed with permission denied for table.\n\n"
        "## Solution\nUse the service role key for admin mutations.\n\n"
        "## Key Takeaway\nCheck the table's policies before mutating with the anon key.",
        "prevention": ["Check policies before using the anon key for mutations"],
    },
    "deploy-port-conflict": {
        "title": "Deploy fails when the old container still holds port 8080",
        "category": "deployment",
        "severity": "high",
        "tags": ["docker"],
        "created": "2026-09-15",
        "body": "## Problem\nThe new service could not bind: address already in use.\n\n"
        "## Key Takeaway\nStop and remove the previous container first.",
        "prevention": ["Run docker compose down before up"],
    },
    "jwt-clock-skew": {
        "title": "Authentication tokens rejected because of clock skew",
        "category": "security",
        "severity": "medium",
        "tags": ["jwt"],
        "created": "2026-08-01",
        "body": "## Key Takeaway\nAllow a small leeway when validating the issued-at time.",
    },
    "k8s-liveness": {
        "title": "Kubernetes liveness probe kills slow-starting pods",
        "category": "deployment",
        "severity": "medium",
        "tags": ["k8s"],
        "created": "2026-07-01",
        "body": "## Key Takeaway\nUse a startup probe for services that warm up slowly.",
    },
    "pandas-memory": {
        "title": "Reading a large CSV exhausts memory",
        "category": "performance",
        "severity": "low",
        "tags": ["pandas"],
        "created": "2026-06-01",
        "body": "## Key Takeaway\nRead the file in chunks and choose narrow dtypes.",
    },
    "old-cache-advice": {
        "title": "Clear the build cache when the bundler output looks stale",
        "category": "build",
        "severity": "low",
        "status": "superseded",
        "created": "2025-01-01",
        "body": "## Key Takeaway\nDelete the cache folder.",
    },
    "retired-flaky": {
        "title": "Retry flaky browser tests three times",
        "category": "testing",
        "severity": "low",
        "status": "retired",
        "created": "2025-02-01",
        "body": "## Key Takeaway\nRetries hide real failures; this advice was retired.",
    },
}


def learning_text(learning_id: str, fields: dict[str, Any]) -> str:
    front = {"id": learning_id, "kind": "lesson", "status": "published", **fields}
    body = front.pop("body", "")
    lines = ["---"] + [f"{k}: {json.dumps(v)}" for k, v in front.items()] + ["---", body, ""]
    return "\n".join(lines)


def write_learning(
    root: Path, learning_id: str, *, folder: str = "learnings", **fields: Any
) -> Path:
    path = root / folder / f"{learning_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(learning_text(learning_id, fields), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The per-user ONNX model cache of this test session (the first embedder exports into
    it, once); `clean_env` passes it on to the `lore` subprocesses."""
    folder = tmp_path_factory.mktemp("model-cache")
    old = os.environ.get("LORE_MODEL_CACHE")
    os.environ["LORE_MODEL_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("LORE_MODEL_CACHE", None)
    else:
        os.environ["LORE_MODEL_CACHE"] = old


@pytest.fixture(scope="session")
def embedder(model_cache: Path) -> Any:
    """The packaged MiniLM model as search runs it (ONNX), loaded once for the test session."""
    from lorebook.index.embed import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def reference_embedder() -> Any:
    """The same model through sentence-transformers (torch): the reference and the exporter."""
    from lorebook.index.embed import load_reference_embedder

    return load_reference_embedder()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` on a free loopback port, stopped after the session."""
    exe = shutil.which("chroma", path=os.path.dirname(sys.executable)) or shutil.which("chroma")
    if exe is None:
        from conftest import require_real

        require_real("the chroma command is not installed")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    log = open(data / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [exe, "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited: {(data / 'server.log').read_text()[-500:]}")
            time.sleep(0.2)
    try:
        yield url
    finally:
        stop_server(proc, log, 20)


class Backend:
    """Where the vectors live for one test: the embedded index or a shared Chroma server."""

    def __init__(self, name: str, url: str | None) -> None:
        self.name = name
        self.url = url
        self.env = {"LORE_CHROMA_URL": url} if url else {}

    def prepare(self, root: Path, collection: str) -> None:
        """Give the store its own collection on the shared server."""
        if self.url:
            (root / ".lore" / "config.yaml").write_text(
                f"index:\n  collection: {collection}\n", encoding="utf-8"
            )


@pytest.fixture(params=["embedded", "server"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Run a test against the embedded index and again against a real Chroma server."""
    if request.param == "embedded":
        return Backend("embedded", None)
    return Backend("server", request.getfixturevalue("chroma_server"))


@pytest.fixture
def search_store(store: Path, embedder: Any) -> Path:
    """A store with a handful of learnings (published, superseded, retired)."""
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    age_learnings(store)  # written long before any index: no test depends on the build's speed
    return store


def anchored_rls_learning(root: Path) -> Path:
    """`rls-anon-insert` anchored to a `db/policies.sql` it is about, both committed; returns
    the anchored file (a commit changing it makes the learning stale)."""
    from conftest import git  # (conftest registers this module: imported when used)

    policies = root / "db" / "policies.sql"
    policies.parent.mkdir()
    policies.write_text("create policy anon_insert on items;\n")
    write_learning(
        root, "rls-anon-insert", **{**LEARNINGS["rls-anon-insert"], "anchors": ["db/policies.sql"]}
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the lesson and the code it is about")
    return policies


def open_book(root: Path, env: dict[str, str] | None = None) -> Lorebook:
    return Lorebook.open(root, env=env or {})


def age_learnings(root: Path, seconds: float = 10) -> None:
    """Set every learning file's mtime `seconds` back: a file hashed within a second of its
    mtime is hashed again by the next search (the racy-stat rule), so a test that asserts a
    search refreshes nothing must not depend on how slowly the index was built."""
    then = time.time() - seconds
    for path in (root / "learnings").rglob("*.md"):
        os.utime(path, (then, then))
