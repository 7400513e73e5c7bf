"""`lore check` on a store seeded with every kind of damage the hardening work defends against:
it exits non-zero and names each damaged file (and line, where there is one), never a secret."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import clean_env, lore

GITHUB = "ghp_" + "R8x2Kq9ZtV4mN7pL1wY6sB3cD5fG0hJ2kA8e"  # a token shape the sanitizer knows
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQx2Vb8Ne"

LEARNING = (
    "---\nid: {id}\ntitle: {title}\nkind: lesson\nstatus: published\n"
    "created: 2026-01-05\n---\n## Key Takeaway\n{body}\n"
)
BOMB = (
    "---\nid: bomb\ntitle: Bomb\nkind: lesson\nstatus: published\ncreated: 2026-01-05\n"
    "tags: &a [x, x, x, x, x, x, x, x, x]\nprevention: [*a, *a, *a, *a, *a, *a]\n"
    "---\n## Key Takeaway\nboom\n"
)


def _line(**fields: object) -> str:
    base = {
        "v": 1,
        "kind": "action",
        "id": "01JD0000000000000000000000",
        "ts": "2026-01-05T10:00:00.000Z",
        "session": "s1",
        "agent": "PS",
        "project": "p",
        "type": "commit",
        "category": "git",
        "outcome": "success",
        "context": {},
        "error": None,
        "duration_s": None,
        "parent": None,
        "epic": None,
        "issue": None,
        "meta": {},
    }
    base.update(fields)
    return json.dumps(base, sort_keys=True, separators=(",", ":"))


def test_check_names_every_kind_of_damage(store: Path, tmp_path: Path) -> None:
    day = store / "actionlog" / "2026" / "01" / "05"
    day.mkdir(parents=True)
    # a secret in a hand-written line, and an over-long line after it
    (day / "s1.jsonl").write_text(
        _line(context={"note": f"token {GITHUB}"})
        + "\n"
        + _line(id="01JD0000000000000000000001", context={"pad": "x" * (2 << 20)})
        + "\n"
    )
    # a shard named by a secret
    (day / f"{STRIPE}.jsonl").write_text(
        _line(id="01JD0000000000000000000002", session=STRIPE) + "\n"
    )
    # a symlinked shard leaving the repository
    victim = tmp_path / "victim"
    victim.write_text("")
    (day / "s2.jsonl").symlink_to(victim)
    # a symlinked learning leaving the repository, and an alias bomb
    outside = tmp_path / "outside.md"
    outside.write_text(LEARNING.format(id="leak", title="Leak", body="outside"))
    (store / "learnings" / "leak.md").symlink_to(outside)
    (store / "learnings" / "bomb.md").write_text(BOMB)

    done = lore("check", "--json", env=clean_env(store), timeout=240)
    assert done.code == 1, done.err
    text = done.out + done.err
    for secret in (GITHUB, STRIPE):
        assert secret[:12] not in text
    findings = json.loads(done.out)["findings"]
    where = {(f["path"], f["line"]) for f in findings}
    assert ("actionlog/2026/01/05/s1.jsonl", 1) in where  # the secret in the line
    assert ("actionlog/2026/01/05/s1.jsonl", 2) in where  # the over-long line
    assert any(path.startswith("actionlog/2026/01/05/[REDACTED:") for path, _ in where)
    reasons = {f["path"]: f["reason"] for f in findings}
    assert reasons.get("actionlog/2026/01/05/s2.jsonl") == "symlink outside the repository"
    assert reasons.get("learnings/leak.md") == "symlink outside the repository"
    bomb = [f for f in findings if f["path"] == "learnings/bomb.md"]
    assert bomb and bomb[0]["line"] > 0 and "alias" in bomb[0]["reason"]
    assert victim.read_text() == ""  # nothing was written through the link

    human = lore("check", env=clean_env(store), timeout=240)
    assert human.code == 1
    assert "actionlog/2026/01/05/s1.jsonl:1:" in human.out + human.err
    assert "learnings/bomb.md:" in human.out + human.err


def test_check_names_a_bad_config_value_with_its_line(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("log:\n  max_depth: deep\n")
    done = lore("check", env=clean_env(store))
    assert done.code == 1
    assert done.err.strip().splitlines() == [
        f"lore: error: {store / '.lore' / 'config.yaml'}:2: log.max_depth: "
        "expected an integer, got 'deep'"
    ]
