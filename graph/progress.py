"""Progress of long steps on stderr: a tqdm bar on a terminal, plain lines anywhere else.

Used by every long step (parsing PDFs, building the index, loading the servers, a batch of
questions, the LLM rounds and readings of ``lit3r ask``), so they all report the same way.

When the stream is not a terminal (a log file, CI, ``make demo | tee``), a bar is written as
plain lines: one at most every ``interval`` seconds while it advances, one every ``interval``
seconds while it waits (a heartbeat: a slow encoder batch or LLM call still shows the step is
alive), and a last one when it ends::

    building index: 12/60 papers, 34 s
    building index: 60/60 papers, 151 s

A long step of known size (encoding the chunks of ``lit3r ingest``) uses :meth:`Reporter.rate_bar`,
which adds the rate and the time left (estimated from the mean rate so far)::

    encoding: 1,234/8,976 chunks, 15.2 chunks/s, about 8 min left

:class:`Reporter` is the one entry point: ``Reporter(enabled=False)`` reports nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Optional, Protocol, TextIO

#: Seconds between two plain progress lines (streams that are not a terminal).
INTERVAL = 5.0


class Progress(Protocol):
    """One step's progress: ``update`` after each unit of work, ``close`` (or the ``with``
    block's end) when the step ends."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...

    def __enter__(self) -> "Progress": ...

    def __exit__(self, *exc: object) -> None: ...


class _Off:
    """Reports nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Off":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class RateProgress(Progress, Protocol):
    """A :class:`Progress` that shows the rate and time left (:meth:`Reporter.rate_bar`)."""

    def shrink(self, n: int) -> None: ...

    def restart(self) -> None: ...

    def __enter__(self) -> "RateProgress": ...


def time_left(seconds: float) -> str:
    """A duration for people: ``40 s``, ``8 min``, ``2 h 5 min``."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


class _OffRate(_Off):
    def __enter__(self) -> "_OffRate":
        return self

    def shrink(self, n: int) -> None:
        pass

    def restart(self) -> None:
        pass


class _TqdmRate:
    """A tqdm bar with the rate and the time left, e.g.
    ``encoding:  14%|##  | 1234/8976 chunks, 15.2 chunks/s, 08:29 left``."""

    def __init__(self, stream: TextIO, desc: str, total: int, unit: str) -> None:
        from tqdm import tqdm

        fmt = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit + "s, {rate_fmt}, {remaining} left"
        self.bar = tqdm(total=total, desc=desc, unit=f" {unit}s", file=stream, mininterval=1, bar_format=fmt)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def shrink(self, n: int) -> None:
        self.bar.total = max(self.bar.n, (self.bar.total or 0) - n)
        self.bar.refresh()

    def restart(self) -> None:
        if self.bar.n == 0:
            self.bar.reset(total=self.bar.total)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> "_TqdmRate":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LineProgress:
    """Plain progress lines ``"<desc>: <n>/<total> <unit>s, <seconds> s"`` on ``stream`` (see the
    module docstring). ``heartbeat`` False: lines only on :meth:`update` and :meth:`close` (no
    thread); ``clock``: seconds, monotonic (tests pass a fake one)."""

    def __init__(self, stream: TextIO, desc: str, total: Optional[int] = None, unit: str = "item",
                 interval: float = INTERVAL, *, heartbeat: bool = True,
                 clock: Callable[[], float] = time.monotonic, rate: bool = False) -> None:
        self.stream, self.desc, self.total, self.unit, self.interval = stream, desc, total, unit, interval
        self.rate = rate
        self.clock = clock
        self.n = 0
        self.start = self.last = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._closed = False
        self._thread: Optional[threading.Thread] = None
        if heartbeat:
            self._thread = threading.Thread(target=self._beat, name=f"progress {desc}", daemon=True)
            self._thread.start()

    def line(self) -> str:
        """The current line, e.g. ``building index: 12/60 papers, 34 s``."""
        if self.rate and self.total is not None:
            return self._rate_line()
        plural = "" if (self.total if self.total is not None else self.n) == 1 else "s"
        done = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        return f"{self.desc}: {done} {self.unit}{plural}, {self.clock() - self.start:.0f} s"

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units; writes a line when the last one is ``interval`` seconds old."""
        with self._lock:
            self.n += n
            self._write_if_due()

    def shrink(self, n: int) -> None:
        """Take ``n`` units off the total (work found done without doing it, e.g. cached vectors)."""
        with self._lock:
            if self.total is not None:
                self.total = max(self.n, self.total - n)

    def restart(self) -> None:
        """Start the clock again (before the first unit: a model load is not part of the rate)."""
        with self._lock:
            if self.n == 0:
                self.start = self.last = self.clock()

    def _rate_line(self) -> str:
        """``encoding: 1,234/8,976 chunks, 15.2 chunks/s, about 8 min left`` (no rate before the
        first unit; the seconds taken once all are done)."""
        total = self.total or 0
        took = self.clock() - self.start
        text = f"{self.desc}: {self.n:,}/{total:,} {self.unit}s"
        per_s = self.n / took if self.n and took > 0 else 0.0
        if per_s:
            text += f", {per_s:.1f} {self.unit}s/s"
        if per_s and self.n < total:
            return text + f", about {time_left((total - self.n) / per_s)} left"
        return text + f", {took:.0f} s"

    def tick(self) -> None:
        """Write a line when the last one is ``interval`` seconds old (the heartbeat's step)."""
        with self._lock:
            self._write_if_due()

    def close(self) -> None:
        """Stop the heartbeat and write the last line (once)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._write()

    def __enter__(self) -> "LineProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _beat(self) -> None:
        while not self._stop.wait(self.interval / 4):
            self.tick()

    def _write_if_due(self) -> None:
        if not self._closed and self.clock() - self.last >= self.interval:
            self._write()

    def _write(self) -> None:
        try:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: progress is never worth failing for
            pass
        self.last = self.clock()


class Reporter:
    """Where long steps report: ``stream`` (default: ``sys.stderr`` when a bar or line is made),
    nothing when ``enabled`` is False. A terminal gets tqdm bars; anything else plain lines every
    ``interval`` seconds (default :data:`INTERVAL`)."""

    def __init__(self, stream: Optional[TextIO] = None, *, enabled: bool = True,
                 interval: Optional[float] = None) -> None:
        self._stream, self.enabled, self._interval = stream, enabled, interval

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def is_terminal(self) -> bool:
        """Whether the stream is a terminal (bars) rather than a file or pipe (lines)."""
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):
            return False

    def bar(self, desc: str, total: Optional[int] = None, unit: str = "item") -> Progress:
        """A progress bar for one step of ``total`` ``unit`` s (None: unknown)."""
        if not self.enabled:
            return _Off()
        if self.is_terminal():
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit=unit, file=self.stream, mininterval=1)
        return LineProgress(self.stream, desc, total, unit, INTERVAL if self._interval is None else self._interval)

    def rate_bar(self, desc: str, total: int, unit: str) -> "RateProgress":
        """A bar for a long step of ``total`` ``unit`` s that shows the rate (units/s) and the time
        left: a tqdm bar on a terminal, else :class:`LineProgress` lines (module docstring).
        It also has ``shrink(n)`` (units found done) and ``restart()`` (start the clock again)."""
        if not self.enabled:
            return _OffRate()
        if self.is_terminal():
            return _TqdmRate(self.stream, desc, total, unit)
        return LineProgress(self.stream, desc, total, unit, INTERVAL if self._interval is None else self._interval,
                            rate=True)

    def line(self, text: str) -> None:
        """Write one line now (above any tqdm bar on a terminal)."""
        if not self.enabled:
            return
        if self.is_terminal():
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass


#: Reports nothing (the default of library calls).
SILENT = Reporter(enabled=False)
