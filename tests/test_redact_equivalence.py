"""Redaction finds exactly what it found before its scan was made cheaper per candidate.

Today's rules and scan are compared with a frozen copy (tests/redact_reference/) on 20,000
seeded random texts: secrets of every kind (provider keys, glued keys, JWTs, keyed
assignments, flags, URL credentials, emails, PII, private keys, high-entropy runs) at random
offsets in hostile repetitive text ("sk-sk-…", "password=password=…") and in ordinary prose,
through both entry points (``redact_text``'s full scan and the cut-to-length path of
``sanitize``).  Fake secrets are assembled at run time from seeded random characters.

A second set is long: the hostile shapes of benchmarks/bench_redact.py at the lengths where
the scan takes its shortcuts (a stretch of 48 separators without a digit, separators denser
than one in 32 characters, token runs of thousands of characters, runs cut by "="), each
broken at random places by secrets, other shapes and runs of one character.
"""

from __future__ import annotations

import random
import string

import pytest

from lorebook.redact import scan
from redact_reference import scan as ref_scan

ALNUM = string.ascii_letters + string.digits
TOKEN_CHARS = ALNUM + "_-"

#: the hostile units of benchmarks/bench_redact.py and a few more
UNITS = [
    "sk-", "-sk-", "sk-a", "ghp_", "glpat-", "xoxb-", "sk_live_", "npm_", "hf_", "AIza",
    "AKIA", "x-AKIA", "aZ9+", "aZ9=", "password=", "password: ", 'password="', "token=",
    "Authorization: ", "--token ", "a=:", "-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----",
    "://a:b@", "a@", "a.b@", "4", "4 ", "1-", "(", "+1 ", "eyJ", "eyJabcde.", "Bearer ",
    "SG.", "hooks.slack.com/services/", "sk-ant-", "sk-proj-", "github_pat_", "gho_",
    "rk_test_", "xoxp-", "A", "a", "0", "-", "_", "/", "=", "a1", "Ab9", "sk-sk_", "hf_a",
]  # fmt: skip
PROSE = (
    "The RLS policy on `public.orders` blocked INSERT with the anon key; CI job #1042 failed "
    "at 2026-11-22T10:04:00Z in src/app/orders/handler_3.py:77. See https://example.com/a/b. "
    "Run `pytest -q tests/test_orders.py -k insert --maxfail=1` before pushing; version 2.3.1, "
    "commit 4f1c2ab. My password is required. "
)


def rand(r: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def secret(r: random.Random) -> str:
    """One fake secret (or near miss) of a random kind, some longer than any real key."""
    n = r.choice([5, 10, 16, 19, 20, 21, 24, 30, 35, 36, 40, 60, 120, 250, 254, 255, 256, 300])
    body = rand(r, n, r.choice([ALNUM, TOKEN_CHARS, string.ascii_lowercase, string.digits]))
    kinds = [
        lambda: r.choice(["AKIA", "ASIA", "AGPA"]) + rand(r, 16, string.ascii_uppercase + "0189"),
        lambda: r.choice(["ghp_", "gho_", "ghs_"]) + body,
        lambda: "github_pat_" + body,
        lambda: "glpat-" + body,
        lambda: r.choice(["xoxb-", "xoxp-"]) + body,
        lambda: r.choice(["sk_live_", "rk_test_"]) + body,
        lambda: "sk-ant-" + body,
        lambda: "sk-" + r.choice(["", "proj-", "admin-", "learn-"]) + body,
        lambda: "sk-" + "-".join(rand(r, 5, string.ascii_lowercase) for _ in range(4)),
        lambda: "AIza" + rand(r, 35, TOKEN_CHARS),
        lambda: "npm_" + rand(r, r.choice([35, 36, 37]), ALNUM),
        lambda: "hf_" + body,
        lambda: r.choice(["x-", "foo_", "a/", "b+", "sk-"]) + secret(r),
        lambda: "eyJ" + rand(r, 12, TOKEN_CHARS) + ".eyJ" + rand(r, 20, TOKEN_CHARS) + "." + body,
        lambda: r.choice(["password", "api_key", "TOKEN", "auth", "PWD", "session_id"])
        + r.choice(["=", ": ", '="', "='", ':"'])
        + body,
        lambda: "--" + r.choice(["token", "password", "maxfail"]) + r.choice([" ", "="]) + body,
        lambda: "https://user:" + rand(r, 12) + "@host.example.com/x",
        lambda: rand(r, 8, string.ascii_lowercase) + "@" + rand(r, 6, string.ascii_lowercase)
        + ".com",
        lambda: r.choice(
            ["4111 1111 1111 1111", "123-45-6789", "(555) 123-4567", "+44 20 7946 0958"]
        ),
        lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----",
        lambda: "Bearer " + body,
        lambda: "Authorization: Basic " + body,
        lambda: "SG." + rand(r, 22, TOKEN_CHARS) + "." + rand(r, 43, TOKEN_CHARS),
        lambda: "hooks.slack.com/services/" + body,
        lambda: "my password is " + body,
        lambda: body,
        lambda: rand(r, n, ALNUM + "+/") + "==",
    ]  # fmt: skip
    return r.choice(kinds)()


def filler(r: random.Random, size: int) -> str:
    """Hostile repetitive text (one unit, or two alternating) or ordinary prose."""
    pick = r.random()
    if pick < 0.2:
        return (PROSE * (size // len(PROSE) + 1))[:size]
    if pick < 0.3:
        return rand(r, size, r.choice([ALNUM, TOKEN_CHARS, ALNUM + "+/=", "sk-_ab1"]))
    unit = r.choice(UNITS)
    if pick < 0.45:
        unit += r.choice([*UNITS, rand(r, r.randint(1, 4), TOKEN_CHARS)])
    return (unit * (size // len(unit) + 1))[:size]


def text(r: random.Random) -> str:
    """Filler of 0..3000 characters with 0..4 secrets at random offsets."""
    s = filler(r, r.choice([0, 10, 60, 300, 1000, 3000]))
    for _ in range(r.randint(0, 4)):
        at = r.randint(0, len(s))
        sep = r.choice(["", "", " ", "\n", "-", "_", "/", "="])
        s = s[:at] + sep + secret(r) + sep + s[at:]
    if r.random() < 0.2:
        s += filler(r, r.choice([20, 300, 3000]))
    return s


@pytest.mark.parametrize("block", range(20))
def test_redaction_is_unchanged_on_random_hostile_and_ordinary_text(block: int) -> None:
    r = random.Random(f"redact-equivalence-{block}")
    new, old = scan.Redactor(), ref_scan.Redactor()
    new_keyed = scan.Redactor(extra_secret_keys=["vault_pass"], max_value_chars=200)
    old_keyed = ref_scan.Redactor(extra_secret_keys=["vault_pass"], max_value_chars=200)
    for case in range(1000):
        s = text(r)
        b = s.encode()
        where = f"block {block} case {case}: {s[:120]!r}"
        assert new._redact(s, b, scan.F_ALL) == old._redact(s, b, ref_scan.F_ALL), where
        assert new._text(s, None, None) == old._text(s, None, None), where
        assert new_keyed._text(s, None, None) == old_keyed._text(s, None, None), where


#: shapes whose long runs take the scan's shortcuts (see the module docstring)
LONG_SHAPES = [
    *UNITS, "(((4", "    4", "4-", "555) ", ".", "00", "(" * 46 + "4",
    'password="x', 'key: \\"', "d_s_n=", "co_nn=", "a=:b", "x@y.z", "://u:pw@", "Bearer x", "aZ9+/",
    "sk-proj-", "a-", "ab-", "passwd is ", "token: ", "api_key=", "\\", "\\\"", '"', "'",
]  # fmt: skip
BREAKS = [
    *"ABCXYZabcxyz0123456789-_+/=. :@\n\"'\\(", "sk-", "password=", "a@b.co", "d_s_n=",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123", "4111 1111 1111 1111", "(555) 123-4567",
    "Bearer abcdefghijk", "eyJ", '\\"', "token=\\\"", "My password is ",
]  # fmt: skip


def long_text(r: random.Random) -> str:
    """A shape (or two alternating) repeated to 1-14 KB, broken at 0..20 random places."""
    unit = r.choice(LONG_SHAPES)
    if r.random() < 0.3:
        unit += r.choice(LONG_SHAPES)
    n = r.choice([1500, 5000, 14000])
    s = (unit * (n // len(unit) + 1))[:n]
    for _ in range(r.choice([0, 1, 2, 5, 20])):
        at = r.randint(0, len(s))
        piece = secret(r) if r.random() < 0.3 else r.choice(BREAKS)
        s = s[:at] + piece * r.choice([1, 1, 1, 2, 30, 300]) + s[at:]
    return s


@pytest.mark.parametrize("block", range(8))
def test_redaction_is_unchanged_on_long_hostile_text(block: int) -> None:
    r = random.Random(f"redact-equivalence-long-{block}")
    new, old = scan.Redactor(), ref_scan.Redactor()
    new_keyed = scan.Redactor(extra_secret_keys=["vault_pass", "myThing"])
    old_keyed = ref_scan.Redactor(extra_secret_keys=["vault_pass", "myThing"])
    for case in range(150):
        s = long_text(r)
        b = s.encode()
        where = f"block {block} case {case}: {s[:120]!r}"
        assert new._redact(s, b, scan.F_ALL) == old._redact(s, b, ref_scan.F_ALL), where
        assert new_keyed._redact(s, b, scan.F_ALL) == old_keyed._redact(s, b, ref_scan.F_ALL), where
        assert new._text(s, None, None) == old._text(s, None, None), where
