"""Progress of long steps when stderr is not a terminal: plain lines, at most one every
interval while a step advances, a heartbeat while it waits, a last line at the end."""

import io
import threading

from graph.progress import LineProgress, Reporter, time_left


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


def test_a_rate_bar_writes_chunks_per_second_and_the_time_left():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(out, "encoding", 8976, "chunk", interval=5, heartbeat=False, clock=clock, rate=True)
    assert bar.line() == "encoding: 0/8,976 chunks, 0 s"  # no rate before the first chunk
    clock.now += 81.2
    bar.update(1234)
    assert out.getvalue().splitlines() == ["encoding: 1,234/8,976 chunks, 15.2 chunks/s, about 8 min left"]
    bar.shrink(976)  # found cached: taken off the total
    clock.now += 400
    bar.update(6766)
    bar.close()
    assert out.getvalue().splitlines()[-1] == "encoding: 8,000/8,000 chunks, 16.6 chunks/s, 481 s"
    assert time_left(40.4) == "40 s" and time_left(7500) == "2 h 5 min"


def test_a_rate_bar_on_a_terminal_is_a_tqdm_bar_with_rate_and_time_left():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    with Reporter(out).rate_bar("encoding", 100, "chunk") as bar:
        bar.restart()
        bar.update(40)
        bar.shrink(10)
    text = out.getvalue()
    assert "encoding:" in text and "40/90 chunks" in text and "chunks/s" in text and " left" in text
    assert Reporter(out, enabled=False).rate_bar("encoding", 5, "chunk").update(5) is None
