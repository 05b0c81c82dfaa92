"""Progress of long steps when stderr is not a terminal: plain lines, at most one every
interval while a step advances, a heartbeat while it waits, a last line at the end."""

import io
import threading

from graph.progress import LineProgress, Reporter


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_lines_at_most_every_interval_and_a_last_one():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(out, "building index", 60, "paper", interval=5, heartbeat=False, clock=clock)
    for _ in range(12):
        clock.now += 1
        bar.update()
    bar.close()
    bar.close()  # once
    assert out.getvalue().splitlines() == ["building index: 5/60 papers, 5 s", "building index: 10/60 papers, 10 s",
                                           "building index: 12/60 papers, 12 s"]


def test_the_heartbeat_writes_while_a_step_waits():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(out, "reading papers", 1, "paper", interval=5, heartbeat=False, clock=clock)
    clock.now += 3
    bar.tick()
    assert out.getvalue() == ""  # not due yet
    clock.now += 3
    bar.tick()
    clock.now += 5
    bar.tick()
    assert out.getvalue().splitlines() == ["reading papers: 0/1 paper, 6 s", "reading papers: 0/1 paper, 11 s"]
    done = LineProgress(io.StringIO(), "questions", None, "question", heartbeat=False, clock=clock)
    done.update(3)
    assert done.line() == "questions: 3 questions, 0 s"


def test_the_heartbeat_thread_runs_until_the_bar_closes():
    out = io.StringIO()
    written = threading.Event()

    class Stream(io.StringIO):
        def write(self, s):
            written.set()
            return out.write(s)

    with Reporter(Stream(), interval=0.01).bar("parsing PDFs", 3, "pdf"):
        assert written.wait(10)  # no update: the heartbeat writes
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("parsing PDFs: 0/3 pdfs, ") and line.endswith(" s") for line in lines)
    n = len(lines)
    threading.Event().wait(0.05)
    assert len(out.getvalue().splitlines()) == n  # closed: nothing more


def test_a_terminal_gets_a_bar_a_file_gets_lines_and_off_is_silent():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    with Reporter(tty).bar("questions", 2, "question") as bar:
        bar.update(2)
    assert "\r" in tty.getvalue() and "2/2" in tty.getvalue()  # tqdm's bar
    plain = io.StringIO()
    reporter = Reporter(plain)
    with reporter.bar("questions", 2, "question") as bar:
        bar.update(2)
    reporter.line("retrieve round 1/2: 3 subqueries")
    assert plain.getvalue() == "questions: 2/2 questions, 0 s\nretrieve round 1/2: 3 subqueries\n"
    off = io.StringIO()
    silent = Reporter(off, enabled=False)
    with silent.bar("questions", 2, "question") as bar:
        bar.update(2)
    silent.line("nothing")
    assert off.getvalue() == ""
