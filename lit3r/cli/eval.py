"""``lit3r eval``: scores a submission with :func:`lit3r.littraceqa.metrics.evaluate_files` (the
official LitTraceQA metrics, candidate recall@k from the traces) and prints the scores as tables
or JSON; ``--plot`` draws the recall curves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click

from lit3r.cli.tables import echo_table

#: The score columns of the readable table, in order.
COLUMNS = ["questions", "overall", "paper_f1", "evidence_f1", "mc_acc", "freeform_em", "row_f1", "cell_acc_macro",
           "cell_acc_micro"]
#: The groups after "all": (key of the result, label prefix).
GROUPS = ("by_task_family", "by_evidence_type")


@click.command(name="eval")
@click.option("--gold", "gold_file", type=click.Path(path_type=Path, exists=True, dir_okay=False), required=True,
              help="Gold JSONL (LitTraceQA validation format).")
@click.option("--pred", "pred_file", type=click.Path(path_type=Path, exists=True, dir_okay=False), required=True,
              help="Submission JSONL.")
@click.option("--traces", "traces_file", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
              help="Trace JSONL with ranked candidates (default: PRED.traces.jsonl when it exists).")
@click.option("--plot", "plot_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Save the candidate recall@k curves as a PNG (needs traces).")
@click.option("--json", "as_json", is_flag=True, help="Print every metric (and per-question scores) as JSON.")
def eval_cmd(gold_file: Path, pred_file: Path, traces_file: Optional[Path], plot_file: Optional[Path],
             as_json: bool) -> None:
    """Score a submission with the official LitTraceQA metrics, plus candidate recall@k from the traces."""
    from lit3r.littraceqa.metrics import evaluate_files

    beside = pred_file.with_name(pred_file.name + ".traces.jsonl")
    traces_file = traces_file or (beside if beside.is_file() else None)
    if plot_file and not traces_file:
        raise click.ClickException(f"no traces for --plot: pass --traces or keep {pred_file.name}.traces.jsonl "
                                   "(written by `lit3r run`) next to the submission")
    if plot_file and (plot_file.suffix.lower() != ".png" or not plot_file.parent.resolve().is_dir()):
        raise click.ClickException(f"--plot {plot_file}: give a .png file in an existing folder")
    res = evaluate_files(gold_file, pred_file, traces_file)
    if plot_file:
        _plot(res["candidate_recall"], plot_file)
    for w in res["warnings"]:
        click.echo(f"warning: {w}", err=True)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    echo_table([{"group": "all", **{c: fmt(res["overall"][c]) for c in COLUMNS}}]
                + [{"group": f"{name[3:]}={k}", **{c: fmt(v[c]) for c in COLUMNS}}
                   for name in GROUPS for k, v in res[name].items()])
    if res["missing_predictions"]:
        click.echo(f"{len(res['missing_predictions'])} gold question(s) had no prediction (scored as empty)")
    if traces_file:
        _echo_recall(res["candidate_recall"], traces_file)
    if plot_file:
        click.echo(f"recall@k plot saved to {plot_file}")


def fmt(v: Any) -> str:
    """A score as table text: "-" for none, an int as is, a fraction with 4 decimals."""
    return "-" if v is None else (str(v) if isinstance(v, int) else f"{v:.4f}")


def _plot(rec: dict[str, Any], plot_file: Path) -> None:
    from lit3r.littraceqa.metrics import plot_recall

    curves = {"all": rec["overall"], **{f"family={k}": v for k, v in rec["by_task_family"].items()}}
    try:
        plot_recall(curves, plot_file, f"Candidate recall@k ({rec['questions']} questions)")
    except OSError as exc:
        raise click.ClickException(f"--plot {plot_file}: cannot write it ({exc.strerror or exc}): "
                                   "choose a writable path") from None


def _echo_recall(rec: dict[str, Any], traces_file: Path) -> None:
    """The candidate recall@k table (one column per k)."""
    click.echo(f"\nCandidate recall@k from {traces_file.name}:")
    groups = [("all", rec["overall"])] + [(f"{n[3:]}={k}", v) for n in GROUPS for k, v in rec[n].items()]
    echo_table([{"group": g, **{f"@{k}": fmt(v.get(str(k))) for k in rec["ks"]}} for g, v in groups])
    if rec["missing_traces"]:
        click.echo(f"{len(rec['missing_traces'])} gold question(s) had no trace (recall 0)")
