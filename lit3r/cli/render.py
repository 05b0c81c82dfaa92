"""What the ``lit3r`` commands print: answers (a table answer through the one table printer,
:mod:`lit3r.cli.tables`), configuration (as TOML; secrets are masked before it, by
:mod:`lit3r.present.redact`)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable, Optional

import click

from lit3r.cli.tables import echo_table
from lit3r.littraceqa.format import describe

if TYPE_CHECKING:  # lit3r.present.show loads PyMuPDF: only `ask --show` needs it
    from graph.records import Paper
    from lit3r.pipeline.engine import AskResult  # loaded by `ask` itself: a usage error is said before it loads
    from lit3r.present.show import ShowReport


_PER_PAPER = re.compile(r"^(stage 1) (\S+): (.*)$", re.S)


def collapse_notes(notes: list[str]) -> list[str]:
    """``notes`` with the per-paper notes that say the same thing (an LLM endpoint down: one per
    paper read) folded into one: "stage 1, 50 papers (2007.14062, 2108.09084, ...): <message>"."""
    groups: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []
    for note in notes:
        m = _PER_PAPER.match(note)
        if m is None:
            order.append(("", note))
            continue
        key = f"{m.group(1)}: {m.group(3)}"
        if key not in groups:
            groups[key] = []
            order.append((key, m.group(1)))
        groups[key].append(m.group(2))
    out = []
    for key, value in order:
        if not key:
            out.append(value)
            continue
        ids = groups[key]
        if len(ids) == 1:
            out.append(f"{value} {ids[0]}: {key[len(value) + 2:]}")
        else:
            shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
            out.append(f"{value}, {len(ids)} papers ({shown}): {key[len(value) + 2:]}")
    return out


def print_answer(result: AskResult, heads: dict[str, Paper], top: int, options: dict[str, str],
                 clean: Callable[[str], str] = str) -> None:
    """The readable answer of ``lit3r ask``: answers, supporting papers, evidence, candidates,
    notes, timings and LLM usage. ``heads``: the papers of the answer and the first ``top``
    candidates; ``clean``: applied to each note (which can quote a server's error), e.g.
    :func:`lit3r.present.redact.redact`."""
    read, answer = result.read, result.submission()["answer"]
    if not read.papers and read.freeform:  # the reader abstained: the corpus does not support an answer
        click.echo(read.freeform)  # one line; why it abstained is in --json (notes)
        for note in read.notes:
            if not note.startswith("abstained:"):
                click.echo(f"  note: {clean(note)}")
        return
    if "multiple_choice" in answer:
        letter = answer["multiple_choice"]["gold"]
        click.echo(f"Answer: {letter}) {options[letter]}")
    if "freeform" in answer:
        label = "Answer" if read.reader != "extractive" or "multiple_choice" not in answer else "Best evidence"
        click.echo(f"{label}: {answer['freeform']['text']}")
    if "table" in answer:
        click.echo("Answer table:")
        echo_table(answer["table"]["rows"])
    click.echo("\nSupporting papers:")
    for pid in read.papers:
        p = heads[pid]
        venue = " ".join(str(x) for x in (p.venue, p.year) if x)
        click.echo(f"  [{pid}] {p.title}" + (f" ({venue})" if venue else ""))
    click.echo("Evidence:")
    for c in read.evidence:
        text = " ".join(c.text.split())
        if c.object_id and text.startswith(c.object_id):
            text = text[len(c.object_id):].lstrip(" :.|")  # the label is in the locator already
        click.echo(f"  {c.paper_id} {describe(c)}: {text[:160]}{'...' if len(text) > 160 else ''}")
    click.echo(f"\nCandidates (top {min(top, len(result.candidates))} of {len(result.candidates)}):")
    for i, pid in enumerate(result.candidates[:top], start=1):
        click.echo(f"  {i:2d}. [{pid}] {heads[pid].title[:90]}")
    for note in collapse_notes(read.notes) + result.problems:
        click.echo(f"  note: {clean(note)}")
    t = result.timings
    click.echo("\nTimings: " + ", ".join(f"{k} {t[k]:.2f} s" for k in ("load", "retrieve", "relate", "read") if k in t))
    if result.usage.calls or result.usage.cached:
        u = result.usage
        click.echo(f"LLM: {u.calls} calls ({u.cached} cached), {u.prompt_tokens}+{u.completion_tokens} tokens, "
                   f"{len(result.rounds)} round(s), {len(result.subqueries)} subqueries")


def print_shown(report: "ShowReport") -> None:
    """What ``lit3r ask --show`` wrote: the PNG paths, one a line (after the answer); its notes
    (fallback outlines, papers without a PDF) go to stderr."""
    if report.shown:
        click.echo(f"\nEvidence shown ({len(report.shown)} PNG{'s' if len(report.shown) != 1 else ''}):")
        for s in report.shown:
            click.echo(str(s.path))
    elif not report.problems:
        click.echo("note: the answer has no evidence locator: no PNG written", err=True)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)


def toml(data: dict[str, Any], prefix: str = "", notes: Optional[dict[str, str]] = None) -> str:
    """A nested dict as valid TOML text (tables for nested dicts; a None value, which TOML cannot
    hold, as a comment line); ``notes``: a comment per dotted key."""
    notes = notes or {}
    flat, tables = [], []
    for k, v in data.items():
        if isinstance(v, dict):
            tables.append(f"\n[{prefix}{k}]\n" + toml(v, f"{prefix}{k}.", notes))
        else:
            note = notes.get(f"{prefix}{k}")
            if v is None:  # TOML has no null: a comment, so that the text stays valid TOML to paste
                flat.append(f"# {k}: none (unset)" + (f"; {note}" if note else ""))
                continue
            flat.append(f"{k} = {json.dumps(v)}" + (f"  # {note}" if note else ""))
    return "\n".join(flat) + "".join(tables)
