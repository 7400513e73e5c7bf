"""`Expertise`: the library API of expertise files (list, get, classify, learn, validate,
improve, history, prompt). The CLI and, later, the MCP server are thin skins over it.

Every update follows one path: refuse early if git's index holds someone else's staged work,
change the round-trip tree, prune to the line limit, redact, write atomically, commit exactly that
file with a structured message; if the commit fails the previous file is put back.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LoreError, UsageError
from ..git import binary as git
from ..log.reader import iter_records
from ..log.writer import check_session_id, redacted, session_start_day
from ..paths import OUTSIDE
from ..problems import OnProblem, ignore
from ..redact.identifiers import check_identifier
from ..store import atomic_write, refuse_symlinks
from ..timeutil import utcnow
from . import files as F
from .changes import SUBJECT_PREFIX, Change, commit_message
from .classify import Classification, classify, too_weak
from .schema import LIST_KEYS, NAME_RE, DomainTable, check_name

if TYPE_CHECKING:
    from ..config import Config
    from ..contracts.expertise import ExpertiseHistoryEntry, ExpertisePrompt
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer


class NothingToLearn(LoreError):
    """The session has no actions in the log."""


def plain(value: Any) -> Any:
    """A round-trip tree as plain JSON-ready data (timestamps and dates become strings)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)


def stamp(now: datetime) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(now.strftime("%Y-%m-%dT%H:%M:%SZ"))


class Expertise:
    """The expertise files of one store (under `layout`, redacted by `sanitizer`, with the
    `expertise` settings of `config`)."""

    def __init__(self, layout: Layout, sanitizer: Sanitizer, config: Config) -> None:
        self.root = layout.root
        self.layout = layout
        self.sanitizer = sanitizer
        self.settings = config.expertise
        self.table = DomainTable.from_config(self.settings.domains)

    # -- naming ------------------------------------------------------------------------------
    def path(self, domain: str) -> Path:
        """The domain's file; a domain name that looks like a secret never becomes one."""
        name = check_identifier("domain", check_name(domain), self.sanitizer)
        return self.layout.expertise / f"{name}.yaml"

    def rel(self, domain: str) -> str:
        return self.layout.rel(self.path(domain))

    def domains(self) -> list[str]:
        """Configured domains plus any other file in the expertise folder."""
        names = list(self.table.names)
        if self.layout.expertise.is_dir():
            for file in sorted(self.layout.expertise.glob("*.yaml")):
                if NAME_RE.match(file.stem) and file.stem not in names:
                    names.append(file.stem)
        return names

    def check_domain(self, domain: str) -> str:
        """A known domain (configured, or with a file), else one actionable error line."""
        check_name(domain)
        if domain in self.table.names or self.path(domain).is_file():
            return domain
        raise UsageError(
            "unknown domain {!r}: use one of {}, or add it "
            "under expertise.domains in .lore/config.yaml",
            domain,
            ", ".join(self.domains()),
        )

    def _skip(self) -> list[str]:
        return [
            self.layout.rel(p)
            for p in (self.layout.actionlog, self.layout.store, self.layout.expertise)
        ]

    # -- reading -----------------------------------------------------------------------------
    def load(self, domain: str) -> F.ExpertiseDoc:
        return self._read(self.path(self.check_domain(domain)), self.rel(domain), domain)

    def _read(self, path: Path, rel: str, domain: str) -> F.ExpertiseDoc:
        """The domain's file, never through a symlink that leaves the repository."""
        if self.layout.leaves_repository(path):
            raise LoreError("{}: {}", rel, OUTSIDE)
        return F.read(path, rel, domain)

    def list_domains(self) -> list[dict[str, Any]]:
        """One row per domain: whether it has a file, its lines, entry counts, last_validated."""
        rows = []
        for domain in self.domains():
            path = self.path(domain)
            row: dict[str, Any] = {
                "domain": domain,
                "path": self.rel(domain),
                "exists": path.is_file(),
            }
            if row["exists"] and self.layout.leaves_repository(path):
                row["exists"] = False
                row["problem"] = OUTSIDE
            elif row["exists"]:
                doc = self.load(domain)
                row["lines"] = F.line_count(doc)
                row["entries"] = {k: len(doc.data.get(k) or []) for k in LIST_KEYS}
                row["last_validated"] = plain(doc.data.get("last_validated"))
            rows.append(row)
        return rows

    def get(self, domain: str) -> dict[str, Any]:
        """The file's content as plain data; an error when the domain has no file yet."""
        doc = self.load(domain)
        if doc.original is None:
            raise LoreError(
                "{} does not exist yet: `lore expertise improve {}` or "
                "`lore expertise learn --session ID` creates it",
                doc.rel,
                domain,
            )
        content: dict[str, Any] = self._redacted(plain(doc.data))
        return content

    def classify(self, text: str, files: Iterable[str] = ()) -> Classification:
        return classify(text, files, self.table)

    def prompt(self, domain: str | None = None, task: str | None = None) -> ExpertisePrompt:
        """The prompt block for `domain` (or the domain `task` classifies into), redacted."""
        from .prompt import format_prompt

        if (domain is None) == (task is None):
            raise UsageError("give a domain or a task (--task TEXT), not both")
        scores = None
        if task is not None:
            found = self.classify(task)
            domain, scores = found.domain, found.scores
        assert domain is not None
        doc = self.load(domain)
        content = plain(doc.data) if doc.original is not None else {"domain": domain}
        # redact, then let format_prompt shorten; the block is redacted again as a whole
        text, _ = self.sanitizer.redact_text(format_prompt(self._redacted(content)))
        return {
            "domain": domain,
            "exists": doc.original is not None,
            "scores": scores,
            "prompt": text,
        }

    def history(self, domain: str) -> list[ExpertiseHistoryEntry]:
        """The git log of the domain's file (following renames), with the listed changes."""
        path = self.path(self.check_domain(domain))
        if not git.is_work_tree(self.root):
            raise LoreError(
                "{} is not a git repository: expertise history is the git log of the file",
                self.root,
            )
        return [
            {
                "commit": entry["commit"],
                "short": entry["short"],
                "author": entry["author"],
                "date": entry["date"],
                "subject": entry["subject"],
                "lorebook": entry["subject"].startswith(SUBJECT_PREFIX),
                "changes": [
                    line[2:] for line in entry["body"].splitlines() if line.startswith("- ")
                ],
            }
            for entry in git.file_log(self.root, path)
        ]

    # -- updating ----------------------------------------------------------------------------
    def learn(
        self,
        session: str,
        *,
        domain: str | None = None,
        commit: bool | None = None,
        on_problem: OnProblem = ignore,
    ) -> dict[str, Any]:
        """Learn from one session: failures, tool patterns, modified files, a technique."""
        from ..log.sessions import resolve_session
        from ..timeutil import utcnow
        from .learn import apply, digest

        session = resolve_session(self.layout.actionlog, check_session_id(session), utcnow())
        if domain is not None:
            self.check_domain(domain)
        first = session_start_day(session)
        records = iter_records(
            self.layout.actionlog,
            base=self.root,
            sessions=[session],
            since=f"{first}T00:00:00.000Z" if first else None,
            on_problem=on_problem,
        )
        # redacted before digest shortens anything: a cut would hide half a secret from the rules
        facts = digest(session, redacted(self.sanitizer, records), self.root, self._skip())
        if facts.action_count == 0:
            only = " but lorebook's own bookkeeping" if facts.bookkeeping else ""
            raise NothingToLearn(
                "session {!r} has no actions in the log{} "
                "(see `lore sessions`); nothing was changed",
                session,
                only,
            )
        found = self.classify(facts.text, facts.files)
        weak = None if domain is not None else too_weak(found, self.settings.learn_min_score)
        if weak is not None:
            raise LoreError(
                "session {!r} not learned: {}; name the domain with --domain, or "
                "add keywords or globs for it under expertise.domains",
                session,
                weak,
            )
        chosen = domain or found.domain
        result = self._update(
            chosen, lambda doc: apply(doc, facts), f"Learned from session {session}.", commit
        )
        result.update(
            session=session,
            classification=found.to_dict(),
            completed=facts.completed,
            action_count=facts.action_count,
        )
        return result

    def validate(
        self, domain: str | None = None, *, commit: bool | None = None, now: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Validate one domain (or every domain with a file when `domain` is None)."""
        from .validate import validate_doc

        moment = now or utcnow()
        if domain is not None:
            names = [self.check_domain(domain)]
        else:
            names = [d for d in self.domains() if self.path(d).is_file()]
        results = []
        for name in names:
            if not self.path(name).is_file():
                results.append(
                    {
                        "domain": name,
                        "path": self.rel(name),
                        "status": "no_expertise",
                        "changes": [],
                        "changes_count": 0,
                        "committed": None,
                    }
                )
                continue

            def correct(doc: F.ExpertiseDoc) -> list[Change]:
                changes = validate_doc(doc, self.root, moment, self.settings.failure_max_age_days)
                if changes:
                    if "last_validated" in doc.data:
                        doc.data["last_validated"] = stamp(moment)
                    else:
                        doc.add_key("last_validated", stamp(moment))
                return changes

            result = self._update(name, correct, "Validated against the code.", commit)
            result.update(status="validated", validated_at=str(stamp(moment)))
            results.append(result)
        return results

    def improve(self, domain: str, *, commit: bool | None = None) -> dict[str, Any]:
        """Add the files matching the domain's globs (at most 20 per glob) to core_files."""
        from .validate import improve_doc, project_files

        self.check_domain(domain)
        listed = None
        if git.is_work_tree(self.root):
            paths = git.project_paths(self.root)
            if paths is not None:
                listed = [p for p in paths if (self.root / p).is_file()]
        files = project_files(self.root, listed)
        globs = self.table.globs.get(domain, ())
        result = self._update(
            domain,
            lambda doc: improve_doc(doc, globs, files, self._skip()),
            "Discovered files matching the domain's globs.",
            commit,
        )
        result["globs"] = list(globs)
        return result

    def _update(
        self,
        domain: str,
        mutate: Callable[[F.ExpertiseDoc], list[Change]],
        why: str,
        commit: bool | None,
    ) -> dict[str, Any]:

        with self._locked():
            return self._update_locked(domain, mutate, why, commit)

    @contextmanager
    def _locked(self, timeout: float = 60) -> Iterator[None]:
        """One update at a time per store: read, change, write and commit are one step."""
        lock = self.layout.cache / "expertise.lock"
        refuse_symlinks(lock)
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise LoreError("{}: {}", self.layout.rel(lock), exc.strerror or exc) from None
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise LoreError(
                            "another expertise update held {} for {:.0f}s; nothing was changed",
                            self.layout.rel(lock),
                            timeout,
                        ) from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _update_locked(
        self,
        domain: str,
        mutate: Callable[[F.ExpertiseDoc], list[Change]],
        why: str,
        commit: bool | None,
    ) -> dict[str, Any]:
        from .prune import enforce_limit

        path = self.path(domain)
        rel = self.rel(domain)
        do_commit = self.settings.commit if commit is None else commit
        in_git = do_commit and git.is_work_tree(self.root)
        if in_git:
            self._refuse_foreign_staged(path)
        doc = self._read(path, rel, domain)
        changes = mutate(doc)
        result: dict[str, Any] = {
            "domain": domain,
            "path": rel,
            "changes": [],
            "changes_count": 0,
            "committed": None,
            "warnings": [],
        }
        if not changes:
            result["lines"] = F.line_count(doc) if doc.original is not None else 0
            return result
        pruned = enforce_limit(doc, self.settings.max_lines)
        changes += pruned.changes
        if pruned.warning:
            result["warnings"].append(pruned.warning)
        F.write(doc, self.sanitizer)
        result.update(
            changes=[c.to_dict() for c in changes], changes_count=len(changes), lines=pruned.lines
        )
        if in_git:
            try:
                result["committed"] = git.commit_file(
                    self.root,
                    path,
                    self.sanitizer.redact_text(commit_message(domain, changes, why))[0],
                )
            except LoreError as exc:
                self._restore(doc)
                raise LoreError("{}; {} was left as it was", exc, rel) from None
        elif do_commit:
            result["warnings"].append(
                f"{self.root} is not a git repository: {rel} was updated but not committed"
            )
        result["changes"] = self._redacted(plain(result["changes"]))
        return result

    def _redacted(self, value: Any) -> Any:
        """Output is redacted like everything written: a person may have pasted a secret."""
        clean, _ = self.sanitizer.sanitize(value)
        return clean

    def _refuse_foreign_staged(self, path: Path) -> None:
        mine = git.repo_path(self.root, path)
        others = [p for p in git.staged_paths(self.root) if p != mine]
        if others:
            more = f" and {len(others) - 1} more" if len(others) > 1 else ""
            raise LoreError(
                "the git index holds staged changes ({}{}); commit or unstage "
                "them first (or pass --no-commit) so they are not mixed into the expertise "
                "commit; nothing was changed",
                others[0],
                more,
            )

    def _restore(self, doc: F.ExpertiseDoc) -> None:
        if doc.original is None:
            doc.path.unlink(missing_ok=True)
            git.untrack_path(self.root, doc.path)
        else:
            atomic_write(doc.path, doc.original)
            git.reset_path(self.root, doc.path)
