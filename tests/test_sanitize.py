"""The sanitizer: what is redacted (and how much of the text survives), what is left alone,
JSON safety, truncation, and agreement between sanitize() and findings().

Fake secrets are assembled at run time from seeded random characters, so this file holds no
string that a secret scanner would (rightly) flag."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import os
import random
import string
import subprocess
import sys
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorebook.redact import patterns as P
from lorebook.redact.sanitize import CYCLE, REDACTED, TOO_DEEP, Finding, Sanitizer, marker
from lorebook.redact.scan import has_keyword

S = Sanitizer()
ALNUM = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    """A deterministic random-looking string (a stand-in for a real key)."""
    r = random.Random(f"{n}-{seed}-{alphabet}")
    while True:
        out = "".join(r.choice(alphabet) for _ in range(n))
        if alphabet != ALNUM or (any(c.isdigit() for c in out) and any(c.isupper() for c in out)):
            return out


GHP = "ghp_" + rnd(36)
B64 = string.ascii_letters + string.digits + "+/"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ."
    + rnd(43, ALNUM + "-_", 1)
)
PEM_BODY = "\n".join(rnd(64, B64, i) for i in range(3))
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"

# (prefix, secret, suffix, kind): prefix + secret + suffix must come out as
# prefix + marker(kind) + suffix, with exactly one redaction.
POSITIVES: list[tuple[str, str, str, str]] = [
    ("deploy failed: token ", GHP, " rejected", "github_token"),
    ("using ", "gho_" + rnd(36, seed=1), " for oauth", "github_token"),
    ("pat ", "github_pat_" + rnd(22, seed=2) + "_" + rnd(59, seed=3), " ok", "github_token"),
    (
        "key id ",
        "AKIA" + rnd(16, string.ascii_uppercase + string.digits, 4),
        " in env",
        "aws_access_key",
    ),
    ("role ", "ASIA" + rnd(16, string.ascii_uppercase + string.digits, 5), ".", "aws_access_key"),
    ("aws_secret_access_key = ", rnd(40, B64, 6), "\nregion = eu", "aws_secret_key"),
    ("gitlab ", "glpat-" + rnd(20, seed=7), " expired", "gitlab_token"),
    (
        "slack ",
        "xoxb-"
        + rnd(12, string.digits, 8)
        + "-"
        + rnd(13, string.digits, 9)
        + "-"
        + rnd(24, seed=10),
        " posted",
        "slack_token",
    ),
    (
        "post to https://hooks.slack.com/services/",
        "T0"
        + rnd(8, string.ascii_uppercase, 11)
        + "/B0"
        + rnd(8, string.ascii_uppercase, 12)
        + "/"
        + rnd(24, seed=13),
        " now",
        "slack_webhook",
    ),
    ("stripe ", "sk_live_" + rnd(24, seed=14), " charged", "stripe_key"),
    ("stripe ", "sk_test_" + rnd(24, seed=15), " charged", "stripe_key"),
    ("restricted ", "rk_live_" + rnd(24, seed=16), " set", "stripe_key"),
    ("openai ", "sk-" + rnd(48, seed=17), " quota", "openai_key"),
    ("openai ", "sk-proj-" + rnd(40, ALNUM + "-_", 18) + "A1", " quota", "openai_key"),
    ("claude ", "sk-ant-api03-" + rnd(40, ALNUM + "-_", 19), " quota", "anthropic_key"),
    ("maps ", "AIza" + rnd(35, seed=20), " loaded", "google_api_key"),
    ("npm ", "npm_" + rnd(36, seed=21), " publish", "npm_token"),
    ("hub ", "hf_" + rnd(34, seed=22), " pull", "huggingface_token"),
    ("mail ", "SG." + rnd(22, seed=23) + "." + rnd(43, seed=24), " sent", "sendgrid_key"),
    ("session ", JWT, " expired", "jwt"),
    ("found ", PEM, " in repo", "private_key"),
    ("dump: ", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rnd(70, B64, 25), "", "private_key"),
    ("postgres://admin:", "hunter2", "@db:5432/app", "url_password"),
    ("redis://:", "s3cretpw", "@cache:6379/0", "url_password"),
    ("clone https://bob:", "p4ss-w0rd", "@git.example.com/org/repo.git", "url_password"),
    ("curl -H 'Authorization: Bearer ", rnd(32, seed=26), "' https://api", "bearer_token"),
    ("Authorization: Basic ", "dXNlcjpwYXNzd29yZA==", "", "authorization"),
    ("sent Bearer ", rnd(28, ALNUM + "._-", 27) + "9", " to the api", "bearer_token"),
    ("API_KEY=", "abc123", " make deploy", "secret_assignment"),
    ("DB_PASSWORD=", "hunter2", " ./run", "secret_assignment"),
    ("export GITHUB_TOKEN=", "t0ken-value", " && gh pr list", "secret_assignment"),
    ("set X_SECRET=", "xyzzy", "\r\ncall build.bat", "secret_assignment"),
    ("mytool --password=", "hunter2", " --verbose", "secret_assignment"),
    ("mytool --password ", "hunter2", " --verbose", "secret_assignment"),
    ("gh --token ", "t0ken-value", " api", "secret_assignment"),
    ("svc --api-key '", "k3y value", "' start", "secret_assignment"),
    ('{"password": "', "hunter2", '", "user": "bob"}', "secret_assignment"),
    ('{"client_secret":"', "abc.def", '"}', "secret_assignment"),
    ('log {\\"password\\": \\"', "hunter2", '\\"} end', "secret_assignment"),
    ("db:\n  password: ", "correct horse battery", "\n  user: bob", "secret_assignment"),
    ("blob ", rnd(32, seed=28), " here", "high_entropy"),
    ("b64 ", rnd(40, B64, 29) + "==", " end", "high_entropy"),
    ("mail ", "jane.doe@example.com", " today", "email"),
    ("from: ", "ops+alerts@mail.example.co.uk", "", "email"),
    ("call ", "+44 20 7946 0958", " now", "phone"),
    ("call ", "(415) 555-0132", " now", "phone"),
    ("call ", "415-555-0132", ".", "phone"),
    ("call ", "+1 415 555 0132", " now", "phone"),
    ("card ", "4111 1111 1111 1111", " ok", "credit_card"),
    ("card ", "4111-1111-1111-1111", " ok", "credit_card"),
    ("card ", "5500000000000004", " ok", "credit_card"),
    ("amex ", "378282246310005", " ok", "credit_card"),
    ("ssn ", "123-45-6789", " on file", "ssn"),
]

NEGATIVES: list[str] = [
    "9fceb02d0ae598e95dc970b74767f19372d61af8",  # full commit hash
    "commit 9fceb02 fixed the writer; see 1a2b3c4d5e6f",  # short hashes
    "123e4567-e89b-12d3-a456-426614174000",  # UUID
    "image@sha256:" + rnd(64, "0123456789abcdef", 30),  # digest
    "d41d8cd98f00b204e9800998ecf8427e",  # md5
    rnd(64, "0123456789abcdef", 31),  # sha256
    "01JD3Q7K8ZR4T2W5Y6X9ABCDEF",  # ULID
    "served on localhost:5000 and 127.0.0.1:8080",
    "count 12345678 retries 3 port 65535",
    "1.2.3 v2.0.0-rc.1 0.10.0.dev4",
    "2024-11-22T07:07:00.123456Z",
    "2024-11-22 07:07:00+01:00 and 22/11/2024",
    "epoch 1732259220000 and 1732259220000000000 ns",
    "src/lorebook/log/writer.py",
    "/usr/lib/python3.11/site-packages/lorebook/__init__.py",
    "C:\\Users\\bob\\AppData\\Local\\Temp\\lore-cache",
    "internationalization supercalifragilisticexpialidocious TestSessionResumeAfterDisconnect",
    "test_sanitize_handles_cycles_in_nested_lists_2 CamelCaseIdentifierV2Final",
    "https://github.com/org/repo/pull/12",
    "https://example.com/search?q=lorebook&page=2",
    ">=1.2,<2.0 ^3.1.4 ~=2.2 pkg==1.2.3",
    "lorebook.redact.sanitize.Sanitizer.redact_text",
    "max_tokens=4096 tokens: 512 token_count: 12",
    "git@github.com:org/repo.git and ssh://git@github.com/org/repo",
    "see 4155550132 or 4111 1111 1111 1112",  # no separators / Luhn fails
    "ids 000-12-3456 666-12-3456 900-12-3456",  # invalid SSN areas
    "192.168.100.200",
    "the password is required, the token expired",
    "Bearer authentication is used",
    "--password-file /run/secrets/db --token-env GH_TOKEN",
    "PWD=/home/dev/project",
    "export PATH=/usr/bin:$PATH API_KEY=$API_KEY TOKEN=${{ secrets.GH_TOKEN }}",
    'password: "" token: null',
    "refs/heads/feature/LORE-1234-add-sanitizer-v2",
    "build/lib.linux-x86_64-cpython-311",
    "sk-learn-compatible-api-v2",
    "integrity sha512-" + rnd(86, B64, 32) + "==",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
]

SECRET_KEYS = [
    "api_key",
    "apiKey",
    "ApiKey",
    "APIKey",
    "X-Api-Key",
    "x-api-key",
    "API_KEY",
    "apikey",
    "token",
    "access_token",
    "accessToken",
    "refresh_token",
    "id_token",
    "auth_token",
    "GITHUB_TOKEN",
    "secret",
    "client_secret",
    "clientSecret",
    "secret_key",
    "password",
    "DB_PASSWORD",
    "passwd",
    "pwd",
    "passphrase",
    "credentials",
    "credential",
    "private_key",
    "privateKey",
    "authorization",
    "Authorization",
    "cookie",
    "set-cookie",
    "Set-Cookie",
    "session_token",
    "sessionid",
    "dsn",
    "connection_string",
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "access_key",
    "signing_key",
    "encryption_key",
    "my api key",
]
PLAIN_KEYS = [
    "key",
    "primary_key",
    "keyboard",
    "sort_key",
    "monkey",
    "tokens",
    "max_tokens",
    "token_count",
    "num_tokens",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "tokens_used",
    "input_tokens",
    "output_tokens",
    "token_limit",
    "tokenizer",
    "author",
    "session",
    "public_key",
    "password_file",
    "secret_name",
    "keys",
]


def _check_json(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert json.loads(text) == value
    assert "[UNSERIALIZABLE" not in text  # the catch-all fallbacks must not hide a bug


# -- positives -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("prefix", "secret", "suffix", "kind"),
    POSITIVES,
    ids=[f"{i}-{p[3]}" for i, p in enumerate(POSITIVES)],
)
def test_secret_in_text_is_replaced_and_the_rest_kept(
    prefix: str, secret: str, suffix: str, kind: str
) -> None:
    text = prefix + secret + suffix
    out, count = S.sanitize(text)
    assert out == prefix + marker(kind) + suffix
    assert count == 1
    assert secret not in out
    assert S.redact_text(text) == (out, 1)
    assert S.findings(text, "error") == [Finding("error", kind)]


@pytest.mark.parametrize(
    ("prefix", "secret", "suffix", "kind"),
    POSITIVES,
    ids=[f"{i}-{p[3]}" for i, p in enumerate(POSITIVES)],
)
def test_secret_is_found_nested_in_lists_and_dicts(
    prefix: str, secret: str, suffix: str, kind: str
) -> None:
    value = {"context": {"cmd": ["run", "-v", prefix + secret + suffix], "n": 3}}
    out, count = S.sanitize(value)
    assert count == 1
    assert out["context"]["cmd"][2] == prefix + marker(kind) + suffix
    assert S.findings(value) == [Finding("context.cmd[2]", kind)]
    assert secret not in repr(S.findings(value))


def test_several_secrets_in_one_string_count_each() -> None:
    text = f"a={GHP} mail bob@example.com and jane@example.org, key AKIA{'Z' * 15}7"
    out, count = S.sanitize(text)
    assert count == 4
    assert out == (
        "a=[REDACTED:github_token] mail [REDACTED:email] and [REDACTED:email], "
        "key [REDACTED:aws_access_key]"
    )


def test_overlapping_rules_give_one_marker() -> None:
    # a GitHub token that is also the value of a secret-named assignment
    out, count = S.sanitize(f"export GITHUB_TOKEN={GHP}")
    assert (out, count) == ("export GITHUB_TOKEN=[REDACTED:github_token]", 1)
    # a DSN: the whole value goes, the URL password inside does not count twice
    out, count = S.sanitize("DSN=postgres://u:pw@db/app")
    assert count == 1
    assert "pw" not in out.replace("postgres", "")


# -- negatives -------------------------------------------------------------------------------
@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert S.sanitize(text) == (text, 0)
    assert S.findings({"ctx": [text]}) == []


# -- secret-named keys -----------------------------------------------------------------------
@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_named_key_hides_the_whole_value(key: str) -> None:
    assert S.sanitize({key: "hunter2-value", "other": "kept"}) == (
        {key: REDACTED, "other": "kept"},
        1,
    )
    assert S.sanitize({key: {"nested": ["a", "b"]}}) == ({key: REDACTED}, 1)
    assert S.findings({"env": {key: "x1"}}) == [Finding(f"env.{key}", "secret_key_name")]


def test_the_keyword_triage_covers_every_secret_name() -> None:
    # strings skip the assignment rules unless they hold one of these words: the triage must
    # never be narrower than the name rules
    for key in SECRET_KEYS:
        assert has_keyword(key), key
    for word in P.SECRET_WORDS | P.SECRET_NAMES:
        assert has_keyword(word), word


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_other_keys_are_not_secret(key: str) -> None:
    value = {key: "hunter2 value", "n": {key: ["a", 1]}}
    assert S.sanitize(value) == (value, 0)


@pytest.mark.parametrize("number", [0, 4096, 1.5, True, False, None])
def test_numbers_under_secret_keys_are_not_secrets(number: Any) -> None:
    value = {"token": number, "password": number, "max_tokens": number, "api_key": number}
    assert S.sanitize(value) == (value, 0)


def test_empty_and_already_redacted_values_are_left_alone() -> None:
    value = {"token": "", "secret": REDACTED, "password": marker("email"), "credentials": {}}
    assert S.sanitize(value) == (value, 0)


def test_pwd_holding_a_directory_is_not_a_password() -> None:
    assert S.sanitize({"PWD": "/home/dev/project", "OLDPWD": "~/src"}) == (
        {"PWD": "/home/dev/project", "OLDPWD": "~/src"},
        0,
    )
    assert S.sanitize({"pwd": "hunter2"}) == ({"pwd": REDACTED}, 1)


def test_lorebook_session_ids_are_not_session_secrets() -> None:
    ulid = "01JD3Q7K8ZR4T2W5Y6X9ABCDEF"
    value = {"session_id": ulid, "sessionid": "q8x7k2m9p4w1"}
    assert S.sanitize(value) == ({"session_id": ulid, "sessionid": REDACTED}, 1)
    assert S.sanitize(f"resumed session_id: {ulid}") == (f"resumed session_id: {ulid}", 0)
    assert S.sanitize("sessionid=q8x7k2m9p4w1") == ("sessionid=[REDACTED:secret_assignment]", 1)


def test_nested_recursion_and_counts() -> None:
    value = {
        "env": {"API_KEY": "x1", "PATH": "/usr/bin", "DB_PASSWORD": "y2"},
        "steps": [
            {"cmd": f"curl -H 'Authorization: Bearer {rnd(30, seed=40)}'"},
            {"token": "z3"},
            ("tuple", "mail a@example.com"),
        ],
        "count": 3,
    }
    out, count = S.sanitize(value)
    assert count == 5
    assert out == {
        "env": {"API_KEY": REDACTED, "PATH": "/usr/bin", "DB_PASSWORD": REDACTED},
        "steps": [
            {"cmd": "curl -H 'Authorization: Bearer [REDACTED:bearer_token]'"},
            {"token": REDACTED},
            ["tuple", "mail [REDACTED:email]"],
        ],
        "count": 3,
    }
    found = S.findings(value, "context")
    assert len(found) == count
    assert {f.path for f in found} == {
        "context.env.API_KEY",
        "context.env.DB_PASSWORD",
        "context.steps[0].cmd",
        "context.steps[1].token",
        "context.steps[2][1]",
    }


def test_path_names_the_key_a_value_sits_under() -> None:
    assert S.sanitize("hunter2", "context.env.API_KEY") == (REDACTED, 1)
    assert S.findings("hunter2", "token") == [Finding("token", "secret_key_name")]
    assert S.sanitize("hello", "error") == ("hello", 0)
    assert S.sanitize("hunter2", "context.cmd[2]") == ("hunter2", 0)
    assert S.sanitize(4096, "max_tokens") == (4096, 0)


def test_secrets_inside_keys_are_redacted_too() -> None:
    out, count = S.sanitize({GHP: "owner", "ok": 1})
    assert (out, count) == ({marker("github_token"): "owner", "ok": 1}, 1)
    assert S.findings({GHP: "owner"}) == [Finding(marker("github_token"), "github_token")]


def test_extra_secret_keys_and_patterns() -> None:
    s = Sanitizer(
        extra_secret_keys=["vault_pass"],
        extra_patterns={"ticket": r"ACME-\d{6}", "pin": r"pin (\d{4})"},
    )
    assert s.sanitize({"MY_VAULT_PASS": "x", "vault": "y"}) == (
        {"MY_VAULT_PASS": REDACTED, "vault": "y"},
        1,
    )
    assert s.sanitize("export VAULT_PASS=abc now") == (
        "export VAULT_PASS=[REDACTED:secret_assignment] now",
        1,
    )
    assert s.sanitize("see ACME-123456 and pin 1234.") == (
        "see [REDACTED:ticket] and pin [REDACTED:pin].",
        2,
    )
    assert S.sanitize("see ACME-123456") == ("see ACME-123456", 0)  # instances are independent


# -- findings agree with sanitize --------------------------------------------------------------
def test_findings_agree_with_sanitize_on_a_mixed_record() -> None:
    record = {
        "summary": f"pushed with {GHP}",
        "context": {
            "env": {"API_KEY": "abc"},
            "cmd": ["deploy", "--token", "t0k3n"],
            "users": ["jane@example.com", "415-555-0132"],
            "n": 7,
        },
        "error": PEM,
    }
    out, count = S.sanitize(record)
    found = S.findings(record)
    assert len(found) == count == 5
    assert Finding("context.env.API_KEY", "secret_key_name") in found
    assert Finding("context.cmd[2]", "secret_assignment") not in found  # a bare value: unknown
    text = repr(found)
    for secret in (GHP, "abc", "t0k3n", "jane@example.com", "415-555-0132", PEM_BODY[:20]):
        assert secret not in text
    assert S.findings(out) == []


# -- truncation, depth, cycles, types ---------------------------------------------------------
def test_long_strings_are_cut_with_a_visible_marker() -> None:
    s = Sanitizer(max_value_chars=50)
    out, count = s.sanitize("x" * 120)
    assert (out, count) == ("x" * 50 + "…[TRUNCATED 70 chars]", 0)
    assert s.sanitize(out) == (out, 0)
    assert s.sanitize("y" * 50) == ("y" * 50, 0)


def test_truncation_never_cuts_a_marker() -> None:
    s = Sanitizer(max_value_chars=50)
    text = "a" * 40 + " " + GHP + " tail" * 20
    out, count = s.sanitize(text)
    redacted = "a" * 40 + " " + marker("github_token") + " tail" * 20
    assert count == 1
    assert out == "a" * 40 + " " + f"…[TRUNCATED {len(redacted) - 41} chars]"
    assert GHP[:8] not in out
    assert s.sanitize(out) == (out, 0)


def test_huge_strings_are_scanned_only_as_far_as_needed() -> None:
    s = Sanitizer(max_value_chars=100)
    text = f"token {GHP} " + "lorem ipsum " * 100_000
    out, count = s.sanitize(text)
    assert count == 1
    assert out.startswith(f"token {marker('github_token')} lorem")
    assert out.endswith(f"…[TRUNCATED {len(text) - 40 - 100 + len(marker('github_token'))} chars]")


def test_nesting_deeper_than_max_depth_is_cut() -> None:
    deep: Any = 1
    for _ in range(10):
        deep = {"a": deep}
    # the cut counts: what was not looked into may hold a secret (see test_redact_deep.py)
    assert Sanitizer(max_depth=3).sanitize(deep) == ({"a": {"a": {"a": TOO_DEEP}}}, 1)
    very_deep: Any = []
    for _ in range(5000):
        very_deep = [very_deep]
    out, _ = S.sanitize(very_deep)  # the default limit keeps recursion shallow
    _check_json(out)
    out, _ = Sanitizer(max_depth=10**6).sanitize(very_deep)  # never raises, even past the stack
    _check_json(out)


def test_cycles_are_replaced_and_shared_values_are_not() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert S.sanitize(loop) == ([1, CYCLE], 0)
    d: dict[str, Any] = {"name": "x"}
    d["self"] = d
    assert S.sanitize(d) == ({"name": "x", "self": CYCLE}, 0)
    shared = ["s"]
    assert S.sanitize({"a": shared, "b": shared}) == ({"a": ["s"], "b": ["s"]}, 0)


class Color(enum.Enum):
    RED = "red"


class Weird:
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_non_json_types_are_converted() -> None:
    value = {
        "bytes": b"abc\xff",
        "set": {3, 1, 2},
        "tuple": (1, "a"),
        "dt": dt.datetime(2024, 1, 2, 3),
        "date": dt.date(2024, 1, 2),
        "path": Path("/tmp/x"),
        "pure": PurePosixPath("a/b"),
        "enum": Color.RED,
        "dec": Decimal("1.50"),
        "nan": math.nan,
        "inf": math.inf,
        "ninf": -math.inf,
        "surrogate": "a\ud800b",
        "huge": 10**5000,
        "weird": Weird(),
        1: "int key",
        None: "none key",
        2.5: "float key",
        (1, 2): "tuple key",
    }
    out, count = S.sanitize(value)
    assert count == 0
    assert out["bytes"] == "abc\ufffd"
    assert out["set"] == [1, 2, 3]
    assert out["tuple"] == [1, "a"]
    assert out["dt"] == "2024-01-02T03:00:00"
    assert out["date"] == "2024-01-02"
    assert out["path"] == "/tmp/x"
    assert out["pure"] == "a/b"
    assert out["enum"] == "red"
    assert out["dec"] == "1.50"
    assert (out["nan"], out["inf"], out["ninf"]) == ("NaN", "Infinity", "-Infinity")
    assert out["surrogate"] == "a\ufffdb"
    assert out["huge"] == "[TRUNCATED: integer too large]"
    assert out.pop("weird") == "[UNSERIALIZABLE Weird]"
    assert {"1", "null", "2.5", "(1, 2)"} <= set(out)
    _check_json(out)
    assert S.sanitize({True: 1, False: math.nan}) == ({"true": 1, "false": "NaN"}, 0)


def test_input_is_not_mutated_and_output_is_a_copy() -> None:
    value = {"env": {"TOKEN": "x"}, "list": [1, 2]}
    out, _ = S.sanitize(value)
    assert value == {"env": {"TOKEN": "x"}, "list": [1, 2]}
    out["list"].append(3)
    assert value["list"] == [1, 2]


def test_findings_path_defaults_and_repeated_strings() -> None:
    s = Sanitizer()
    value = {"log": ["pytest -q --maxfail=3", f"--token {GHP}"] * 3}
    first = s.sanitize(value)
    assert first == s.sanitize(value)  # the per-instance caches change nothing
    assert first[1] == 3
    assert s.findings(value, None) == [  # type: ignore[arg-type]
        Finding(f"log[{i}]", "github_token") for i in (1, 3, 5)
    ]


def test_non_ascii_text_and_keys() -> None:
    value = {"clé\ud800": "écrit par jane@example.com — ok", "日本": "トークン ghp_" + rnd(36)}
    out, count = S.sanitize(value)
    assert count == 2
    assert out == {
        "clé\ufffd": "écrit par [REDACTED:email] — ok",
        "日本": "トークン [REDACTED:github_token]",
    }
    s = Sanitizer(max_value_chars=10)
    out, _ = s.sanitize("é" * 30)
    assert out == "é" * 10 + "…[TRUNCATED 20 chars]"
    assert s.sanitize(out) == (out, 0)


def test_import_is_light() -> None:
    """The append path imports this module: beyond what the writer loads anyway (re, json),
    it must bring in nothing but itself and its pattern table (no dataclasses/inspect,
    typing, importlib.metadata...)."""
    code = (
        "import sys, re, json, lorebook.log; before = set(sys.modules); "
        "import lorebook.redact.sanitize as s; s.Sanitizer().sanitize({'a': 'b', 'c': 'd e f'}); "
        "print(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    added = set(json.loads(done.stdout.replace("'", '"')))
    allowed = {
        "lorebook.redact",
        "lorebook.redact.sanitize",
        "lorebook.redact.patterns",
        "lorebook.redact.scan",
        "lorebook.redact.finders",
        "math",
        "collections.abc",
    }
    assert added <= allowed
    assert not added & {"dataclasses", "inspect", "typing"}


def test_finding_is_a_frozen_dataclass() -> None:
    import dataclasses

    from lorebook.redact import sanitize

    assert sanitize.Finding is Finding
    assert dataclasses.is_dataclass(Finding)
    f = Finding("context.env.API_KEY", "secret_key_name")
    assert dataclasses.asdict(f) == {"path": "context.env.API_KEY", "kind": "secret_key_name"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.kind = "x"  # type: ignore[misc]
    assert {f, Finding("context.env.API_KEY", "secret_key_name")} == {f}


# -- properties ------------------------------------------------------------------------------
TEXT = st.text(st.characters(codec=None), max_size=40) | st.text(
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(), max_size=10
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
)
JSONISH = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5),
    max_leaves=25,
)
WORDS = list(
    P.words(
        "alpha bravo charlie delta echo fix writer shard lock fsync rename agent "
        "session resume index cache config parser retry flaky test fixture render "
        "plan commit branch"
    )
)
SAFE_KEYS = st.sampled_from(
    [
        "files",
        "path",
        "status",
        "name",
        "message",
        "branch",
        "tool",
        "cwd",
        "notes",
        "count",
        "step",
        "kind",
        "outcome",
        "duration",
    ]
)
SAFE_TEXT = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(
        lambda w: "src/" + "/".join(w) + ".py"
    ),
    st.text("0123456789abcdef", min_size=7, max_size=12),
    st.dates().map(lambda d: d.isoformat()),
)
SAFE = st.recursive(
    SAFE_TEXT | st.integers(-1000, 10**6),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(SAFE_KEYS, children, max_size=4)
    ),
    max_leaves=20,
)
SECRETISH = st.sampled_from([p + s + x for p, s, x, _ in POSITIVES])
MIXED = st.recursive(
    SCALARS | SECRETISH | st.tuples(TEXT, SECRETISH, TEXT).map("".join),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(TEXT | st.sampled_from(SECRET_KEYS + PLAIN_KEYS), children, max_size=4)
    ),
    max_leaves=15,
)
# SAN_EXAMPLES=5000 for a deeper hunt; the default keeps the whole file at a few seconds
PROPS = settings(
    max_examples=int(os.environ.get("SAN_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROPS
@given(JSONISH)
def test_output_is_always_json_safe(value: Any) -> None:
    out, count = S.sanitize(value)
    assert count >= 0
    _check_json(out)
    assert len(S.findings(value)) == count


@PROPS
@given(SAFE)
def test_ordinary_data_passes_through_unchanged(value: Any) -> None:
    assert S.sanitize(value) == (value, 0)


@PROPS
@given(MIXED)
def test_sanitize_is_idempotent(value: Any) -> None:
    out, count = S.sanitize(value)
    _check_json(out)
    assert S.sanitize(out) == (out, 0)
    assert len(S.findings(value)) == count
    assert S.findings(out) == []


@PROPS
@given(st.lists(TEXT | SECRETISH, max_size=6).map(" ".join))
def test_redact_text_agrees_with_sanitize(text: str) -> None:
    out, count = S.redact_text(text)
    assert (out, count) == S.sanitize(text)
    assert S.redact_text(out) == (out, 0)


@PROPS
@given(st.lists(TEXT | SECRETISH, max_size=6).map(" ".join))
def test_truncated_output_is_idempotent_too(text: str) -> None:
    s = Sanitizer(max_value_chars=30)
    out, _ = s.sanitize(text)
    assert s.sanitize(out) == (out, 0)


GLUED_KEYS = [
    ("x-AKIAIOSFODNN7EXAMPLE", "x-", "aws_access_key"),
    ("x-ghp_" + "a" * 35 + "1", "x-", "github_token"),
    ("feature/x-ghp_" + "a" * 35 + "1", "feature/x-", "github_token"),
    ("foo-xoxb-123456789012-123456789012-" + "a" * 24, "foo-", "slack_token"),
    ("x-sk-ant-api03-" + "a" * 40, "x-", "anthropic_key"),
    ("path/to/npm_" + "A" * 36, "path/to/", "npm_token"),
]


@pytest.mark.parametrize(("text", "kept", "kind"), GLUED_KEYS)
def test_a_provider_key_glued_after_a_separator_is_redacted(
    text: str, kept: str, kind: str
) -> None:
    """A key behind `x-` or a path is no less a key: only the key goes, its prefix stays."""
    assert S.redact_text(text) == (f"{kept}[REDACTED:{kind}]", 1)
    note = {"note": f"see {text} now"}
    assert S.sanitize(note) == ({"note": f"see {kept}[REDACTED:{kind}] now"}, 1)


@pytest.mark.parametrize(
    "text",
    [
        "my-branch-name-is-long-enough",
        "src/app/sk-learn-compatible-v2",
        "refs/heads/feature-ghost-town-x",
        "x-ask-anything-anytime-now",
    ],
)
def test_names_with_a_provider_like_part_stay(text: str) -> None:
    assert S.redact_text(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("@bob mail alice@example.com", "alice@example.com"),  # a text that starts with "@"
        ("--token --password hunter2", "hunter2"),  # a secret flag right after another flag
        ("deploy --api-key --secret s3cr3tV4lue9", "s3cr3tV4lue9"),
    ],
)
def test_shapes_that_once_hid_a_secret_behind_another(text: str, secret: str) -> None:
    """A leading "@" stopped the email search, and a secret flag took the next flag as its
    value, so the next flag's secret was never judged: both leaked."""
    clean = Sanitizer().redact_text(text)[0]
    assert secret not in clean and "REDACTED" in clean, clean
