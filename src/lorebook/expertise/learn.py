"""What one session teaches: failures, tool-use patterns, modified files, a successful technique.

`digest` reads a session's records (pure: records in, facts out); `apply` folds the facts into a
loaded expertise file and returns the changes. Applying the same session twice changes nothing.

Definitions (documented in docs/expertise.md):
* only the session's *work* counts: lorebook's own bookkeeping (`model.INTERNAL_TYPES`: drafts,
  promotions, applications, occurrences, searches and preflights) and the agent's calls of
  lorebook itself (`lore …` in a shell, the lorebook MCP tools) are skipped — their titles,
  queries and errors are not what the session was about;
* an action is *finished* when its outcome is not `in_progress` (`track()` logs both halves);
* a *failure* is a finished action with outcome `failure` and an error text (without one it
  teaches nothing); its solution is the next finished action of the same type (and tool) that
  succeeded in the session;
* a session *completed its task* when it logged a successful `epic_complete` or
  `issue_resolved`, or it ended with reason `normal` and its last finished action succeeded.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..model import INTERNAL_TYPES
from .changes import Change, one_line
from .files import ExpertiseDoc, block, seq_edit

MAX_NEW_PATTERNS = 5
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
READ_EDIT_TEST = "Read → Edit → test sequence works well"
GLOB_READ = "Glob to find files, then Read is effective"
TEST_COMMAND = re.compile(
    r"\b(pytest|tox|nox|jest|vitest|mocha|playwright test|go test|cargo test|npm (run )?test|"
    r"yarn test|pnpm test|make (test|check)|unittest)\b"
)
TASK_KEYS = ("task", "description", "title", "goal", "summary", "message")
# what the session is about (not what one step did), most telling first
GOAL_KEYS = ("task", "title", "goal", "task_description", "approach")
_NUMBERS = re.compile(r"0x[0-9a-f]+|[0-9a-f]{12,}|\d+")


@dataclass
class Failure:
    issue: str
    error: str
    ts: str
    solution: str | None = None


@dataclass
class Digest:
    """The facts of one session."""

    session: str
    action_count: int = 0  # work actions only
    bookkeeping: int = 0  # lorebook's own records, skipped
    task: str = ""
    text: str = ""  # everything that says what the session was about, for classification
    files: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    completed: bool = False
    technique: str | None = None


def _context(record: dict[str, Any]) -> dict[str, Any]:
    context = record.get("context")
    return context if isinstance(context, dict) else {}


def _field(context: dict[str, Any], *keys: str) -> str | None:
    nested = context.get("input")
    for source in (context, nested if isinstance(nested, dict) else {}):
        for key in keys:
            value = source.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def tool_name(record: dict[str, Any]) -> str | None:
    return _field(_context(record), "tool", "tool_name", "name")


def is_test_step(record: dict[str, Any]) -> bool:
    name = (tool_name(record) or "").lower()
    command = (_field(_context(record), "command", "cmd") or "").lower()
    return "test" in name or bool(TEST_COMMAND.search(command))


class Step(NamedTuple):
    """One finished action with what learning asks of it, computed once."""

    record: dict[str, Any]
    type: str
    tool: str | None  # tool_call only
    label: str
    ok: bool
    test: bool


def steps_of(records: Iterable[dict[str, Any]]) -> list[Step]:
    out = []
    for record in records:
        kind = str(record.get("type"))
        tool = tool_name(record) if kind == "tool_call" else None
        test = kind == "tool_call" and is_test_step(record)
        name = ("test" if test else tool or "tool_call") if kind == "tool_call" else kind
        out.append(Step(record, kind, tool, name, record.get("outcome") == "success", test))
    return out


def is_bookkeeping(record: dict[str, Any]) -> bool:
    """lorebook's own records, and the agent's calls of lorebook: not the session's work."""
    kind = record.get("type")
    if kind in INTERNAL_TYPES:
        return True
    if kind != "tool_call":
        return False
    command = (_field(_context(record), "command", "cmd") or "").split()
    return "lorebook" in (tool_name(record) or "").lower() or command[:1] == ["lore"]


def describe(record: dict[str, Any]) -> str | None:
    context = _context(record)
    return _field(context, *TASK_KEYS, "command", "file_path", "path", "service")


def normalize_error(text: str) -> str:
    """The same issue twice: case, numbers, ids and spacing do not make errors different."""
    return _NUMBERS.sub("#", " ".join(text.lower().split()))[:160]


def relative_file(path: str, root: Path, skip: Iterable[str]) -> str | None:
    """`path` relative to the root (posix), or None for paths outside it or inside the store."""
    if not path or "\0" in path:
        return None
    if os.path.isabs(path):
        try:
            rel = Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
        except ValueError:
            return None
    else:
        rel = posixpath.normpath(path.replace("\\", "/"))
    if rel in (".", "") or rel.startswith("../") or rel == "..":
        return None
    if any(rel == s or rel.startswith(s + "/") for s in skip):
        return None
    return rel


def digest(
    session: str, records: Iterable[dict[str, Any]], root: Path, skip: Iterable[str] = ()
) -> Digest:
    """Read one session's records (time order) into the facts learning needs."""
    out = Digest(session)
    skip = tuple(skip)
    finished: list[dict[str, Any]] = []
    texts: list[str] = []
    goals: dict[str, str] = {}  # the first value of each goal key
    end_reason: str | None = None
    for record in records:
        if record.get("kind") == "session":
            if record.get("event") == "end":
                end_reason = record.get("reason") or "normal"
            elif record.get("event") == "start":
                meta = record.get("meta")
                if isinstance(meta, dict):
                    found = {k: meta[k] for k in TASK_KEYS if isinstance(meta.get(k), str)}
                    texts += found.values()
                    goals = {**found, **goals}
            continue
        if is_bookkeeping(record):
            out.bookkeeping += 1
            continue
        out.action_count += 1
        context = _context(record)
        found = {k: context[k] for k in GOAL_KEYS if isinstance(context.get(k), str)}
        texts += found.values()
        goals = {**found, **goals}
        texts += [str(record[k]) for k in ("epic", "issue") if isinstance(record.get(k), str)]
        if record.get("outcome") != "in_progress":
            finished.append(record)
    first = [goals[k] for k in (*TASK_KEYS, *GOAL_KEYS) if goals.get(k)] or texts
    out.task = one_line(first[0], 80) if first else ""
    out.text = " ".join(dict.fromkeys(texts))
    steps = steps_of(finished)
    out.files = _modified_files(steps, root, skip)
    out.failures = _failures(steps)
    out.patterns = _patterns([s for s in steps if s.type == "tool_call"])
    out.completed = _completed(steps, end_reason)
    if out.completed:
        out.technique = _technique(out, steps)
    return out


def _modified_files(steps: list[Step], root: Path, skip: tuple[str, ...]) -> list[str]:
    raw: dict[str, None] = {}  # each distinct path is resolved and checked once
    for step in steps:
        if not step.ok:
            continue
        context = _context(step.record)
        if step.tool in WRITE_TOOLS:
            path = _field(context, "file_path", "path", "notebook_path")
            if path:
                raw.setdefault(path, None)
        elif step.type == "commit":
            files = context.get("files")
            for path in files if isinstance(files, list) else []:
                if isinstance(path, str):
                    raw.setdefault(path, None)
    seen: dict[str, None] = {}
    for path in raw:
        rel = relative_file(path, root, skip)
        if rel is not None and rel not in seen and (root / rel).exists():
            seen[rel] = None
    return list(seen)


def _failures(steps: list[Step]) -> list[Failure]:
    found: list[Failure] = []
    for i, step in enumerate(steps):
        record = step.record
        if record.get("outcome") != "failure":
            continue
        error = record.get("error") or _field(_context(record), "error")
        if not isinstance(error, str) or not error.strip():
            continue  # "unknown error" is no lesson
        what = step.label
        detail = describe(record)
        issue = one_line(f"{what} failed" + (f": {detail}" if detail else ""), 100)
        failure = Failure(
            issue,
            one_line(str(error).strip().splitlines()[0] or error, 200),
            str(record.get("ts", "")),
        )
        for j in range(i + 1, len(steps)):
            later = steps[j]
            if later.ok and later.type == step.type and later.tool == step.tool:
                failure.solution = _solution(what, steps[i + 1 : j], later.record)
                break
        found.append(failure)
    return found


def _solution(what: str, between: list[Step], success: dict[str, Any]) -> str:
    """How the session got past a failure: the steps in between, then the successful retry."""
    steps = list(dict.fromkeys(s.label for s in between))
    if len(steps) > 3:
        steps = [*steps[:2], "…", steps[-1]]
    how = _field(_context(success), *TASK_KEYS)
    text = f"after {' → '.join(steps)}, {what} succeeded" if steps else f"retrying {what} succeeded"
    return one_line(text + (f" ({how})" if how else ""), 200)


def tool_patterns(calls: list[dict[str, Any]]) -> list[str]:
    """The seed's patterns, in this order: Read → Edit → test (a successful test within three
    steps of a Read and an Edit), Glob → Read, then successful two-tool combos, most used first."""
    return _patterns(steps_of(calls))


def _patterns(calls: list[Step]) -> list[str]:
    names = [c.tool or "" for c in calls]
    ok = [c.ok for c in calls]
    found: list[str] = []
    for i in range(len(calls)):
        window = range(max(0, i - 2), i + 1)
        if (
            calls[i].test
            and ok[i]
            and any(names[j] == "Read" for j in window)
            and any(names[j] in ("Edit", "MultiEdit") for j in window)
        ):
            found.append(READ_EDIT_TEST)
            break
    if any(
        names[i] == "Glob" and names[i + 1] == "Read" and ok[i] and ok[i + 1]
        for i in range(len(calls) - 1)
    ):
        found.append(GLOB_READ)
    combos: Counter[str] = Counter()
    for i in range(len(calls) - 1):
        a, b = calls[i].label, calls[i + 1].label
        if ok[i] and ok[i + 1] and a != b and names[i] and names[i + 1]:
            combos[f"Successful combo: {a} → {b}"] += 1
    found += [combo for combo, _ in combos.most_common()]  # ties keep first-seen order
    return found


def _completed(steps: list[Step], end_reason: str | None) -> bool:
    if any(s.type in ("epic_complete", "issue_resolved") and s.ok for s in steps):
        return True
    return end_reason == "normal" and bool(steps) and steps[-1].ok


def _technique(facts: Digest, finished: list[Step]) -> str:
    steps: list[str] = []
    for step in finished:
        if not steps or steps[-1] != step.label:
            steps.append(step.label)
    if len(steps) > 8:
        steps = [*steps[:4], "…", *steps[-3:]]
    goal = facts.task or "completed task"
    text = f"{goal}: {' → '.join(steps)}"
    if facts.failures:
        text += f" (recovered from {len(facts.failures)} failed step"
        text += "s)" if len(facts.failures) > 1 else ")"
    return text


# -- applying -----------------------------------------------------------------------------------
def _plain(value: Any) -> str:
    return "" if value is None else str(value)


def apply(doc: ExpertiseDoc, facts: Digest) -> list[Change]:
    """Fold one session's facts into `doc`; return what changed (nothing on a second run)."""
    changes: list[Change] = []
    changes += _apply_failures(doc, facts)
    patterns = doc.get_list("effective_patterns")
    known = {_plain(p) for p in patterns}
    new = [p for p in dict.fromkeys(facts.patterns) if p not in known][:MAX_NEW_PATTERNS]
    if new:
        seq_edit(patterns, lambda seq: seq.extend(new))
        changes += [Change("pattern_discovered", p, p) for p in new]
    core = doc.get_list("core_files")
    known = {_plain(f) for f in core}
    files = [f for f in facts.files if f not in known]
    if files:
        seq_edit(core, lambda seq: seq.extend(files))
        changes += [Change("file_discovered", f, f) for f in files]
    if facts.technique:
        techniques = doc.get_list("successful_techniques")
        if facts.technique not in {_plain(t) for t in techniques}:
            technique = facts.technique
            seq_edit(techniques, lambda seq: seq.append(technique))
            changes.append(Change("technique_learned", technique, technique))
    return changes


def _apply_failures(doc: ExpertiseDoc, facts: Digest) -> list[Change]:
    if not facts.failures:
        return []
    lessons = doc.get_list("learned_from_failures")
    changes: list[Change] = []
    for failure in facts.failures:
        key = normalize_error(failure.error)
        match = next(
            (
                entry
                for entry in lessons
                if isinstance(entry, dict)
                and (
                    normalize_error(_plain(entry.get("error"))) == key
                    or _plain(entry.get("issue")).lower() == failure.issue.lower()
                )
            ),
            None,
        )
        if match is None:
            entry: dict[str, Any] = {"issue": failure.issue, "error": failure.error}
            if failure.solution:
                entry["solution"] = failure.solution
            entry["sessions"] = [facts.session]
            entry["timestamp"] = failure.ts
            seq_edit(lessons, lambda seq, e=entry: seq.append(block(e)))  # type: ignore[misc]
            changes.append(Change("failure_learning", f"{failure.issue}: {failure.error}", entry))
            continue
        sessions = match.get("sessions")
        if not isinstance(sessions, list):
            sessions = block([])
            match["sessions"] = sessions
        if facts.session in [_plain(s) for s in sessions]:
            continue  # this session was learned from already
        sessions.append(facts.session)
        if failure.ts > _plain(match.get("timestamp")):
            match["timestamp"] = failure.ts
        if failure.solution and not match.get("solution"):
            match["solution"] = failure.solution
        changes.append(
            Change(
                "failure_merged",
                f"{_plain(match.get('issue'))}: seen again in {facts.session}",
                {"issue": _plain(match.get("issue")), "session": facts.session},
            )
        )
    return changes
