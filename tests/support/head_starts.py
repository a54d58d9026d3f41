"""Head starts: contexts that take seconds to enter (processes to start, a run to finish), begun before the tests that need them."""

import contextlib
from pathlib import Path
from typing import Any, Callable

import gevent
import gevent.event
import pytest

#: Contexts that take seconds to enter (processes to start, a run to finish), by the fixture that hands out what they
#: yield, and whether they begin at the run's first test; see `head_start`.
HEAD_STARTS: dict[str, tuple[Callable[[], contextlib.AbstractContextManager], bool]] = {}
#: The longest a fixture waits for its head start: far above any start, so a hang fails rather than stalls.
HEAD_START_WAIT_SECONDS = 300
#: The fewest tests a head start begins ahead of the folder that needs it: tests/scale's three took half a second, and
#: the demo, begun with them, started beside the command line's tests and slowed them.
HEAD_START_FOLDER_TESTS = 10


def head_start(fixture: str, *, at_first_test: bool = False) -> Callable:
    """Register a generator function, written as for `contextlib.contextmanager`, as the head start of the fixture
    named `fixture`. When a selected test uses that fixture, the run enters the context in a greenlet of its own
    while the folder of tests before that test's folder runs (or from its first test, `at_first_test`), and holds it
    open until the run ends (`HeadStarts`): what it starts then starts beside those tests, rather than in the setup of
    the first test that needs it. The fixture takes what it yields with `head_starts[fixture].get()`."""
    def register(function: Callable) -> Callable:
        HEAD_STARTS[fixture] = (contextlib.contextmanager(function), at_first_test)
        return function
    return register


class HeadStart:
    """One head start's context, entered in a greenlet of its own once begun, and held open until `close`."""

    def __init__(self, enter: Callable[[], contextlib.AbstractContextManager]) -> None:
        self._enter = enter
        self._entered: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self._release = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None

    def begin(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._hold)

    def _hold(self) -> None:
        try:
            with self._enter() as value:
                self._entered.set(value)
                self._release.wait()
        except BaseException as failure:  # a failed start is raised by `get`, in the test that needs it
            if self._entered.ready():
                raise
            self._entered.set_exception(failure)

    def get(self) -> Any:
        """What the context yielded, once it has (begun now if it was not); what it raised entering, raised here."""
        self.begin()
        return self._entered.get(timeout=HEAD_START_WAIT_SECONDS)

    def close(self) -> None:
        """Leave the context (stop what it started), or abandon its start; what it raised leaving is raised here."""
        if self._greenlet is None:
            return
        if not self._entered.ready():
            self._greenlet.kill()  # a start abandoned stops what it started, as any failed start does
        self._release.set()
        self._greenlet.get()


class HeadStarts(dict):
    """The head starts of the fixtures a run's tests use, by fixture, each begun when the run reaches its test.

    A head start begins with the first test of the folder before the folder whose test first needs it (or further
    back, past a folder of a few tests): that folder's tests give it their time. All at the run's first test, they
    crowded its busiest minute (the kit's platforms), and slowed the tests there more than they saved."""

    def __init__(self, items: list[pytest.Item]) -> None:
        first_use: dict[str, int] = {}
        for index, item in enumerate(items):
            for name in item.fixturenames:
                if name in HEAD_STARTS:
                    first_use.setdefault(name, index)
        super().__init__((name, HeadStart(HEAD_STARTS[name][0])) for name in first_use)
        folders = [item.path.parent for item in items]
        self._index = {item.nodeid: index for index, item in enumerate(items)}
        self._due = sorted((0 if HEAD_STARTS[name][1] else _folder_before(folders, index), name)
                           for name, index in first_use.items())

    def begin_due(self, item: pytest.Item) -> None:
        """Begin every head start due by `item`."""
        index = self._index.get(item.nodeid, 0)
        while self._due and self._due[0][0] <= index:
            self[self._due.pop(0)[1]].begin()

    def close(self) -> None:
        """Close every head start at once (their processes stop side by side)."""
        gevent.joinall([gevent.spawn(head_start.close) for head_start in self.values()], raise_error=True)


def _folder_before(folders: list[Path], index: int) -> int:
    """The index of the first test of the nearest folder run before the one holding test `index` that begins at least
    `HEAD_START_FOLDER_TESTS` tests before it (0 when none does)."""
    start = index
    while start > 0 and folders[start - 1] == folders[index]:
        start -= 1
    before = start
    while before > 0 and (before == start or start - before < HEAD_START_FOLDER_TESTS):
        before -= 1
        while before > 0 and folders[before - 1] == folders[before]:
            before -= 1
    return before
