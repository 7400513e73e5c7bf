"""The in-process event bus: subscribers driven through the real log writer and `lore log`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore, stored_actions
from lorebook import Lorebook
from lorebook.errors import UsageError
from lorebook.events import EventBus
from lorebook.knowledge.gate import KnowledgeTriggers, wants_knowledge
from lorebook.knowledge.ops import KnowledgeOps


def test_bus_calls_handlers_in_order_and_survives_a_failing_one() -> None:
    warnings: list[str] = []
    bus = EventBus(warn=warnings.append)
    seen: list[str] = []

    def boom(record: dict[str, Any]) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    bus.on("action", lambda r: seen.append("first"))
    bus.on("action", boom)
    bus.on("action", lambda r: seen.append("third"))
    bus.publish_record({"kind": "action", "type": "commit", "id": "X"})
    assert seen == ["first", "third"]
    assert len(warnings) == 1
    assert "boom" in warnings[0] and "disk on fire second line" in warnings[0]
    assert "\n" not in warnings[0]


def test_bus_off_and_unknown_event() -> None:
    bus = EventBus()
    seen: list[dict[str, Any]] = []
    bus.on("action", seen.append)
    bus.off("action", seen.append)
    bus.off("action", seen.append)  # not subscribed any more: no error
    bus.publish_record({"kind": "action"})
    assert seen == []
    with pytest.raises(UsageError, match="unknown event 'commit'"):
        bus.on("commit", seen.append)


@pytest.mark.parametrize(
    ("record", "wanted"),
    [
        ({"kind": "action", "type": "epic_complete", "outcome": "success"}, True),
        ({"kind": "action", "type": "issue_resolved", "outcome": "success"}, True),
        ({"kind": "action", "type": "validate", "outcome": "failure"}, True),
        ({"kind": "action", "type": "validate", "outcome": "success"}, False),
        ({"kind": "action", "type": "deploy", "outcome": "failure", "context": {}}, False),
        (
            {
                "kind": "action",
                "type": "deploy",
                "outcome": "failure",
                "context": {"rca": {"title": "t"}},
            },
            True,
        ),
        (
            {
                "kind": "action",
                "type": "deploy",
                "outcome": "success",
                "context": {"rca": {"title": "t"}},
            },
            False,
        ),
        (
            {
                "kind": "action",
                "type": "deploy",
                "outcome": "failure",
                "context": {"rca": "not a mapping"},
            },
            False,
        ),
        ({"kind": "action", "type": "commit", "outcome": "success"}, False),
        ({"kind": "action", "type": "learning_draft", "outcome": "success"}, False),
        ({"kind": "session", "event": "start"}, False),
    ],
)
def test_wants_knowledge_decides_from_type_and_outcome(
    record: dict[str, Any], wanted: bool
) -> None:
    assert wants_knowledge(record) is wanted


def test_a_failing_listener_never_fails_or_loses_the_append(
    book: Lorebook, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(record: dict[str, Any]) -> None:
        raise ValueError("listener bug")

    book.on("action", boom)
    record = book.log("commit", session="s", context={"files": ["a.py"]})
    assert [a["id"] for a in stored_actions(book.root)] == [record["id"]]
    err = capsys.readouterr().err
    assert "lore: warning: subscriber" in err and "listener bug" in err
    assert "the record is stored" in err


def test_the_gate_never_recurses(book: Lorebook, monkeypatch: pytest.MonkeyPatch) -> None:
    """A subscriber that logs a triggering action itself is not woken again."""
    import lorebook.knowledge.triggers as triggers

    calls: list[str] = []

    def dispatch(opened: KnowledgeOps, record: dict[str, Any]) -> list[object]:
        calls.append(record["type"])
        opened.action_log.log("epic_complete", session="s", epic="e-nested")  # would trigger again
        return []

    monkeypatch.setattr(triggers, "dispatch", dispatch)
    book.log("epic_complete", session="s", epic="e-1")
    assert calls == ["epic_complete"]
    assert [a["epic"] for a in stored_actions(book.root)] == ["e-1", "e-nested"]
    gates = [h for h in book.events.handlers("action") if isinstance(h, KnowledgeTriggers)]
    assert len(gates) == 1  # installed once per bus, even with `Lorebook.around`
    Lorebook.around(book.appender)
    assert len([h for h in book.events.handlers("action") if isinstance(h, KnowledgeTriggers)]) == 1


def test_auto_off_in_config_installs_no_gate(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("drafts:\n  auto: false\n")
    book = Lorebook.open(store, env={})
    book.install_subscribers()
    assert not any(isinstance(h, KnowledgeTriggers) for h in book.events.handlers("action"))
    book.log("epic_complete", session="s", epic="e-1")
    assert [p.name for p in (store / "learnings" / "drafts").glob("*.md")] == []


def test_opening_a_store_installs_no_subscriber(store: Path) -> None:
    """Opening is free of side effects; `install_subscribers()` installs each subscriber once."""
    from lorebook.expertise.subscriber import SessionEndLearner

    (store / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    book = Lorebook.open(store, env={})
    assert book.events.handlers("action") == []
    assert Lorebook.init(store, env={}).events.handlers("action") == []
    book.log("epic_complete", session="s", epic="e-1")  # nothing listens: no draft
    assert list((store / "learnings" / "drafts").glob("*.md")) == []
    book.install_subscribers()
    book.install_subscribers()
    Lorebook.around(book.appender).install_subscribers()  # same bus: still once each
    kinds = [type(h) for h in book.events.handlers("action")]
    assert kinds == [KnowledgeTriggers, SessionEndLearner]
    book.log("epic_complete", session="s", epic="e-1")
    assert len(list((store / "learnings" / "drafts").glob("auto-e-1-*.md"))) == 1


WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _log_modules(root: Path, *args: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, "log", *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=60,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def test_ordinary_lore_log_never_loads_the_knowledge_modules(store: Path) -> None:
    code, modules = _log_modules(store, "commit", "--epic", "e-1")
    assert code == 0
    assert "lorebook.events" in modules  # the bus is there ...
    assert _knowledge_loaded(modules) == set()  # ... idle: only the stdlib gate is loaded
    assert "lorebook.book" not in modules
    code, modules = _log_modules(store, "validate", "--outcome", "success", "--epic", "e-1")
    assert code == 0 and _knowledge_loaded(modules) == set()


def _knowledge_loaded(modules: set[str]) -> set[str]:
    """The knowledge modules loaded beyond the gate (`knowledge/gate.py`, standard library)."""
    gate = {"lorebook.knowledge", "lorebook.knowledge.gate"}
    return {m for m in modules if m.startswith("lorebook.knowledge")} - gate


def test_lore_log_fast_path_wakes_the_subscribers(store: Path) -> None:
    result = lore(
        "log", "epic_complete", "--epic", "epic-9", "--session", "s-1", env=clean_env(store)
    )
    assert result.code == 0, result.err
    assert len(result.out.strip()) == 26 and result.err == ""
    drafts = sorted((store / "learnings" / "drafts").glob("auto-epic-9-*.md"))
    assert len(drafts) == 1
    actions = stored_actions(store)
    assert [a["type"] for a in actions] == ["epic_complete", "learning_draft"]
    assert actions[1]["session"] == "s-1"
    assert actions[1]["context"]["trigger"] == actions[0]["id"]
    assert actions[1]["context"]["path"] == f"learnings/drafts/{drafts[0].name}"


def test_fast_path_subscriber_failure_keeps_the_action(store: Path) -> None:
    drafts = store / "learnings" / "drafts"
    for child in drafts.iterdir():
        child.unlink()
    drafts.rmdir()
    drafts.write_text("not a directory\n")  # every draft write now fails
    result = lore("log", "epic_complete", "--epic", "epic-9", env=clean_env(store))
    assert result.code == 0
    assert len(result.out.strip()) == 26
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: warning: subscriber")
    actions = stored_actions(store)
    assert actions[0]["type"] == "epic_complete" and actions[0]["id"] == result.out.strip()
    assert (actions[1]["type"], actions[1]["outcome"]) == ("learning_draft", "failure")
    assert "on_epic_complete" in actions[1]["error"]


def test_the_guard_is_per_thread(book: Lorebook, monkeypatch: pytest.MonkeyPatch) -> None:
    """While one thread's subscriber runs, another thread's records still trigger."""
    import threading

    import lorebook.knowledge.triggers as triggers

    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def dispatch(opened: KnowledgeOps, record: dict[str, Any]) -> list[object]:
        calls.append(record["epic"])
        if record["epic"] == "slow":
            started.set()
            release.wait(10)
        return []

    monkeypatch.setattr(triggers, "dispatch", dispatch)
    worker = threading.Thread(
        target=book.log, args=("epic_complete",), kwargs={"session": "a", "epic": "slow"}
    )
    worker.start()
    assert started.wait(10)
    book.log("epic_complete", session="b", epic="fast")  # while "slow" is still dispatching
    release.set()
    worker.join(10)
    assert sorted(calls) == ["fast", "slow"]
