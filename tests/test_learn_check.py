"""`lore check` over learnings, drafts and expertise files: file:line findings, exit 1."""

from __future__ import annotations

from pathlib import Path

from conftest import clean_env, cli_run, lore
from lorebook import Lorebook

REPO = Path(__file__).resolve().parents[1]


def _learning(
    store: Path, name: str, front: str, body: str = "## Problem\nx\n", draft: bool = False
) -> Path:
    folder = store / "learnings" / ("drafts" if draft else "")
    path = folder / f"{name}.md"
    path.write_text(f"---\n{front}---\n{body}")
    return path


def _front(lid: str, status: str = "published", extra: str = "") -> str:
    return f"id: {lid}\ntitle: T {lid}\nstatus: {status}\ncreated: 2026-11-22\n{extra}"


def _check(store: Path) -> tuple[int, list[str]]:
    result = cli_run(["--root", str(store), "check"])
    return result.code, result.out.splitlines()


def test_clean_learnings_and_expertise_pass(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.learnings.new(title="Alpha", publish=True, learning_id="alpha")
    book.learnings.new(title="Beta", learning_id="beta", supersedes=["alpha"])
    (store / ".expertise" / "database.yaml").write_text(
        "# comments survive\ndomain: database\noverview: Postgres with RLS\n"
        "core_files: [db/schema.sql]\nbest_practices:\n  - Index foreign keys\n"
    )
    result = cli_run(["--root", str(store), "check", "--json"])
    assert result.code == 0, result.out
    data = result.json()
    assert isinstance(data, dict)
    assert (data["learnings"], data["expertise"], data["findings"]) == (2, 1, [])
    code, lines = _check(store)
    assert code == 0
    assert lines == ["checked 0 records in 0 shards, 2 learnings, 1 expertise files: ok"]


def test_the_repositorys_own_knowledge_files_pass(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    root.mkdir()
    Lorebook.init(root, env={})
    for path in (REPO / "learnings").glob("*.md"):
        (root / "learnings" / path.name).write_text(path.read_text())
    for path in (REPO / ".expertise").glob("*.yaml"):
        (root / ".expertise" / path.name).write_text(path.read_text())
    code, lines = _check(root)
    assert code == 0, lines
    count = len(list((REPO / "learnings").glob("*.md")))
    domains = len(list((REPO / ".expertise").glob("*.yaml")))
    assert lines[-1].endswith(f"{count} learnings, {domains} expertise files: ok")


def test_learning_findings_name_file_and_line(store: Path) -> None:
    _learning(store, "bad-yaml", "id: bad-yaml\ntitle: [\n")
    _learning(store, "bad-status", _front("bad-status", "bogus"))
    _learning(store, "wrong-name", _front("other-name"))
    _learning(store, "dup", _front("dup"))
    _learning(store, "dup", _front("dup", "draft"), draft=True)
    _learning(store, "in-wrong-folder", _front("in-wrong-folder", "draft"))
    _learning(store, "broken-ref", _front("broken-ref", extra="supersedes: [gone, broken-ref]\n"))
    _learning(
        store, "leaky", _front("leaky"), body="## Problem\nwe used ghp_" + "a" * 36 + " in CI\n"
    )
    code, lines = _check(store)
    assert code == 1
    findings = set(lines[:-1])
    expected = {
        "learnings/bad-yaml.md:3: invalid YAML front matter: did not find expected node content",
        "learnings/bad-status.md:4: status: Input should be 'draft', 'published', 'superseded' "
        "or 'retired'",
        "learnings/wrong-name.md:2: id 'other-name' does not match the file name 'wrong-name.md'",
        "learnings/drafts/dup.md:2: duplicate id dup (also learnings/dup.md)",
        "learnings/in-wrong-folder.md:4: status draft belongs in learnings/drafts/",
        "learnings/broken-ref.md:6: supersedes gone: no such learning",
        "learnings/broken-ref.md:6: a learning cannot supersede itself",
        "learnings/leaky.md:8: possible secret (github_token)",
    }
    assert findings == expected, findings ^ expected
    assert lines[-1].endswith(f"8 learnings, 0 expertise files: {len(expected)} finding(s)")


def test_alias_bomb_in_a_learning_is_one_finding(store: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join(['*a' if i == 1 else f'*a{i - 1}'] * 8)}]\n" for i in range(1, 10)
    )
    _learning(store, "bomb", _front("bomb") + bomb)
    code, lines = _check(store)
    assert code == 1
    assert (
        lines[0] == "learnings/bomb.md:7: YAML aliases are not allowed in front matter "
        "(alias bomb?)"
    )


def test_expertise_findings(store: Path) -> None:
    exp = store / ".expertise"
    (exp / "api.yaml").write_text("domain: web\npatterns: not-a-list\n")
    (exp / "broken.yaml").write_text("domain: broken\noverview: [\n")
    (exp / "nodomain.yaml").write_text("overview: x\n")
    (exp / "big.yaml").write_text("domain: big\nbest_practices:\n" + "  - x\n" * 1000)
    (exp / "leak.yaml").write_text("domain: leak\noverview: contact bob@example.com\n")
    (exp / "bomb.yaml").write_text("domain: bomb\na: &a [1, 2]\nb: [*a, *a]\n")
    (exp / "notes.txt").write_text("not checked\n")
    code, lines = _check(store)
    assert code == 1
    findings = set(lines[:-1])
    expected = {
        ".expertise/api.yaml:1: domain 'web' does not match the file name",
        ".expertise/api.yaml:2: patterns: must be a list",
        ".expertise/broken.yaml:2: invalid YAML: expected the node content, but found "
        "'<stream end>'",
        ".expertise/nodomain.yaml:1: domain: required, a non-empty string",
        ".expertise/big.yaml:1001: 1002 lines: more than 1000",
        ".expertise/leak.yaml:2: possible secret (email)",
        ".expertise/bomb.yaml:3: invalid YAML: YAML aliases are not allowed here",
    }
    assert findings == expected, findings ^ expected
    assert lines[-1].endswith("6 expertise files: 7 finding(s)")


def test_check_json_via_subprocess(store: Path) -> None:
    _learning(store, "x", _front("x", "nope"))
    done = lore("check", "--json", env=clean_env(store))
    assert done.code == 1
    data = done.json()
    assert isinstance(data, dict)
    assert data["ok"] is False and data["learnings"] == 1
    assert data["findings"][0]["path"] == "learnings/x.md"
    assert data["findings"][0]["line"] == 4
