"""The scripted sessions of `lore demo`, written through the public API with backdated times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from .book import Lorebook, Session

Commit = Callable[[str, datetime], str]
Write = Callable[[str, str], None]


class Clock:
    """Advances a backdated 'now' between the steps of a session."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, minutes: float) -> datetime:
        self.now += timedelta(minutes=minutes)
        return self.now


class Build:
    """A subagent implements one change: in-progress spawn, the file, its close, the commit."""

    def __init__(
        self,
        epic: str,
        agent_id: str,
        model: str,
        task: str,
        path: str,
        text: str,
        message: str,
        minutes: int,
    ) -> None:
        self.epic, self.agent_id, self.model, self.task = epic, agent_id, model, task
        self.path, self.text, self.message, self.minutes = path, text, message, minutes

    def run(self, s: Session, clock: Clock, commit: Commit, write: Write) -> None:
        spawn = s.log(
            "spawn",
            outcome="in_progress",
            epic=self.epic,
            now=clock.tick(2),
            context={
                "subagent_type": "implementation",
                "model": self.model,
                "agent_id": self.agent_id,
                "task_description": self.task,
            },
        )
        write(self.path, self.text)
        s.log(
            "spawn",
            parent=spawn["id"],
            epic=self.epic,
            duration_s=self.minutes * 60,
            now=clock.tick(self.minutes),
            context={"agent_id": self.agent_id, "subagent_type": "implementation"},
        )
        sha = commit(f"{self.message} ({self.epic})", clock.tick(2))
        s.log(
            "commit",
            epic=self.epic,
            now=clock.now,
            context={
                "files": [self.path],
                "message": self.message,
                "branch": "main",
                "commit_hash": sha,
            },
        )


def _rate_limit_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> None:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-011",
        now=clock.tick(3),
        context={
            "epic_id": "epic-011",
            "approach": "Token bucket per API key in Redis",
            "decisions": ["120 requests/minute", "429 with Retry-After"],
        },
    )
    s.log("search", now=clock.tick(1), context={"query": "rate limiting redis", "results": 2})
    Build(
        "epic-011",
        "impl-7f3a",
        "haiku",
        "Implement token-bucket rate limiting",
        "src/api/ratelimit.py",
        "LIMIT_PER_MINUTE = 120\nBURST = 20\n",
        "feat(api): token-bucket rate limiting",
        22,
    ).run(s, clock, commit, write)
    s.log(
        "validate",
        epic="epic-011",
        now=clock.tick(6),
        context={
            "epic_id": "epic-011",
            "validation_type": "acceptance_criteria",
            "passed": True,
            "failures": [],
        },
    )
    s.log(
        "deploy",
        outcome="failure",
        epic="epic-011",
        now=clock.tick(4),
        error="container exited: address already in use (port 5000)",
        context={
            "service": "consilio-api",
            "port": 5000,
            "type": "docker",
            "health_check_url": "http://localhost:5000/health",
        },
    )
    s.log(
        "tool_call",
        now=clock.tick(1),
        context={
            "tool_name": "mcp_meta_allocate_port",
            "params": {"service": "consilio-api"},
            "result": {"success": True, "port": 5012},
            "command": "export REGISTRY_TOKEN=ghp_4f9Qz8LmN2pR7sT1uV3wX5yZ6aB8cD0eF2gH ./deploy.sh",
        },
    )
    s.log(
        "deploy",
        epic="epic-011",
        duration_s=48,
        now=clock.tick(3),
        context={
            "service": "consilio-api",
            "port": 5012,
            "type": "docker",
            "deployment_status": "success",
        },
    )
    s.log("epic_complete", epic="epic-011", now=clock.tick(1), context={"title": "Rate limiting"})
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _auth_planning_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> None:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-012",
        now=clock.tick(5),
        context={
            "epic_id": "epic-012",
            "approach": "JWT with httpOnly cookies and refresh-token rotation",
            "learnings_consulted": ["rls-policy-blocks-insert"],
            "decisions": ["RS256", "15 minute access tokens", "rotate refresh tokens"],
        },
    )
    Build(
        "epic-012",
        "impl-2b9c",
        "sonnet",
        "Implement JWT login and access tokens",
        "src/auth/jwt.py",
        "ALGORITHM = 'RS256'\nACCESS_TTL_MINUTES = 15\nISSUER = 'consilio'\n",
        "feat(auth): JWT login with RS256 access tokens",
        40,
    ).run(s, clock, commit, write)
    s.log(
        "validate",
        epic="epic-012",
        now=clock.tick(5),
        context={
            "epic_id": "epic-012",
            "validation_type": "unit_tests",
            "passed": True,
            "failures": [],
        },
    )
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _ms_session(book: Lorebook, clock: Clock) -> None:
    s = book.start_session(agent="MS", project="consilio", now=clock.now)
    s.log(
        "tool_call",
        now=clock.tick(2),
        context={"tool_name": "mcp_meta_health_check", "result": {"services": 4, "unhealthy": 0}},
    )
    s.log("search", now=clock.tick(1), context={"query": "deploy port conflict", "results": 1})
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _disconnected_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> Session:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-012",
        now=clock.tick(4),
        context={
            "epic_id": "epic-012",
            "approach": "Rotate refresh tokens on every use",
            "decisions": ["token family id", "revoke family on reuse"],
        },
    )
    Build(
        "epic-012",
        "impl-xyz789",
        "sonnet",
        "Implement refresh-token rotation",
        "src/auth/tokens.py",
        "def rotate(refresh_token):\n    return issue_new(refresh_token)\n",
        "feat(auth): refresh-token rotation",
        30,
    ).run(s, clock, commit, write)
    s.log(
        "validate",
        outcome="failure",
        epic="epic-012",
        now=clock.tick(6),
        error="2 of 7 acceptance criteria failed",
        context={
            "epic_id": "epic-012",
            "validation_type": "acceptance_criteria",
            "passed": False,
            "failures": [
                "refresh token reuse is not detected",
                "logout does not revoke the refresh token",
            ],
        },
    )
    s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-012",
        now=clock.tick(2),
        context={
            "subagent_type": "fix",
            "model": "sonnet",
            "agent_id": "fix-42",
            "task_description": "Detect refresh-token reuse and revoke on logout",
        },
    )
    write(
        "src/auth/tokens.py",
        "def rotate(refresh_token):\n    check_family(refresh_token)  # WIP\n"
        "    return issue_new(refresh_token)\n",
    )
    return s  # no end event: the connection dropped here


def play(book: Lorebook, now: datetime, commit: Commit, write: Write) -> None:
    """Write the four sessions, committing code and shards as a team would."""
    day3 = (now - timedelta(days=3)).replace(hour=9, minute=30, second=0, microsecond=0)
    _rate_limit_session(book, Clock(day3), commit, write)
    commit("lore: action log for epic-011", day3 + timedelta(hours=2))
    day2 = (now - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
    _auth_planning_session(book, Clock(day2), commit, write)
    _ms_session(book, Clock(day2 + timedelta(hours=3)))
    commit("lore: action log", day2 + timedelta(hours=4))
    _disconnected_session(book, Clock(now - timedelta(hours=2)), commit, write)
