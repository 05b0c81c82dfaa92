"""Progress of long steps on stderr: a tqdm bar on a terminal, plain lines anywhere else.

Used by every long step (parsing PDFs, building the index, loading the servers, a batch of
questions, the LLM rounds and readings of ``lit3r ask``), so they all report the same way.

When the stream is not a terminal (a log file, CI, ``make demo | tee``), a bar is written as
plain lines: one at most every ``interval`` seconds while it advances, one every ``interval``
seconds while it waits (a heartbeat: a slow encoder batch or LLM call still shows the step is
alive), and a last one when it ends::

    building index: 12/60 papers, 34 s
    building index: 60/60 papers, 151 s

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


class LineProgress:
    """Plain progress lines ``"<desc>: <n>/<total> <unit>s, <seconds> s"`` on ``stream`` (see the
    module docstring). ``heartbeat`` False: lines only on :meth:`update` and :meth:`close` (no
    thread); ``clock``: seconds, monotonic (tests pass a fake one)."""

    def __init__(self, stream: TextIO, desc: str, total: Optional[int] = None, unit: str = "item",
                 interval: float = INTERVAL, *, heartbeat: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.desc, self.total, self.unit, self.interval = stream, desc, total, unit, interval
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
        plural = "" if (self.total if self.total is not None else self.n) == 1 else "s"
        done = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        return f"{self.desc}: {done} {self.unit}{plural}, {self.clock() - self.start:.0f} s"

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units; writes a line when the last one is ``interval`` seconds old."""
        with self._lock:
            self.n += n
            self._write_if_due()

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
