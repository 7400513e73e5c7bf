"""`lore check`: every shard line against the schema; duplicate ids, torn lines, secrets.

An exact repeat of a line is not damage (git's union merge repeats lines when clones merge one
shard in different orders): it is counted, not reported, and `--fix` drops it. Two different
records with one id are a finding.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ids import MAX_ULID_MS, ulid_problem
from ..paths import OUTSIDE, Layout
from ..problems import Problem
from ..redact.identifiers import redact_message, redact_path, secret_kind
from ..redact.sanitize import Sanitizer
from ..store import SIDE, drop_repeated_lines
from ..timeutil import SKEW, horizon, parse_ts, utcnow
from .reader import day_dirs, read_shard, relative, shard_files
from .writer import encode

if TYPE_CHECKING:
    from ..contracts.records import CheckReportData

NAME_IS_SECRET = "file name looks like a secret"


@dataclass
class CheckReport:
    """Findings (file:line: reason) plus what was scanned."""

    shards: int = 0
    records: int = 0
    findings: list[Problem] = field(default_factory=list)
    learnings: int = 0  # learning and draft files
    expertise: int = 0  # .expertise/*.yaml files
    repeated: int = 0  # exact repeats of a line (not findings; `--fix` drops them)
    fixed: int = 0  # repeated lines `--fix` dropped

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> CheckReportData:
        """`lore check --json`."""
        return {
            "ok": self.ok,
            "shards": self.shards,
            "records": self.records,
            "learnings": self.learnings,
            "expertise": self.expertise,
            "repeated": self.repeated,
            "fixed": self.fixed,
            "findings": [f.to_dict() for f in self.findings],
        }


def check_log(
    actionlog: Path,
    base: Path,
    sanitizer: Sanitizer,
    *,
    fix: bool = False,
    now: datetime | None = None,
) -> CheckReport:
    """Scan all live shards; with `fix`, first drop each shard's exact repeated lines (the
    only repair that loses nothing); nothing else is modified. Records dated more than
    timeutil.SKEW after `now` (default: this machine's clock) come from a wrong clock and are
    reported."""
    report = CheckReport()
    first_seen: dict[str, tuple[str, int]] = {}  # id -> (where, hash of its canonical line)
    latest = horizon(now or utcnow())
    latest_ms = int(parse_ts(latest).timestamp() * 1000)
    for day, day_dir in day_dirs(actionlog):
        for path in shard_files(day_dir):
            rel, kind = redact_path(relative(path, base), sanitizer)  # never print a secret
            if kind is not None:
                report.findings.append(Problem(rel, 0, NAME_IS_SECRET))
            report.shards += 1
            if fix and path.is_file() and not path.is_symlink():
                report.fixed += drop_repeated_lines(str(path))
            for number, record in read_shard(path, rel, report.findings.append, dedupe=False):
                report.records += 1
                where = f"{rel}:{number}"
                rid = record["id"]
                digest = hash(encode(record))
                if rid in first_seen:
                    if digest == first_seen[rid][1]:
                        report.repeated += 1  # the same record again: not damage
                        continue
                    report.findings.append(
                        Problem(rel, number, f"duplicate id {rid} (first at {first_seen[rid][0]})")
                    )
                else:
                    first_seen[rid] = (where, digest)
                for reason in _clock_problems(record, latest, latest_ms):
                    report.findings.append(Problem(rel, number, reason))
                if record["ts"][:10] != day:
                    report.findings.append(
                        Problem(rel, number, f"ts {record['ts']} is not in the shard's day {day}")
                    )
                session_kind = secret_kind(record["session"], sanitizer)  # (not free text)
                if session_kind is not None:
                    report.findings.append(
                        Problem(rel, number, f"possible secret ({session_kind}) at session")
                    )
                if path.is_file() and record["session"] != path.stem.removesuffix(SIDE):
                    report.findings.append(
                        Problem(
                            rel,
                            number,
                            f"session {record['session']!r} does not match "
                            f"the shard name {path.stem!r}",
                        )
                    )
                scrubbed = {
                    k: v for k, v in record.items() if k not in ("v", "id", "ts", "kind", "session")
                }
                for finding in sanitizer.findings(scrubbed):
                    report.findings.append(
                        Problem(rel, number, f"possible secret ({finding.kind}) at {finding.path}")
                    )
    return report


def _clock_problems(record: dict[str, Any], latest: str, latest_ms: int) -> list[str]:
    """A timestamp or id from a wrong clock: later than `latest` (a reader would take the
    record for the newest), or an id whose time part no clock since 1970 encodes."""
    out = []
    if record["ts"] > latest:
        out.append(
            f"ts {record['ts']} is ahead of this machine's clock by more than {SKEW // 60} "
            "minutes (the writer's clock was wrong)"
        )
        latest_ms = MAX_ULID_MS  # (its id's time too, most likely: one finding is enough)
    why = ulid_problem(record["id"], latest_ms)
    if why is not None:
        out.append(f"invalid id {record['id']}: {why}")
    return out


def redact_findings(findings: list[Problem], sanitizer: Sanitizer) -> list[Problem]:
    """Findings quote file names and values read from files (a session, a domain, an id):
    redacted like every other output before they are returned or printed."""
    return [
        Problem(redact_path(f.path, sanitizer)[0], f.line, redact_message(f.reason, sanitizer))
        for f in findings
    ]


def check_symlinks(layout: Layout, report: Callable[[Problem], None]) -> None:
    """Report every symlink under the action log, the reports, the training data and `.lore/`
    that leaves the repository (learnings and expertise files are reported by their checks):
    a committed link would redirect a teammate's reads and writes anywhere."""
    pending = [str(p) for p in (layout.actionlog, layout.reports, layout.training_data)]
    pending.append(str(layout.store))
    found: list[str] = []
    while pending:
        path = pending.pop()
        if os.path.islink(path):
            if layout.leaves_repository(path):
                found.append(layout.rel(Path(path)))
            continue
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_symlink() or entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
    for rel in sorted(found):
        report(Problem(rel, 0, OUTSIDE))
