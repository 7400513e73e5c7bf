"""`lore demo` shows the knowledge base: learnings, a draft to review, a stale learning."""

from __future__ import annotations

from pathlib import Path

from conftest import cli_run, git


def test_demo_shows_drafts_and_a_stale_learning(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    result = cli_run(["demo", str(root), "--json"])
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    published = {x["id"].split("-", 3)[3] for x in data["learnings"]}
    assert {
        "rls-policy-blocks-insert",
        "port-conflict-on-deploy",
        "refresh-tokens-single-use",
    } <= published
    drafts = [d["id"] for d in data["drafts"]]
    assert any(d.endswith("refresh-token-reuse-detection") for d in drafts)
    stale = {r["id"].split("-", 3)[3]: r["anchors"] for r in data["stale"]}
    assert list(stale) == ["refresh-tokens-single-use"]  # anchors of the others exist, unchanged
    assert stale["refresh-tokens-single-use"][0]["reason"] == "changed"
    assert "feat(auth): refresh-token rotation" in git(root, "log", "--format=%s")
    check = cli_run(["--root", str(root), "check"])
    assert check.code == 0, check.out
    human = cli_run(["demo", str(tmp_path / "again")])
    assert "$ lore drafts" in human.out and "$ lore stale" in human.out
    assert "src/auth/tokens.py#rotate: changed" in human.out
