"""`LearningStore`: learning files under `learnings/` (published) and `learnings/drafts/`.

Every write is sanitized (secrets and PII redacted) and atomic; creating never overwrites.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from ..errors import LoreError, UsageError
from ..ids import resolve_prefix
from ..paths import OUTSIDE, Layout
from ..problems import OnProblem, Problem, ignore
from ..redact.sanitize import Sanitizer
from ..store import atomic_write, temp_path, write_failure, write_temp
from ..timeutil import utcnow
from .cache import ParseCache, RedactedTexts, rules_fingerprint
from .fileformat import LearningFormatError, PlainStr, read_learning, render_learning
from .ids import new_learning_id
from .listing import learning_paths
from .model import Learning, Solution, Source, validate_id


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


SKELETON = "## Problem\n\n## Root Cause\n\n## Solution\n\n## Key Takeaway\n"


def with_skeleton(body: str) -> str:
    """A body without `## ` sections goes under Problem, with the other sections empty."""
    text = body.strip("\n")
    if any(line.startswith("## ") for line in text.splitlines()):
        return text + "\n"
    if not text:
        return SKELETON
    return f"## Problem\n{text}\n\n## Root Cause\n\n## Solution\n\n## Key Takeaway\n"


# validated identifiers, never free text: redacting them would only break the file
_STRUCTURAL = ("id", "kind", "status", "severity", "supersedes", "checksum")


class LearningStore:
    """Published learnings and drafts as files; the files are the truth."""

    def __init__(self, layout: Layout, sanitizer: Sanitizer) -> None:
        self.layout = layout
        self.sanitizer = sanitizer
        # long texts are redacted once per content and rules (see knowledge.cache)
        self.texts = RedactedTexts(layout.cache / "redacted", sanitizer)

    # -- paths and ids ---------------------------------------------------------------------
    def new_id(self, title: str, created: date) -> str:
        """A collision-free id (= file stem) for a new learning."""
        return new_learning_id(title, created, self.sanitizer)

    def resolve_id(self, learning_id: str, *, missing_ok: bool = False) -> str:
        """The id of the learning or draft `learning_id` names: itself, or the one id it is
        a prefix of (as git takes a hash prefix); a UsageError listing the candidates when
        several are. None found: `learning_id` itself when `missing_ok`, else a LoreError."""
        lid = validate_id(learning_id)
        if self.exists(lid):
            return lid
        stems = (
            name[:-3]
            for folder in (self.layout.drafts, self.layout.learnings)
            for name in _names(folder)
            if name.endswith(".md")
        )
        found = resolve_prefix(lid, stems, "learning id")
        if found is not None:
            return found
        if missing_ok:
            return lid
        raise LoreError(
            "no learning or draft with id {!r} in {}/ (see `lore learnings` and `lore drafts`)",
            lid,
            self.layout.rel(self.layout.learnings),
        )

    def path_of(self, learning_id: str) -> Path:
        """The file of an existing learning (draft or published), by id or unique prefix;
        LoreError when there is none."""
        lid = self.resolve_id(learning_id)
        for folder in (self.layout.drafts, self.layout.learnings):
            path = folder / f"{lid}.md"
            if path.is_file():
                if self.layout.leaves_repository(path):
                    raise LoreError("{}: {}", self.layout.rel(path), OUTSIDE)
                return path
        raise LoreError(
            "no learning or draft with id {!r} in {}/ (see `lore learnings` and `lore drafts`)",
            lid,
            self.layout.rel(self.layout.learnings),
        )

    def target_path(self, learning: Learning) -> Path:
        """Where a learning with this status belongs."""
        folder = self.layout.drafts if learning.status == "draft" else self.layout.learnings
        return folder / f"{learning.id}.md"

    def exists(self, learning_id: str) -> bool:
        lid = validate_id(learning_id)
        return any(
            (folder / f"{lid}.md").exists()
            for folder in (self.layout.drafts, self.layout.learnings)
        )

    # -- reading ---------------------------------------------------------------------------
    def get(self, learning_id: str) -> Learning:
        """A draft or published learning by id (LoreError naming the id, or file:line)."""
        path = self.path_of(learning_id)
        return read_learning(path, self.layout.rel(path))

    def files(
        self, *, drafts: bool = True, published: bool = True, on_problem: OnProblem | None = None
    ) -> list[Path]:
        """Learning files by name, published first (scandir: sorting Paths costs 60 µs each).

        A file that is a symlink leaving the repository is reported and left out."""
        folders = [self.layout.learnings] if published else []
        folders += [self.layout.drafts] if drafts else []
        return learning_paths(self.layout, folders, on_problem or ignore)

    def all(
        self, *, drafts: bool = True, published: bool = True, on_problem: OnProblem | None = None
    ) -> Iterator[Learning]:
        """Every readable learning; a bad file is reported (file:line) and skipped, never raised.

        Unchanged files come from the parse cache (see `knowledge.cache`). What is yielded
        (and cached) is redacted: a secret pasted into a file reaches no cache and no output.
        Code that rewrites a learning reads the file itself with `get()`."""
        report = on_problem or ignore
        cache = ParseCache(
            self.layout.cache / "learnings-v1.json", rules_fingerprint(self.sanitizer)
        )
        for path in self.files(drafts=drafts, published=published, on_problem=report):
            rel = self.layout.rel(path)
            try:
                st = path.stat()
            except OSError:
                continue  # removed while we listed
            hit = cache.lookup(rel, st)
            if hit is not None:
                try:
                    yield Learning.model_validate({**hit, "path": path})
                    continue
                except ValueError:
                    pass  # an entry from another model version: parse the file
            try:
                learning = self.sanitized(read_learning(path, rel))
            except LearningFormatError as exc:
                report(Problem(exc.where, exc.line, exc.reason))
                continue
            cache.store(rel, st, learning.model_dump(mode="json", exclude={"path", "stale"}))
            yield learning
        if drafts and published:  # only a full listing knows which entries are gone
            cache.save()
        elif cache.dirty:
            cache.used.update(cache.entries)
            cache.save()

    def find_by_checksum(self, checksum: str) -> Learning | None:
        for learning in self.all():
            if learning.checksum == checksum:
                return learning
        return None

    # -- writing ---------------------------------------------------------------------------
    def create(
        self,
        *,
        title: str,
        kind: str = "lesson",
        category: str | None = None,
        severity: str | None = None,
        tags: Iterable[str] = (),
        body: str = "",
        anchors: Iterable[str] = (),
        source: Source | Mapping[str, Any] | None = None,
        solutions: Iterable[Solution | Mapping[str, Any]] = (),
        prevention: Iterable[str] = (),
        supersedes: Iterable[str] = (),
        checksum: str | None = None,
        extra: Mapping[str, Any] | None = None,
        publish: bool = False,
        learning_id: str | None = None,
        created: date | None = None,
    ) -> Learning:
        """Write a new draft (or, with `publish`, a published learning) and return it."""
        created = created or utcnow().date()
        title = self.sanitizer.redact_text(title)[0]  # before the id: no secret in a file name
        lid = validate_id(learning_id) if learning_id else self.new_id(title, created)
        if self.exists(lid):
            raise LoreError("a learning with id {!r} already exists; nothing was written", lid)
        try:
            learning = Learning(
                id=lid,
                title=title,
                kind=kind,  # type: ignore[arg-type]
                category=category or None,
                severity=severity or None,  # type: ignore[arg-type]
                tags=[t for t in tags if t],
                status="published" if publish else "draft",
                created=created,
                source=Source.model_validate(source or {})
                if not isinstance(source, Source)
                else source,
                anchors=list(anchors),
                supersedes=[validate_id(s) for s in supersedes],
                solutions=[
                    s if isinstance(s, Solution) else Solution.model_validate(s) for s in solutions
                ],
                prevention=list(prevention),
                checksum=checksum,
                extra=dict(extra or {}),
                body=body,
            )
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise _invalid(exc) from None
        learning = self.sanitized(learning)
        path = self.target_path(learning)
        _write_new(path, render_learning(learning).encode("utf-8"))
        learning.path = path
        return learning

    def write(self, learning: Learning) -> Path:
        """Rewrite a learning in place (sanitized, atomic; unknown keys kept)."""
        clean = self.sanitized(learning)
        path = learning.path or self.target_path(clean)
        atomic_write(path, render_learning(clean).encode("utf-8"))
        learning.path = path
        return path

    def sanitized(self, learning: Learning) -> Learning:
        """A copy with secrets and PII redacted in every string (no truncation)."""
        data = learning.model_dump(exclude={"path", "created", *_STRUCTURAL})
        clean = redact_strings(self.sanitizer, data, self.texts.redact)
        kept = {key: getattr(learning, key) for key in _STRUCTURAL}
        return Learning(**clean, **kept, created=learning.created, path=learning.path)


def redact_strings(
    sanitizer: Sanitizer, value: Any, redact: Callable[[str], str] | None = None
) -> Any:
    """A copy of `value` with secrets redacted in every string inside it (no truncation);
    `redact` redacts one string (a cache of the sanitizer's result), when given."""
    if isinstance(value, str):
        text = redact(value) if redact is not None else sanitizer.redact_text(value)[0]
        return PlainStr(text) if isinstance(value, PlainStr) and text == value else text
    if isinstance(value, dict):
        return {k: redact_strings(sanitizer, v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_strings(sanitizer, v, redact) for v in value]
    return value


def _invalid(exc: ValueError) -> UsageError:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "learning"
        return UsageError("{}: {}", field, first["msg"].removeprefix("Value error, "))
    return UsageError("{}", exc)


def _write_new(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet: a temp file, then a hard link (never overwrites,
    never leaves a partial file under the real name)."""
    tmp = temp_path(path)
    try:
        write_temp(path, data, exclusive=True)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise LoreError("{}: already exists; nothing was written", path) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                raise
            os.replace(tmp, path)  # a file system without hard links
    except OSError as exc:
        raise write_failure(exc, path) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
