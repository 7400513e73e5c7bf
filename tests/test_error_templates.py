"""lorebook's own words in an error are a template; only the values in it are redacted.

`LoreError(template, *values)` keeps lorebook's words out of redaction (issue 23, case 6: a key
named `passwd` followed by a colon was read as a password assignment, and the rest of the line
was replaced). The rule only holds if every raise site uses it, so it is checked over the
source, as tests/test_layers.py checks the layers: no LoreError-family constructor receives a
message built with an f-string, `.format` or `%`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import clean_env, lore
from lorebook import LoreError, Sanitizer, UsageError, redact_message
from lorebook.notices import Notice, warning_line

SRC = Path(__file__).resolve().parent.parent / "src" / "lorebook"
GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

# Classes whose constructor takes something else first: the index of the argument that is
# lorebook's own words (None: every argument is a value). A new class with its own
# `__init__` must be listed here, so that the rule cannot be dodged by a new signature.
MESSAGE_ARG: dict[str, int | None] = {
    "LearningFormatError": 2,  # (where, line, reason, *values)
    "IndexReadOnly": None,  # (what, path, reason): all values
}


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in sorted(SRC.rglob("*.py"))}


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def error_family(trees: dict[Path, ast.Module]) -> dict[str, ast.ClassDef]:
    """Every class in the source that derives from LoreError, however indirectly."""
    classes = [n for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef)]
    family = {c.name: c for c in classes if c.name == "LoreError"}
    grown = True
    while grown:
        grown = False
        for cls in classes:
            if cls.name not in family and any(_base_name(b) in family for b in cls.bases):
                family[cls.name] = cls
                grown = True
    return family


def built(message: ast.expr) -> ast.expr | None:
    """The part of `message` that builds text at run time (f-string, .format, %), if any."""
    for node in ast.walk(message):
        if isinstance(node, ast.JoinedStr) and any(
            isinstance(v, ast.FormattedValue) for v in node.values
        ):
            return node
        if isinstance(node, ast.Call) and _base_name(node.func) == "format":
            return node
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return node
    return None


def violations() -> list[str]:
    trees = _trees()
    family = error_family(trees)
    found = []
    for path, tree in trees.items():
        where = path.relative_to(SRC.parent)
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            if cls.name not in family:
                continue
            for call in ast.walk(cls):  # `super().__init__(message, ...)` in the family itself
                if (
                    isinstance(call, ast.Call)
                    and _base_name(call.func) == "__init__"
                    and call.args
                    and built(call.args[0]) is not None
                ):
                    found.append(f"{where}:{call.lineno}: {cls.name}: super().__init__")
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            name = _base_name(call.func)
            if name == "warn" and call.args and built(call.args[0]) is not None:
                found.append(f"{where}:{call.lineno}: warn({ast.unparse(call.args[0])})")
                continue
            if name not in family:
                continue
            index = MESSAGE_ARG.get(name, 0)
            if index is None or len(call.args) <= index:
                continue
            if built(call.args[index]) is not None:
                found.append(f"{where}:{call.lineno}: {name}({ast.unparse(call.args[index])})")
    return found


def test_no_error_message_is_built_with_an_f_string() -> None:
    assert violations() == [], (
        "pass the values as arguments: LoreError('cannot read {}: {}', path, reason), "
        "warn(Notice('skipped {}', problem)), so that only they are redacted:\n"
        + "\n".join(violations())
    )


def test_a_warning_keeps_its_own_words_and_loses_the_secret_in_its_values() -> None:
    """A warning is a `Notice`: a string everywhere, a template to the printers."""
    notice = Notice("passwd: {} could not be read; skipped", f"notes-{GHP}.md")
    assert isinstance(notice, str) and GHP in notice  # the text, for lists and JSON
    line = warning_line(notice)
    assert line.startswith("lore: warning: passwd: ") and line.endswith("; skipped"), line
    assert GHP not in line and "REDACTED" in line, line
    whole = warning_line(str(notice))  # the same text without its template: mangled
    assert "could not be read" not in whole or GHP not in whole


def test_every_error_class_with_its_own_constructor_names_its_message_argument() -> None:
    family = error_family(_trees())
    own_init = {
        name
        for name, cls in family.items()
        if name != "LoreError"
        and any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in cls.body)
    }
    assert own_init == set(MESSAGE_ARG), own_init ^ set(MESSAGE_ARG)


def test_the_check_catches_every_way_of_building_a_message() -> None:
    for source in (
        'LoreError(f"{path}: cannot be read")',
        'UsageError("{}: bad".format(path))',
        'UsageError("%s: bad" % path)',
        'LoreError("x" if a else f"{b}")',
    ):
        message = ast.parse(source, mode="eval").body.args[0]  # type: ignore[attr-defined]
        assert built(message) is not None, source
    for source in ('LoreError("{}: bad", f"{a}:{b}")', 'UsageError("{!r}: is " + WORDS, x)'):
        message = ast.parse(source, mode="eval").body.args[0]  # type: ignore[attr-defined]
        assert built(message) is None, source


# -- what a user sees ------------------------------------------------------------------------------
def test_a_message_whose_own_words_look_like_an_assignment_is_printed_intact(store: Path) -> None:
    env = clean_env(store)
    run = lore("report", "daily", "--date", "passwd", env=env)
    assert run.code == 1 and "REDACTED" not in run.err, run.err
    assert run.err.strip() == "lore: error: --date 'passwd': expected a date like 2026-11-21"
    run = lore("report", "weekly", "--week", "passwd", env=env)
    assert "--week 'passwd': expected an ISO week like 2026-W47" in run.err, run.err
    run = lore("expertise", "show", "passwd", env=env)
    assert run.code == 1 and "REDACTED" not in run.err, run.err
    assert "unknown domain 'passwd': use one of database, api" in run.err, run.err
    # a secret typed into the same message is still redacted, and the words around it kept
    run = lore("report", "daily", "--date", f"passwd {GHP}", env=env)
    assert run.code == 1 and GHP not in run.err, run.err
    assert "[REDACTED:github_token]" in run.err, run.err
    assert run.err.rstrip().endswith("': expected a date like 2026-11-21"), run.err


def test_an_error_inside_an_error_keeps_its_own_words() -> None:
    inner = UsageError("--since {!r}: expected a duration like 7d", "passwd")
    outer = LoreError("{}; {} was left as it was", inner, f"expertise/{GHP}.yaml")
    shown = redact_message(outer, Sanitizer())
    assert GHP not in shown and "[REDACTED:" in shown, shown
    assert shown.startswith("--since 'passwd': expected a duration like 7d; expertise/"), shown
    assert shown.endswith(".yaml was left as it was"), shown
