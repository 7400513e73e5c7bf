"""No secret becomes a file name: a title is redacted before it is slugged into a learning's id
(`lore rca add`, `lore learn new`), and `lore check` reports a secret-looking name under
learnings/ (as written, or disguised by slugging) without printing it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import clean_env, lore

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # ghp_ + 36 characters
CARD = "4111 1111 1111 1111"
EMAIL = "alice.wong@example.com"
# every spelling of each that a slug, a log line or an export could carry
LEAKS = [
    TOKEN.lower(),
    TOKEN[4:].lower(),
    "4111111111111111",
    "4111-1111-1111-1111",
    CARD,
    EMAIL,
    "alice-wong-example-com",
    "alice.wong",
]


def leaks(text: str) -> list[str]:
    lowered = text.lower()
    return [leak for leak in LEAKS if leak.lower() in lowered]


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts]


@pytest.mark.parametrize(
    "title",
    [
        f"{TOKEN} leaked in the deploy log",
        f"Card {CARD} in a fixture",
        f"Mail {EMAIL} in the logs",
        f"Deploy broke with {TOKEN} card {CARD} mail {EMAIL}",
    ],
)
def test_rca_add_never_names_a_file_after_a_secret(store: Path, tmp_path: Path, title: str) -> None:
    report = tmp_path / "rca.json"
    report.write_text(
        json.dumps(
            {"title": title, "rootCause": "a fixture held it", "correctiveAction": "use a fake"}
        )
    )
    env = clean_env(store)
    added = lore("rca", "add", str(report), "--json", env=env, cwd=store)
    assert added.code == 0, added.err
    outputs = [added.out, added.err]
    for fmt in ("jsonl", "json", "csv"):
        exported = lore("export", "--format", fmt, "--json", env=env, cwd=store)
        assert exported.code == 0, exported.err
        outputs.append(exported.out)
    for args in (["learnings", "--json"], ["drafts", "--json"], ["actions", "--json"], ["check"]):
        done = lore(*args, env=env, cwd=store)
        outputs += [done.out, done.err]
    names = [str(p.relative_to(store)) for p in every_file(store)]
    assert not leaks("\n".join(names)), names
    assert not leaks("\n".join(outputs))
    for path in every_file(store):  # shards, caches, exports, the learning itself
        assert not leaks(path.read_text(encoding="utf-8", errors="replace")), path
    learning_id = json.loads(added.out)["id"]
    assert re.fullmatch(r"[a-z0-9-]+", learning_id) and "redacted" in learning_id


def test_learn_new_never_names_a_file_after_a_secret(store: Path) -> None:
    done = lore(
        "learn", "new", "--title", f"{TOKEN} and {CARD}", "--json", env=clean_env(store), cwd=store
    )
    assert done.code == 0, done.err
    assert not leaks(done.out)
    assert not leaks("\n".join(p.name for p in every_file(store)))


@pytest.mark.parametrize(
    "name",
    [
        TOKEN,  # as written
        f"2026-11-27-rca-{TOKEN.lower().replace('_', '-')}-ff4929be",  # lower-cased and slugged
        "2026-11-27-rca-card-4111-1111-1111-1111-ff4929be",
    ],
)
@pytest.mark.parametrize("folder", ["learnings", "learnings/drafts"])
def test_check_reports_a_secret_looking_file_name(store: Path, name: str, folder: str) -> None:
    path = store / folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    status = "draft" if folder.endswith("drafts") else "published"
    path.write_text(
        f"---\nid: {name}\ntitle: x\nkind: lesson\nstatus: {status}\n"
        "created: 2026-11-27\n---\n## Problem\nx\n"
    )
    done = lore("check", env=clean_env(store), cwd=store)
    assert done.code == 1, (done.out, done.err)
    found = [
        line
        for line in (done.out + done.err).splitlines()
        if "file name looks like a secret" in line
    ]
    assert len(found) == 1 and found[0].startswith(f"{folder}/[REDACTED:"), done.out + done.err
    assert not leaks(done.out + done.err)


def test_check_passes_ordinary_names(store: Path) -> None:
    for title in (
        "Password reset token expires early",
        "API key rotation on deploy",
        "Call 5 retries before 2026-11-27",
    ):
        assert lore("learn", "new", "--title", title, env=clean_env(store), cwd=store).code == 0
    done = lore("check", env=clean_env(store), cwd=store)
    assert done.code == 0, done.out + done.err
