"""`lore learn new`, `lore learnings`, `lore show`, `lore drafts`: good and bad input."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook


def _run(store: Path, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return cli_run(["--root", str(store), *args], input=stdin)


def test_learn_new_writes_a_draft_with_the_skeleton(store: Path) -> None:
    body = store / "body.md"
    body.write_text("Inserts failed with 403 for the anon key.\n")
    result = _run(
        store,
        "learn",
        "new",
        "--title",
        "RLS blocks INSERT",
        "--kind",
        "pattern",
        "--category",
        "database",
        "--severity",
        "high",
        "--tags",
        "rls, supabase",
        "--body-file",
        str(body),
        "--anchor",
        "supabase/policies.sql",
        "--anchor",
        "src/db.py#connect",
        "--json",
    )
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    lid = data["id"]
    assert lid.startswith("2026-") or lid[:4].isdigit()
    assert data["status"] == "draft" and data["kind"] == "pattern"
    assert data["tags"] == ["rls", "supabase"]
    assert data["anchors"] == ["supabase/policies.sql", "src/db.py#connect"]
    path = store / "learnings" / "drafts" / f"{lid}.md"
    text = path.read_text()
    assert "## Problem\nInserts failed with 403 for the anon key.\n\n## Root Cause\n" in text
    assert text.rstrip().endswith("## Key Takeaway")
    human = _run(store, "learn", "new", "--title", "Second")
    assert human.code == 0
    assert human.out.startswith("draft 2") and "learnings/drafts/" in human.out


def test_learn_new_body_from_stdin_keeps_sections_and_publish(store: Path) -> None:
    body = "## Problem\nx\n\n## Key Takeaway\nAlways pin torch.\n"
    result = _run(
        store,
        "learn",
        "new",
        "--title",
        "Pin torch",
        "--body-file",
        "-",
        "--publish",
        "--json",
        stdin=body,
    )
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    assert data["status"] == "published" and data["takeaway"] == "Always pin torch."
    assert (store / "learnings" / f"{data['id']}.md").is_file()


def test_learn_new_bad_input_is_one_line_and_writes_nothing(store: Path) -> None:
    assert_one_error_line(_run(store, "learn", "new", "--title", "T", "--kind", "essay"), "--kind")
    assert_one_error_line(_run(store, "learn", "new"), "--title")
    assert_one_error_line(
        _run(store, "learn", "new", "--title", "T", "--body-file", str(store / "missing.md")),
        "missing.md",
        "cannot be read",
    )
    assert_one_error_line(_run(store, "learn", "new", "--title", "   "), "title")
    assert_one_error_line(_run(store, "learn", "new", "--title", "a\nb"), "one line")
    assert sorted(p.name for p in (store / "learnings").rglob("*.md")) == []


def test_learn_new_in_an_unwritable_place(store: Path) -> None:
    drafts = store / "learnings" / "drafts"
    for child in drafts.iterdir():
        child.unlink()
    drafts.rmdir()
    drafts.write_text("")
    assert_one_error_line(_run(store, "learn", "new", "--title", "T"), "nothing was written")


def _seed(store: Path) -> Lorebook:
    book = Lorebook.open(store, env={})
    book.learnings.new(
        title="Alpha",
        publish=True,
        learning_id="a-alpha",
        kind="pattern",
        category="git",
        tags=["merge", "jsonl"],
    )
    book.learnings.new(title="Beta", learning_id="b-beta", category="db", tags=["rls"])
    book.learnings.new(
        title="Gamma", publish=True, learning_id="c-gamma", category="db", tags=["rls", "auth"]
    )
    return book


def test_learnings_filters_and_json(store: Path) -> None:
    _seed(store)

    def ids(*args: str) -> list[str]:
        result = _run(store, "learnings", "--json", *args)
        assert result.code == 0, result.err
        data = result.json()
        assert isinstance(data, list)
        return [x["id"] for x in data]

    assert ids() == ["a-alpha", "c-gamma", "b-beta"]
    assert ids("--status", "published") == ["a-alpha", "c-gamma"]
    assert ids("--kind", "pattern") == ["a-alpha"]
    assert ids("--category", "db") == ["c-gamma", "b-beta"]
    assert ids("--tag", "rls") == ["c-gamma", "b-beta"]
    assert ids("--tag", "rls", "--tag", "auth") == ["c-gamma"]
    assert ids("--status", "retired") == []
    human = _run(store, "learnings", "--status", "draft")
    assert human.out.split() == ["b-beta", "draft", "Beta"]
    assert _run(store, "learnings", "--tag", "none").out.strip() == "no learnings match"
    assert_one_error_line(_run(store, "learnings", "--status", "bogus"), "--status")


def test_drafts_and_show(store: Path) -> None:
    _seed(store)
    drafts = _run(store, "drafts", "--json").json()
    assert isinstance(drafts, list)
    assert [d["id"] for d in drafts] == ["b-beta"]
    assert _run(store, "drafts").out.split()[0] == "b-beta"
    shown = _run(store, "show", "c-gamma", "--json").json()
    assert isinstance(shown, dict)
    assert shown["title"] == "Gamma" and shown["tags"] == ["rls", "auth"]
    assert shown["path"].endswith("learnings/c-gamma.md")
    human = _run(store, "show", "b-beta").out
    assert human.startswith("Beta\n") and "status:     draft" in human
    assert "## Problem" in human


def test_show_bad_ids_and_broken_files(store: Path) -> None:
    _seed(store)
    assert_one_error_line(_run(store, "show", "nope"), "no learning or draft with id 'nope'")
    assert_one_error_line(_run(store, "show", "../../etc/passwd"), "invalid learning id")
    broken = store / "learnings" / "broken.md"
    broken.write_text("---\nid: broken\ntitle: x\nstatus: draft\ncreated: 2026-02-30\n---\n")
    assert_one_error_line(_run(store, "show", "broken"), "learnings/broken.md:5:", "created")
    listed = _run(store, "learnings")
    assert listed.code == 0
    assert "broken" not in listed.out
    assert (
        listed.err.strip().splitlines() == [listed.err.strip().splitlines()[0]]
        and "learnings/broken.md:5:" in listed.err
    )


def test_alias_bomb_via_the_real_command(store: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    (store / "learnings" / "bomb.md").write_text(
        "---\nid: bomb\ntitle: t\nstatus: draft\ncreated: 2026-11-22\n"
        + "\n".join(lines)
        + "\n---\n"
    )
    result = lore("show", "bomb", env=clean_env(store), timeout=30)
    assert_one_error_line(result, "learnings/bomb.md:7: YAML aliases are not allowed")


def test_learn_new_and_listing_via_subprocess(store: Path) -> None:
    env = clean_env(store)
    made = lore("learn", "new", "--title", "no", "--tags", "1.10,yes", env=env)
    assert made.code == 0, made.err
    lid = made.out.split()[1].rstrip(":")
    listed = lore("learnings", "--json", env=env).json()
    assert isinstance(listed, list)
    assert listed[0]["title"] == "no" and listed[0]["tags"] == ["1.10", "yes"]
    shown = lore("show", lid, env=env)
    assert shown.code == 0 and shown.out.startswith("no\n")
    assert lore("drafts", env=env).out.startswith(lid)
