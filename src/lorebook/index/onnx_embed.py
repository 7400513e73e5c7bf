"""Embeddings without torch: an ONNX export of the sentence-transformers model, run by
onnxruntime with the model's own `tokenizer.json`, mean pooling and L2 normalisation.

Importing sentence-transformers costs seconds (torch); onnxruntime + tokenizers cost ~0.1 s.
torch is used once per user and model content, to export; the export is cached under
`$LORE_MODEL_CACHE` (default `$XDG_CACHE_HOME/lorebook/onnx`), in a folder named by the hash of
the model's files, with its sha256 and size recorded beside it. A damaged or mismatched export
is made again (with a notice), never used: a wrong vector would rank silently wrong.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LoreError
from ..progress import MODEL_EXPORT, MODEL_LOAD, step
from ..store import atomic_write

if TYPE_CHECKING:
    import numpy as np

    from ..progress import Progress

FORMAT = 1  # of meta.json and of the export itself (opset, inputs, outputs)
OPSET = 17
THREADS = 2  # intra-op threads: the machines we target have 2 cores to share
MODEL_FILE = "model.onnx"
META_FILE = "meta.json"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"

Notice = Callable[[str], None]
Reference = Callable[[str], Any]  # model name -> the loaded sentence-transformers embedder


class ModelUnavailable(LoreError):
    """No embedding model could be loaded; search falls back to keywords. Defined here, below
    `embed` (which re-exports it), so that the runtime never imports the module that loads it."""


class NotExportable(ModelUnavailable):
    """The model folder is not a plain Transformer + mean pooling model this runtime mirrors."""


def cache_root() -> Path:
    """Where exports live: a per-user cache, shared by every store of the user."""
    configured = os.environ.get("LORE_MODEL_CACHE")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "lorebook" / "onnx"


# -- the model folder ------------------------------------------------------------------------
def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise NotExportable("{}: unreadable ({})", path, exc) from None


def model_settings(folder: Path) -> dict[str, Any]:
    """max_seq_length and do_lower_case of a model the ONNX runtime reproduces exactly;
    NotExportable for anything else (other pooling, extra Dense layers...)."""
    modules = _read_json(folder / "modules.json") or []
    kinds = [str(m.get("type", "")) for m in modules if isinstance(m, dict)]
    if kinds not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]):
        raise NotExportable("{}: modules {} are not Transformer + Pooling", folder, kinds)
    pooling_dir = next(m.get("path", "") for m in modules if m.get("type") == _POOLING)
    pooling = _read_json(folder / pooling_dir / "config.json") or {}
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
    if modes != {"pooling_mode_mean_tokens"}:
        raise NotExportable("{}: pooling {} is not mean pooling", folder, sorted(modes))
    if not (folder / "tokenizer.json").is_file():
        raise NotExportable("{}: no tokenizer.json", folder)
    bert = _read_json(folder / "sentence_bert_config.json") or {}
    return {
        "max_seq_length": int(bert.get("max_seq_length") or 512),
        "do_lower_case": bool(bert.get("do_lower_case", False)),
    }


def _model_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(base) / n for n in sorted(names) if not n.startswith("."))
    return found


def source_digest(folder: Path, root: Path) -> str:
    """sha256 over the model folder's files (names and bytes). Hashing ~90 MB costs ~0.2 s, so
    the result is remembered under `root`, keyed by the files' paths, sizes and mtimes."""
    files = _model_files(folder)
    stamp = hashlib.sha256(str(folder.resolve()).encode())
    for path in files:
        st = path.stat()
        stamp.update(f"\0{path.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    memo = root / "sources" / stamp.hexdigest()[:32]
    try:
        known = memo.read_text(encoding="ascii").strip()
        if len(known) == 64:
            return known
    except OSError:
        pass
    digest = hashlib.sha256(f"lorebook-onnx-{FORMAT}".encode())
    for path in files:
        digest.update(f"\0{path.relative_to(folder).as_posix()}\0".encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    value = digest.hexdigest()
    try:  # only a shortcut: a read-only cache hashes again next time
        memo.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(memo, value.encode())
    except Exception:  # the value is returned either way
        pass
    return value


# -- the cached export -----------------------------------------------------------------------
def _verified(folder: Path, source: str) -> tuple[bytes | None, str | None]:
    """(model bytes, None) when the cached export is whole; (None, why not) otherwise."""
    meta_path, model_path = folder / META_FILE, folder / MODEL_FILE
    if not meta_path.exists() and not model_path.exists():
        return None, None  # never exported: not damage
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        data = model_path.read_bytes()
    except (OSError, ValueError) as exc:
        return None, f"unreadable ({type(exc).__name__})"
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("source") != source:
        return None, "made for another model or format"
    if len(data) != meta.get("size"):
        return None, f"{len(data)} bytes instead of {meta.get('size')}"
    if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        return None, "its sha256 does not match"
    return data, None


def export(
    reference: Reference,
    name: str,
    model_folder: Path,
    target: Path,
    source: str,
    settings: dict[str, Any],
) -> bytes:
    """Export the Transformer module with torch (via sentence-transformers, the reference) into
    `target`, atomically: the model first, then the meta that vouches for it."""
    try:  # before loading torch for seconds: can the export be written at all?
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelUnavailable(
            "cannot write the ONNX model cache {}: {} (set LORE_MODEL_CACHE to a writable folder)",
            target,
            exc.strerror or exc,
        ) from None
    try:
        import torch
    except ImportError as exc:
        raise ModelUnavailable(
            "no ONNX export of the embedding model is cached in {} and torch is "
            "not installed to make one ({})",
            target.parent,
            exc,
        ) from None
    transformer = reference(name).model[0].auto_model.eval()
    names = [n for n in _INPUTS if n in _forward_args(transformer)]

    class ByKeyword(torch.nn.Module):
        """transformers 5 takes a positional third argument for `use_cache`: pass keywords."""

        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

    sample = {n: torch.ones((2, 8), dtype=torch.long) for n in names}
    sample["attention_mask"][1, 5:] = 0  # a padded row: the traced graph must use the mask
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    try:
        partial = target / f"{MODEL_FILE}.{os.getpid()}.tmp"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about constants, for the user's eyes
            torch.onnx.export(
                ByKeyword(),
                tuple(sample[n] for n in names),
                str(partial),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        data = partial.read_bytes()
        os.replace(partial, target / MODEL_FILE)
        meta = {
            "format": FORMAT,
            "source": source,
            "model": str(model_folder),
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "opset": OPSET,
            "torch": torch.__version__,
            **settings,
        }
        atomic_write(target / META_FILE, json.dumps(meta, indent=1).encode())
    except Exception as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ModelUnavailable(
            "cannot write the ONNX model cache {}: {} (set LORE_MODEL_CACHE to a writable folder)",
            target,
            reason,
        ) from None
    finally:
        if "partial" in locals():
            partial.unlink(missing_ok=True)
    return data


def _forward_args(module: Any) -> set[str]:
    import inspect

    return set(inspect.signature(module.forward).parameters)


# -- the runtime -----------------------------------------------------------------------------
class OnnxEmbedder:
    """Same interface and vectors as `embed.Embedder`: `encode` returns unit-length float32."""

    def __init__(self, name: str, model: bytes, tokenizer_file: Path, settings: dict[str, Any]):
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self.name = name
        self.lower = bool(settings.get("do_lower_case"))
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_truncation(int(settings["max_seq_length"]))
        pad = self.tokenizer.padding or {}
        self.tokenizer.enable_padding(
            pad_id=int(pad.get("pad_id", 0)), pad_token=str(pad.get("pad_token", "[PAD]"))
        )

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # similar lengths together: less padding per batch (sentence-transformers does the same)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            batch = [texts[i].lower() if self.lower else texts[i] for i in chosen]
            out[chosen] = self._embed(batch)
        return out

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encoded = self.tokenizer.encode_batch(texts)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        hidden = self.session.run(None, {n: feeds[n] for n in self.inputs})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)


def load_onnx_embedder(
    name: str,
    model_folder: Path,
    reference: Reference,
    notice: Notice | None = None,
    progress: Progress | None = None,
) -> OnnxEmbedder:
    """The ONNX runtime for the model in `model_folder`, exporting it first when no whole export
    is cached (a damaged one is replaced, with a notice); `reference` loads the
    sentence-transformers model the export is made from (`embed.load_reference_embedder`)."""
    settings = model_settings(model_folder)
    root = cache_root()
    try:
        source = source_digest(model_folder, root)
    except OSError as exc:
        raise ModelUnavailable("{}: cannot read the model ({})", model_folder, exc) from None
    folder = root / source[:32]
    data, damage = _verified(folder, source)
    if data is None:
        exported = step(progress, MODEL_EXPORT)
        data = export(reference, name, model_folder, folder, source, settings)
        exported()
        if damage and notice is not None:
            notice(f"the ONNX model cache {folder} was damaged ({damage}); exported it again")
    loaded = step(progress, MODEL_LOAD)
    try:
        embedder = OnnxEmbedder(name, data, model_folder / "tokenizer.json", settings)
    except ImportError as exc:
        raise ModelUnavailable("onnxruntime or tokenizers is not installed ({})", exc) from None
    except Exception as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ModelUnavailable(
            "the ONNX model in {} cannot be loaded: {}", folder, reason
        ) from None
    loaded()
    return embedder
