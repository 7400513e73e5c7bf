"""Every `lore … --json` output, printed by the real `lore` on a real store, matches its schema
in docs/schema/ (generated from the types in lorebook.contracts); the files are the generated
ones; and the schemas are strict: an unexpected or a missing key fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import clean_env, lore, require_real
from lorebook.contracts import OUTPUTS
from lorebook.contracts.schema import OPEN, text
from pg_server import _postgres, pg_server

__all__ = ["pg_server"]  # the session fixture, used by name
SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schema"

RCA = """title: Deploy port conflict
rootCause: the old process kept port 5000
correctiveAction: stop the old process before the deploy
preventionNotes: [check the port before deploying]
tags: [deploy]
"""

RETRO = """# Retro epic-012

## failure_patterns
- Refresh tokens reused after rotation

## key_learnings
- Rotate refresh tokens on every use
"""

GOLDEN = """queries:
  - query: rls policy blocks insert
    expected: [2026-11-25-rls-policy-blocks-insert]
"""

# (label, schema) in the order the commands run: every output in OUTPUTS, some more than once
RUNS = [
    ("demo", "demo"), ("init", "init"), ("session start", "session-start"), ("log", "action"),
    ("actions", "actions"), ("sessions", "sessions"), ("resume", "resume"), ("check", "check"),
    ("catalog", "catalog"), ("report", "report"), ("report kpis", "kpis"),
    ("report daily", "report-written"), ("report weekly", "report-written"), ("export", "export"),
    ("archive", "retention"), ("prune", "retention"), ("index", "index"), ("search", "search"),
    ("search --explain", "search"), ("preflight", "preflight"), ("eval", "eval"),
    ("hooks status", "hooks-status"), ("import", "import"), ("learnings", "learnings"),
    ("drafts", "learnings"),
    ("show", "learning"), ("stale", "stale"), ("history", "history"), ("stats", "stats"),
    ("stats ID", "stats-one"), ("learn new", "learning"), ("pattern new", "learning"),
    ("pattern record", "action"), ("preflight, a pattern", "preflight"), ("apply", "action"),
    ("draft from-epic", "draft"), ("draft from-issue", "draft"), ("rca add", "rca"),
    ("extract retro", "drafts-extracted"),
    ("promote", "promote"), ("reject", "reject"), ("expertise list", "expertise-list"),
    ("expertise show", "expertise-show"), ("expertise classify", "expertise-classify"),
    ("expertise history", "expertise-history"), ("expertise prompt", "expertise-prompt"),
    ("expertise learn", "expertise-update"), ("expertise improve", "expertise-update"),
    ("expertise validate", "expertise-validate"), ("session end", "session-end"),
    ("mirror postgres", "mirror-postgres"),
    ("sync", "sync"), ("otel export", "otel-export"),
]  # fmt: skip


def validator(name: str) -> jsonschema.Draft202012Validator:
    found = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(found)
    return jsonschema.Draft202012Validator(found)


def errors(name: str, data: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
        for e in validator(name).iter_errors(data)
    ]


@pytest.fixture(scope="module")
def outputs(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """Each command of RUNS run once, in order, on the sample store `lore demo` builds."""
    root = tmp_path_factory.mktemp("contract") / "consilio"
    files = root.parent
    env = clean_env(root)
    found: dict[str, Any] = {}

    def run(label: str, *args: str, code: int = 0, **extra: str) -> Any:
        result = lore(*args, "--json", env={**env, **extra})
        assert result.code == code, (label, result.out, result.err)
        found[label] = json.loads(result.out)
        return found[label]

    run("demo", "demo", str(root), LORE_ROOT="")
    published = found["demo"]["learnings"][0]["id"]
    finished = next(s["id"] for s in found["demo"]["sessions"] if s["status"] == "ended")
    run("init", "init")
    env["LORE_SESSION"] = run("session start", "session", "start", "--agent", "PS")["session"]
    run("log", "log", "commit", "--epic", "epic-012", "--context", '{"files": ["a.py"]}')
    run("actions", "actions", "--limit", "5")
    run("sessions", "sessions")
    run("resume", "resume", LORE_SESSION="")
    run("check", "check")
    run("catalog", "catalog")
    run("report", "report", "--days", "30")
    run("report kpis", "report", "kpis")
    run("report daily", "report", "daily")
    run("report weekly", "report", "weekly")
    run("export", "export", "--format", "jsonl", "-o", str(files / "actions.jsonl"))
    run("archive", "archive", "--dry-run")
    run("prune", "prune", "--dry-run")
    run("index", "index")
    run("search", "search", "rls", "policy", "--mode", "keyword")
    run("search --explain", "search", "deploy", "port", "--mode", "keyword", "--explain")
    run("preflight", "preflight", "ship the api", "--phase", "deploy", "--mode", "keyword")
    (files / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    run("eval", "eval", "--queries", str(files / "golden.yaml"), "--mode", "keyword")
    run("hooks status", "hooks", "status")
    (files / "claude" / "projects").mkdir(parents=True)  # no session of this repository yet
    run("import", "import", "claude", CLAUDE_CONFIG_DIR=str(files / "claude"))
    run("learnings", "learnings")
    run("drafts", "drafts")
    run("show", "show", published)
    run("stale", "stale", code=1)  # the demo has a stale learning: exit 1, for CI
    run("history", "history", published)
    run("stats", "stats")
    run("stats ID", "stats", published)
    new = run("learn new", "learn", "new", "--title", "Pin the torch version")["id"]
    pattern = run("pattern new", "pattern", "new", "--publish", "--title",
                  "Port 5000 taken on deploy", "--solution",
                  "stop the old process first")["id"]  # fmt: skip
    run("pattern record", "pattern", "record", pattern, "--solution", "s1", "--success")
    found_pattern = run("preflight, a pattern", "preflight", "port 5000 taken on deploy",
                        "--mode", "keyword")  # fmt: skip
    assert [p["id"] for p in found_pattern["patterns"]] == [pattern]
    run("apply", "apply", published, "--outcome", "success")
    run("draft from-epic", "draft", "from-epic", "epic-012")
    issue = '{"labels": ["bug"], "resolution": "restart the worker before the deploy"}'
    lore("log", "issue_resolved", "--issue", "ISS-7", "--context", issue, env=env)
    run("draft from-issue", "draft", "from-issue", "ISS-7")
    (files / "rca.yaml").write_text(RCA, encoding="utf-8")
    run("rca add", "rca", "add", str(files / "rca.yaml"))
    (files / "retro.md").write_text(RETRO, encoding="utf-8")
    run("extract retro", "extract", "retro", str(files / "retro.md"))
    run("promote", "promote", new)
    run("reject", "reject", found["demo"]["drafts"][0]["id"], "--reason", "a duplicate")
    run("expertise list", "expertise", "list")
    run("expertise show", "expertise", "show", "api")
    run("expertise classify", "expertise", "classify", "add a migration for the users table")
    run("expertise history", "expertise", "history", "api")
    run("expertise prompt", "expertise", "prompt", "--task", "rotate refresh tokens")
    run("expertise learn", "expertise", "learn", "--session", finished, "--no-commit")
    run("expertise improve", "expertise", "improve", "api", "--no-commit")
    run("expertise validate", "expertise", "validate", "--all", "--no-commit")
    run("session end", "session", "end")
    if _postgres.missing() is None:  # else its test says so (and fails under LORE_REQUIRE_REAL)
        dsn = request.getfixturevalue("pg_server").database()
        run("mirror postgres", "mirror", "postgres", "--dry-run", LORE_PG_DSN=dsn)
    run("sync", "sync", "--no-push")
    run("otel export", "otel", "export", "--dry-run", "--endpoint", "http://127.0.0.1:9")
    return found


@pytest.mark.parametrize(("label", "name"), RUNS, ids=[label for label, _ in RUNS])
def test_each_output_matches_its_schema(outputs: dict[str, Any], label: str, name: str) -> None:
    if label not in outputs:
        require_real(f"`lore {label}` needs PostgreSQL: {_postgres.missing()}")
    assert errors(name, outputs[label]) == []


def test_every_output_is_run_and_every_schema_is_generated() -> None:
    assert {name for _, name in RUNS} == set(OUTPUTS)
    shipped = {p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json")}
    assert shipped == set(OUTPUTS) | {"action-v1"}


def test_the_contract_page_lists_every_output() -> None:
    page = (SCHEMAS.parent / "json.md").read_text(encoding="utf-8")
    assert [n for n in OUTPUTS if f"(schema/{n}.schema.json)" not in page] == []


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_the_committed_schema_is_the_generated_one(name: str) -> None:
    """Run `python -m lorebook.contracts.schema` after changing a type in lorebook.contracts."""
    assert (SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8") == text(name)


def _object_schema(name: str) -> dict[str, Any]:
    """The schema of output `name`'s object (of its items, for a list), its `$ref` followed."""
    found = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    node = found.get("items", found)
    ref = node.get("$ref", "")
    return found["$defs"][ref.rsplit("/", 1)[1]] if ref else node


@pytest.mark.parametrize(("label", "name"), RUNS, ids=[label for label, _ in RUNS])
def test_a_key_added_or_dropped_fails(outputs: dict[str, Any], label: str, name: str) -> None:
    """The schemas catch drift: an output (or its first item) that gains a key it does not
    list (but the open ones: a learning's front matter, a v1 action line), or loses one it
    requires, is refused."""
    if label not in outputs:
        require_real(f"`lore {label}` needs PostgreSQL: {_postgres.missing()}")
    data = outputs[label]
    if isinstance(data, list) and not data:
        pytest.skip(f"{label} printed an empty list on the sample store")
    item = data[0] if isinstance(data, list) else data
    shape = _object_schema(name)

    def wrapped(changed: dict[str, Any]) -> Any:
        return [changed, *data[1:]] if isinstance(data, list) else changed

    kind = OUTPUTS[name][0]
    typed = getattr(kind, "__args__", (kind,))[0]  # the item type of a list
    if getattr(typed, "__name__", "") not in OPEN and name != "expertise-show":
        assert shape.get("additionalProperties") is False, name
        assert errors(name, wrapped({**item, "unexpected": 1}))
    for key in shape.get("required", []):
        assert errors(name, wrapped({k: v for k, v in item.items() if k != key})), key


def test_a_drifted_nested_object_fails(outputs: dict[str, Any]) -> None:
    resume = json.loads(json.dumps(outputs["resume"]))
    resume["session"]["renamed"] = resume["session"].pop("status")
    assert len(errors("resume", resume)) == 2  # status missing, renamed unexpected
    report = json.loads(json.dumps(outputs["report"]))
    report["summary"]["total_actions"] = "12"
    assert errors("report", report) == ["summary/total_actions: '12' is not of type 'integer'"]


def test_every_command_with_json_has_a_contract() -> None:
    """The command table and the contract table agree: a command that takes `--json` has a
    schema, and a schema names only commands that take `--json`."""
    from lorebook import docgen
    from lorebook.contracts import OUTPUTS

    with_json = {
        prog.removeprefix("lore ")
        for prog, command, _ in docgen.commands()
        if command.option("as_json") or command.option("json")
    }
    contracted = {
        " ".join(word for word in name.split() if not word.isupper())  # "stats ID"
        for _, commands in OUTPUTS.values()
        for name in commands
    }
    skins = {name for name in contracted if name.split()[0] in ("hooks", "hook", "mcp", "tui")}
    assert with_json - contracted == set()
    assert contracted - skins - with_json == set()
