"""`lore expertise classify|learn|validate|improve|history|list|show|prompt`."""

from __future__ import annotations

import click

from ... import Lorebook, UsageError
from ...render import expertise as render
from ..output import ProblemPrinter, to_json, warning_line
from .common import json_option, pass_book

no_commit_option = click.option(
    "--no-commit", is_flag=True, help="Write the file but do not commit it."
)


def _warn(book: Lorebook, result: dict[str, object]) -> None:
    for warning in result.get("warnings") or []:  # type: ignore[attr-defined]
        click.echo(warning_line(warning, book.sanitizer), err=True)


@click.group("expertise")
def expertise() -> None:
    """Per-domain expertise files in .expertise/<domain>.yaml that learn from the log.

    \b
    Example:
      lore expertise classify "add an index to the orders table"
      lore expertise learn --session 01JD...
      lore expertise prompt --task "fix the login form"
    """


@expertise.command("list")
@json_option
@pass_book
def list_(book: Lorebook, as_json: bool) -> None:
    """Every domain with its file's size, entry counts and last validation.

    \b
    Example:
      lore expertise list --json
    """
    rows = book.expertise.list_domains()
    for row in rows:
        if row.get("problem"):
            click.echo(f"{row['path']}: {row['problem']}", err=True)
    click.echo(to_json(rows) if as_json else render.table(rows))


@expertise.command("show")
@click.argument("domain")
@json_option
@pass_book
def show(book: Lorebook, domain: str, as_json: bool) -> None:
    """Print a domain's expertise file (redacted).

    \b
    Example:
      lore expertise show security
    """
    content = book.expertise.get(domain)
    if as_json:
        click.echo(to_json(content))
        return
    text = book.expertise.path(domain).read_text(encoding="utf-8")
    click.echo(book.sanitizer.redact_text(text)[0], nl=False)


@expertise.command("classify")
@click.argument("text")
@click.option(
    "--files",
    "files",
    multiple=True,
    help="A path the task touches (repeat, or separate with commas).",
)
@json_option
@pass_book
def classify(book: Lorebook, text: str, files: tuple[str, ...], as_json: bool) -> None:
    """The domain of a task: keyword scores plus file-path hints, else `general`.

    \b
    Example:
      lore expertise classify "add a migration for the users table" --files db/schema.sql
    """
    paths = [p.strip() for value in files for p in value.split(",") if p.strip()]
    found = book.expertise.classify(text, paths).to_dict()
    click.echo(to_json(found) if as_json else render.classification(found))


@expertise.command("learn")
@click.option("--session", required=True, help="The session to learn from (see lore sessions).")
@click.option("--domain", help="Update this domain instead of the one the session classifies as.")
@no_commit_option
@json_option
@pass_book
def learn(book: Lorebook, session: str, domain: str | None, no_commit: bool, as_json: bool) -> None:
    """Learn from a session: failures, tool patterns, modified files, a technique; commit.

    \b
    Example:
      lore expertise learn --session 01JD8Z... --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    result = book.expertise.learn(
        session, domain=domain, commit=False if no_commit else None, on_problem=problems
    )
    click.echo(to_json(result) if as_json else render.update(result, "learned"))
    _warn(book, result)
    problems.finish()


@expertise.command("validate")
@click.argument("domain", required=False)
@click.option("--all", "all_", is_flag=True, help="Validate every domain that has a file.")
@no_commit_option
@json_option
@pass_book
def validate(
    book: Lorebook, domain: str | None, all_: bool, no_commit: bool, as_json: bool
) -> None:
    """Drop deleted core files and stale failure lessons; commit only when something changed.

    \b
    Example:
      lore expertise validate --all
    """
    if (domain is None) == (not all_):
        raise UsageError("give a DOMAIN or --all (not both)")
    results = book.expertise.validate(domain, commit=False if no_commit else None)
    click.echo(to_json(results) if as_json else render.validated(results))
    for result in results:
        _warn(book, result)


@expertise.command("improve")
@click.argument("domain")
@no_commit_option
@json_option
@pass_book
def improve(book: Lorebook, domain: str, no_commit: bool, as_json: bool) -> None:
    """Add files matching the domain's globs (20 per glob at most); commit when any was added.

    \b
    Example:
      lore expertise improve testing
    """
    result = book.expertise.improve(domain, commit=False if no_commit else None)
    click.echo(to_json(result) if as_json else render.update(result, "nothing new"))
    _warn(book, result)


@expertise.command("history")
@click.argument("domain")
@json_option
@pass_book
def history(book: Lorebook, domain: str, as_json: bool) -> None:
    """The git history of a domain's file, with the changes each update listed.

    \b
    Example:
      lore expertise history security --json
    """
    entries = book.expertise.history(domain)
    click.echo(to_json(entries) if as_json else render.history(entries))


@expertise.command("prompt")
@click.argument("domain", required=False)
@click.option("--task", help="Classify this task and use its domain.")
@json_option
@pass_book
def prompt(book: Lorebook, domain: str | None, task: str | None, as_json: bool) -> None:
    """The Markdown block to put in an agent's prompt (redacted), framed as quoted data.

    \b
    Example:
      lore expertise prompt --task "rotate refresh tokens"
    """
    from ...render.framing import frame_data

    result = book.expertise.prompt(domain, task)
    result["prompt"] = frame_data(result["prompt"]) + "\n"
    click.echo(to_json(result) if as_json else result["prompt"], nl=as_json)
