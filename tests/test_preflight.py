"""`lore preflight`: the prompt block, deploy ordering, redaction, patterns, expertise, logging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import assert_one_error_line, clean_env, cli_run, lore, stored_actions
from search_fixtures import write_learning

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token format the sanitizer knows


def preflight(root: Path, *args: str) -> dict[str, Any]:
    result = cli_run(["preflight", *args, "--json"], env={"LORE_ROOT": str(root)})
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    return data


def test_plan_block_lists_learnings_and_checklist(search_store: Path) -> None:
    # logged into the caller's session (without one a preflight logs nothing)
    result = cli_run(
        ["preflight", "add row level security policies to the orders table"],
        env={"LORE_ROOT": str(search_store), "LORE_SESSION": "plan-1"},
    )
    assert result.code == 0, result.err
    text = result.out
    assert "RELEVANT PAST LEARNINGS:" in text
    first = text.split("RELEVANT PAST LEARNINGS:\n", 1)[1].splitlines()[0]
    assert first == (
        "- Row level security policy prevents anonymous INSERT operations: "
        "Check the table's policies before mutating with the anon key."
    )
    assert "PREVENTION CHECKLIST:\n- [ ] Check policies before using the anon key" in text
    actions = [a for a in stored_actions(search_store) if a["type"] == "search"]
    assert len(actions) == 1
    context = actions[0]["context"]
    assert context["query"] == "add row level security policies to the orders table"
    assert context["phase"] == "plan" and context["results"][0] == "rls-anon-insert"


def test_deploy_phase_puts_deployment_and_high_severity_first(search_store: Path) -> None:
    data = preflight(search_store, "roll out the new api service", "--phase", "deploy")
    got = [item["id"] for item in data["learnings"]]
    assert got[:2] == ["deploy-port-conflict", "k8s-liveness"]
    assert data["learnings"][0]["severity"] == "high"
    assert "Run docker compose down before up" in data["prevention"]


def test_text_is_redacted_again(search_store: Path) -> None:
    write_learning(
        search_store,
        "leaky",
        title="Webhook deploys need the bot token",
        category="deployment",
        severity="high",
        body=f"## Key Takeaway\nThe deploy bot authenticates with {TOKEN} today.",
    )
    data = preflight(search_store, "webhook deploy bot token")
    assert data["learnings"][0]["id"] == "leaky"
    assert TOKEN not in data["text"] and TOKEN not in str(data)
    assert "[REDACTED" in data["learnings"][0]["takeaway"] or "REDACTED" in data["text"]


def test_patterns_with_best_solution_and_expertise(search_store: Path) -> None:
    write_learning(
        search_store,
        "pat-rls",
        kind="pattern",
        category="database",
        title="RLS policy blocks INSERT with the anon key",
        severity="medium",
        solutions=[{"id": "s1", "text": "Use the service-role key for admin mutations"}],
        prevention=["Document which operations need the service role"],
    )
    (search_store / ".expertise" / "database.yaml").write_text(
        "domain: database\noverview: Postgres behind Supabase; policies guard every table.\n"
        "best_practices:\n  - Write a policy test for every new table\n"
    )
    data = preflight(search_store, "insert rows into the orders table with the anon key")
    assert data["patterns"][0]["id"] == "pat-rls"
    assert data["patterns"][0]["best_solution"] == "Use the service-role key for admin mutations"
    assert (
        "MATCHING PATTERNS:\n- RLS policy blocks INSERT with the anon key — best solution: "
        "Use the service-role key for admin mutations (unproven)" in data["text"]
    )
    assert data["expertise"][0]["domain"] == "database"
    assert "DOMAIN EXPERTISE (database):\nPostgres behind Supabase" in data["text"]
    assert "- Write a policy test for every new table" in data["text"]


def test_nothing_found_still_prints_the_block(search_store: Path) -> None:
    data = preflight(search_store, "quantum chromodynamics lattice gauge")
    assert data["learnings"] == [] and "- none found" in data["text"]


def test_bad_input(search_store: Path) -> None:
    env = {"LORE_ROOT": str(search_store)}
    assert_one_error_line(cli_run(["preflight", " "], env=env), "empty query")
    assert cli_run(["preflight", "x", "--phase", "review"], env=env).code == 1
    assert cli_run(["preflight"], env=env).code == 1
    assert [a for a in stored_actions(search_store) if a["type"] == "search"] == []


def test_real_process_preflight(search_store: Path) -> None:
    done = lore(
        "preflight", "deploy the api", "--phase", "deploy", env=clean_env(search_store), timeout=300
    )
    assert done.code == 0, done.err
    assert "\nTask (deploy): deploy the api\n\nRELEVANT PAST LEARNINGS:\n" in done.out


def test_broken_expertise_file_is_a_warning(search_store: Path) -> None:
    (search_store / ".expertise" / "database.yaml").write_text("domain: [database\n")
    result = cli_run(
        ["preflight", "row level security insert", "--json"], env={"LORE_ROOT": str(search_store)}
    )
    assert result.code == 0, result.err
    assert "expertise skipped" in result.err and "database.yaml" in result.err
    data = result.json()
    assert isinstance(data, dict) and data["expertise"] == []
    assert data["learnings"][0]["id"] == "rls-anon-insert"


def test_drafts_awaiting_review_stay_out_of_the_prompt(search_store: Path) -> None:
    write_learning(
        search_store,
        "draft-rls-tip",
        folder="learnings/drafts",
        status="draft",
        title="Row level security blocks anonymous inserts on the orders table",
        created="2026-11-01",
        body="## Key Takeaway\nUnreviewed advice.",
    )
    text = cli_run(
        ["preflight", "add row level security policies to the orders table"],
        env={"LORE_ROOT": str(search_store)},
    ).out
    assert "Unreviewed advice" not in text
    assert "Check the table's policies before mutating with the anon key." in text
    found = cli_run(
        ["search", "row level security orders table anonymous inserts", "--json"],
        env={"LORE_ROOT": str(search_store)},
    ).json()
    assert isinstance(found, dict)
    assert "draft-rls-tip" in [r["id"] for r in found["results"]]  # search still finds it
