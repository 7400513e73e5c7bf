"""Passage vectors in Chroma: embedded (`PersistentClient` under `.lore/cache/index/`) or a shared
server (`HttpClient`, `index.chroma_url` / `LORE_CHROMA_URL`).

Vectors are always passed explicitly: Chroma's default embedding function downloads a model.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ..errors import LoreError
from ..store import refuse_symlinks

if TYPE_CHECKING:
    import numpy as np

# seconds a client's close may take: Chroma's Rust `stop` was seen spinning for good when its
# files were deleted under it, and a close is only cleanup, so it is left behind, not waited on
CLOSE_WAIT = 10.0

COLLECTION_PREFIX = "lore"
_BATCH = 2000


class ChromaUnavailable(LoreError):
    """The Chroma server cannot be reached, or the embedded store cannot be opened."""


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


class ChromaStore:
    """One collection of passages; each passage's metadata names its file (`key`)."""

    def __init__(self, *, path: Path | None = None, url: str | None = None, name: str) -> None:
        self.path = path
        self.url = url
        self.name = name
        self._client: Any = None
        self._collection: Any = None

    @property
    def backend(self) -> str:
        return self.url or "embedded"

    # -- connection ------------------------------------------------------------------------
    def client(self) -> Any:
        if self._client is not None:
            return self._client
        import chromadb

        if self.url:
            parsed = urlparse(self.url if "://" in self.url else f"http://{self.url}")
            try:
                self._client = chromadb.HttpClient(
                    host=parsed.hostname or "localhost",
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=_settings(),
                )
                self._client.heartbeat()
            except Exception as exc:
                self._client = None
                raise ChromaUnavailable(
                    "cannot reach the Chroma server at {}: {} "
                    "(check index.chroma_url / LORE_CHROMA_URL, or unset it for the local index)",
                    self.url,
                    reason(exc),
                ) from None
        else:
            assert self.path is not None
            refuse_symlinks(self.path)
            self.path.mkdir(parents=True, exist_ok=True)
            # Chroma caches one system per path and process, with its HNSW segments: a store
            # opened earlier in this process would not see what other processes wrote since.
            _clear_system_cache()
            try:
                with _panics_as_errors(self.path):
                    self._client = chromadb.PersistentClient(
                        path=str(self.path), settings=_settings()
                    )
            except Exception as exc:
                raise ChromaUnavailable(
                    "{}: cannot open the index: {}", self.path, reason(exc)
                ) from None
        return self._client

    def collection(self, *, create: bool) -> Any:
        with _panics_as_errors(self.path or self.url):
            if self._collection is None:
                client = self.client()
                if create:
                    self._collection = client.get_or_create_collection(
                        self.name,
                        embedding_function=None,
                        configuration={"hnsw": {"space": "cosine"}},
                    )
                else:
                    try:
                        self._collection = client.get_collection(self.name, embedding_function=None)
                    except Exception:
                        return None
            return self._collection

    def close(self) -> None:
        """Release the client and Chroma's per-process system cache (chroma#6499)."""
        client, self._client, self._collection = self._client, None, None
        if client is not None:
            _close_within(client, CLOSE_WAIT)
        if not self.url:  # even without a client of ours: another one may cache this path
            _clear_system_cache()

    # -- data ------------------------------------------------------------------------------
    def drop(self) -> None:
        """Delete the collection (server mode) — the embedded store is deleted as a folder."""
        try:
            self.client().delete_collection(self.name)
        except ChromaUnavailable:
            raise
        except Exception:
            pass  # it did not exist
        self._collection = None

    def path_exists(self) -> bool:
        """The embedded store's folder is there (checked without opening Chroma)."""
        return self.path is not None and self.path.is_dir()

    def count(self) -> int:
        with _panics_as_errors(self.path or self.url):
            collection = self.collection(create=False)
            return 0 if collection is None else int(collection.count())

    def delete_keys(self, keys: Sequence[str]) -> None:
        with _panics_as_errors(self.path or self.url):
            collection = self.collection(create=True)
            for i in range(0, len(keys), 500):
                part = list(keys[i : i + 500])
                where = {"key": part[0]} if len(part) == 1 else {"key": {"$in": part}}
                collection.delete(where=where)

    def add(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store passage vectors; `keys[i]` is the file of `vectors[i]` (passages in order)."""
        with _panics_as_errors(self.path or self.url):
            collection = self.collection(create=True)
            seen: dict[str, int] = {}
            ids, metas = [], []
            for key in keys:
                n = seen.get(key, 0)
                seen[key] = n + 1
                ids.append(f"{key}#{n}")
                metas.append({"key": key})
            for i in range(0, len(ids), _BATCH):
                collection.upsert(
                    ids=ids[i : i + _BATCH],
                    embeddings=vectors[i : i + _BATCH],
                    metadatas=metas[i : i + _BATCH],
                )

    def query(self, vector: np.ndarray, n: int) -> tuple[list[tuple[str, float]], int]:
        """((file key, cosine similarity) of the `n` nearest passages, best first; how many
        passages are stored). A missing embedded store is not created: (`[]`, 0)."""
        found, total = self.query_many(vector.reshape(1, -1), n)
        return (found[0] if found else []), total

    def query_many(self, vectors: np.ndarray, n: int) -> tuple[list[list[tuple[str, float]]], int]:
        """`query` for each row of `vectors`, in one call; ([], 0) when nothing is stored."""
        with _panics_as_errors(self.path or self.url):
            if not self.url and self.path is not None and not self.path.is_dir():
                return [], 0
            collection = self.collection(create=False)
            if collection is None:
                return [], 0
            total = int(collection.count())
            if total == 0 or not len(vectors):
                return [], total
            found = collection.query(
                query_embeddings=vectors,
                n_results=min(n, total),
                include=["metadatas", "distances"],
            )
            out = []
            for metas, dists in zip(
                found.get("metadatas") or [], found.get("distances") or [], strict=False
            ):
                # a passage another process deleted since this process loaded its vectors has
                # no metadata any more (chroma#3792): skip it, the next search reloads
                out.append(
                    [
                        (str(m["key"]), 1.0 - float(d))
                        for m, d in zip(metas or [], dists or [], strict=False)
                        if m and "key" in m and d is not None
                    ]
                )
            return out, total


@contextlib.contextmanager
def _panics_as_errors(where: object) -> Iterator[None]:
    """Chroma's Rust core raises pyo3's `PanicException` — a BaseException, so no `except
    Exception` sees it — when its files vanish under it ("no such table: migrations" after the
    cache is deleted). That is a failure of the index (searches fall back to keywords), not a
    reason to stop the process: it becomes a `ChromaUnavailable`."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except Exception:
        raise
    except BaseException as exc:
        raise ChromaUnavailable("{}: the index failed: {}", where, reason(exc)) from None


def _clear_system_cache() -> None:
    with contextlib.suppress(Exception):
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()


def reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] or type(exc).__name__).rstrip(".")


def _close_within(client: Any, seconds: float) -> None:
    """`client.close()` in a daemon thread, waited for at most `seconds` (see CLOSE_WAIT);
    its errors are the client's own cleanup failing, after which nothing of it is used."""
    import threading

    def close() -> None:
        with contextlib.suppress(Exception):
            client.close()

    closing = threading.Thread(target=close, name="lore-chroma-close", daemon=True)
    closing.start()
    closing.join(seconds)
