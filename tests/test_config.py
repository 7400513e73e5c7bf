"""`.lore/config.yaml`: values apply, errors name the file and line, the JSON cache."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lorebook import Lorebook, LoreError
from lorebook.config import load_config


def write_config(root: Path, text: str) -> Path:
    path = root / ".lore" / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def shard_lines(root: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((root / "actionlog").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def test_defaults_without_config_file(store: Path) -> None:
    (store / ".lore" / "config.yaml").unlink()
    config = load_config(store)
    assert config.log.durability == "flush"
    assert config.sessions.idle_minutes == 30
    assert config.log.max_line_bytes == 65536
    book = Lorebook.open(store, env={})
    assert book.writer.fsync is False
    assert book.default_agent() == "agent"
    assert book.default_project() == store.name


def test_init_template_is_all_defaults(store: Path) -> None:
    text = (store / ".lore" / "config.yaml").read_text()
    assert all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())
    config = load_config(store)
    assert config.log.durability == "flush"
    assert config.sessions.idle_minutes == 30


def test_durability_fsync_applies(store: Path) -> None:
    write_config(store, "log:\n  durability: fsync\n")
    book = Lorebook.open(store, env={})
    assert book.config.log.durability == "fsync"
    assert book.writer.fsync is True
    record = book.log("commit")
    assert shard_lines(store)[-1] == record  # fsync'd appends still write the record


def test_idle_minutes_applies_to_session_status(store: Path) -> None:
    write_config(store, "sessions:\n  idle_minutes: 5\n")
    book = Lorebook.open(store, env={})
    now = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
    book.log("plan", session="quiet", now=now - timedelta(minutes=6))
    book.log("plan", session="recent", now=now - timedelta(minutes=4))
    status = {s.id: s.status for s in book.sessions(now=now)}
    assert status == {"quiet": "disconnected", "recent": "active"}
    # with the default 30 minutes both are active
    write_config(store, "sessions:\n  idle_minutes: 30\n")
    book = Lorebook.open(store, env={})
    assert {s.id: s.status for s in book.sessions(now=now)} == {
        "quiet": "active",
        "recent": "active",
    }


def test_agent_and_project_defaults(store: Path) -> None:
    write_config(store, "agent: PS\nproject: consilio\n")
    book = Lorebook.open(store, env={})
    record = book.log("commit")
    assert (record["agent"], record["project"]) == ("PS", "consilio")
    # the environment beats the config, an explicit argument beats both
    book = Lorebook.open(store, env={"LORE_AGENT": "MS", "LORE_PROJECT": "other"})
    record = book.log("commit")
    assert (record["agent"], record["project"]) == ("MS", "other")
    record = book.log("commit", agent="QA", project="third")
    assert (record["agent"], record["project"]) == ("QA", "third")


def test_extra_secret_keys_are_redacted(store: Path) -> None:
    book = Lorebook.open(store, env={})
    plain = book.log("tool_call", context={"vault_ref": "kv/prod/db-password-7731"})
    assert plain["context"]["vault_ref"] == "kv/prod/db-password-7731"
    write_config(store, "redaction:\n  extra_secret_keys: [vault_ref]\n")
    book = Lorebook.open(store, env={})
    record = book.log("tool_call", context={"vault_ref": "kv/prod/db-password-7731"})
    assert record["context"]["vault_ref"] != "kv/prod/db-password-7731"
    assert "REDACTED" in record["context"]["vault_ref"]
    assert record["meta"]["redactions"] >= 1
    last = (sorted((store / "actionlog").rglob("*.jsonl"))[-1]).read_text()
    assert last.count("kv/prod/db-password-7731") == 1  # only the first, unconfigured record


def test_invalid_yaml_names_file_and_line(store: Path) -> None:
    write_config(store, "log:\n  durability: fsync\nsessions: [unclosed\n")
    with pytest.raises(LoreError, match=r"config\.yaml:\d+: invalid YAML") as info:
        Lorebook.open(store, env={})
    line = int(str(info.value).split("config.yaml:")[1].split(":")[0])
    assert line in (3, 4)


def test_invalid_yaml_through_the_cli(store: Path) -> None:
    from conftest import clean_env, lore

    write_config(store, "agent: [PS\n")
    for args in (["log", "commit"], ["sessions"]):
        run = lore(*args, env=clean_env(store))
        assert run.code == 1
        assert run.out == ""
        lines = run.err.strip().splitlines()
        assert len(lines) == 1
        assert "config.yaml:" in lines[0] and "invalid YAML" in lines[0]


def test_non_mapping_config_is_an_error(store: Path) -> None:
    write_config(store, "- just\n- a list\n")
    with pytest.raises(LoreError, match=r"config\.yaml:1: config must be a mapping"):
        load_config(store)
    write_config(store, "just a string\n")
    with pytest.raises(LoreError, match="mapping"):
        load_config(store)


def test_bad_durability_is_an_error(store: Path) -> None:
    write_config(store, "log:\n  durability: sometimes\n")
    with pytest.raises(
        LoreError,
        match=r"config\.yaml:2: log\.durability: expected one of flush, "
        r"fsync",
    ):
        load_config(store)


def test_json_cache_is_written_used_and_refreshed(store: Path) -> None:
    path = write_config(store, "agent: PS\n")
    _aged(path)  # a config written just now is not cached (see the test below)
    cache = store / ".lore" / "cache" / "config.json"
    cache.unlink(missing_ok=True)
    assert load_config(store).raw["agent"] == "PS"
    cached = json.loads(cache.read_text())
    stat = path.stat()
    stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns]
    assert cached == {"stamp": stamp, "data": {"agent": "PS"}, "settled": True}

    # the cache is what is read while the YAML is unchanged
    cached["data"]["agent"] = "FROM-CACHE"
    cache.write_text(json.dumps(cached))
    assert load_config(store).raw["agent"] == "FROM-CACHE"

    # a change to the YAML refreshes it
    _aged(write_config(store, "agent: Quality-Agent\n"))
    assert load_config(store).raw["agent"] == "Quality-Agent"
    assert json.loads(cache.read_text())["data"] == {"agent": "Quality-Agent"}

    # same size, new mtime: still refreshed
    write_config(store, "agent: Quality-Agenz\n")
    later = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(later, later))
    assert load_config(store).raw["agent"] == "Quality-Agenz"


def test_corrupt_cache_is_ignored_and_rebuilt(store: Path) -> None:
    _aged(write_config(store, "project: consilio\n"))
    cache = store / ".lore" / "cache" / "config.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("{not json")
    assert load_config(store).raw["project"] == "consilio"
    assert json.loads(cache.read_text())["data"] == {"project": "consilio"}


def test_config_errors_are_not_cached(store: Path) -> None:
    write_config(store, "log:\n  durability: sometimes\n")
    for _ in range(2):
        with pytest.raises(LoreError):
            load_config(store)


def _aged(path: Path, seconds: float = 10) -> int:
    """Set `path`'s mtime `seconds` back (a file older than the clock's tick); returns it."""
    then = int((datetime.now(UTC).timestamp() - seconds) * 1e9)
    os.utime(path, ns=(then, then))
    return then


def test_a_config_edited_within_the_clock_tick_is_never_served_stale(store: Path) -> None:
    """The config cache keys on the file's stat; an edit that keeps its size and mtime (the same
    clock tick, or a tool that restores mtimes) must still be seen: a file written just now is
    cached with its text, used only while the file reads the same."""
    config = store / ".lore" / "config.yaml"
    cache = store / ".lore" / "cache" / "config.json"
    config.write_text("hooks:\n  budget_seconds: 11\n")
    assert load_config(store).hooks.budget_seconds == 11
    fresh = json.loads(cache.read_text())  # too fresh to trust its stat: its text is kept
    assert "settled" not in fresh and fresh["text"] == config.read_text()
    stamp = fresh["stamp"]
    config.write_text("hooks:\n  budget_seconds: 33\n")  # same size, maybe the same tick
    os.utime(config, ns=(stamp[1], stamp[1]))
    now = config.stat()
    fresh["stamp"] = [now.st_size, stamp[1], now.st_ino, now.st_ctime_ns]
    cache.write_text(json.dumps(fresh))  # as if the stat had not moved at all
    assert load_config(store).hooks.budget_seconds == 33  # the text differs: parsed again
    mtime = _aged(config)
    assert load_config(store).hooks.budget_seconds == 33
    assert json.loads(cache.read_text()).get("settled") is True  # settled: the stat is trusted
    config.write_text("hooks:\n  budget_seconds: 22\n")  # same size
    os.utime(config, ns=(mtime, mtime))  # and the same mtime
    assert load_config(store).hooks.budget_seconds == 22
