"""A secret nested deeper than the sanitizer looks (`max_depth`) is withheld, not passed on: a
line edited by hand with one never reaches `lore actions` (catalog or scan), the mirror's rows
or `lore export`, and `lore check` names where it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import clean_env, lore
from lorebook.redact.sanitize import TOO_DEEP, Sanitizer

GITHUB = "ghp_" + "R8x2Kq9ZtV4mN7pL1wY6sB3cD5fG0hJ2kA8e"


def _deep(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"token": GITHUB}
    for _ in range(depth):
        node = {"n": node}
    return node


def test_a_subtree_past_max_depth_is_withheld_and_counted() -> None:
    sanitizer = Sanitizer()
    clean, count = sanitizer.sanitize({"context": _deep(25)})
    assert GITHUB not in json.dumps(clean)
    assert TOO_DEEP in json.dumps(clean)
    assert count >= 1  # a reader keeping "nothing redacted" records as they are must not keep it
    kinds = {finding.kind for finding in sanitizer.findings({"context": _deep(25)})}
    assert "nested_too_deep" in kinds
    shallow, none = sanitizer.sanitize({"context": {"n": {"note": "fine"}}})
    assert none == 0 and shallow == {"context": {"n": {"note": "fine"}}}


@pytest.mark.parametrize("catalog", [True, False])
def test_a_hand_written_deep_secret_never_reaches_the_output(store: Path, catalog: bool) -> None:
    if not catalog:
        (store / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    assert lore("log", "deploy", "--outcome", "success", env=clean_env(store)).code == 0
    shard = next((store / "actionlog").rglob("*.jsonl"))
    record = json.loads(shard.read_text().splitlines()[-1])
    record.update(id=record["id"][:-4] + "ZZZZ", context=_deep(25))
    with shard.open("a") as handle:
        handle.write(json.dumps(record, separators=(",", ":")) + "\n")

    for args in (("actions", "--json"), ("actions", "--json", "--limit", "1"),
                 ("export", "-o", str(store.parent / "out.jsonl"), "--json")):  # fmt: skip
        done = lore(*args, env=clean_env(store))
        assert done.code == 0, done.err
        assert GITHUB not in done.out + done.err
    assert GITHUB not in (store.parent / "out.jsonl").read_text()
    checked = lore("check", env=clean_env(store))
    assert checked.code != 0
    assert "nested_too_deep" in checked.out + checked.err
    assert GITHUB not in checked.out + checked.err
