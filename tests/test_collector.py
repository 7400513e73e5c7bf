"""`collector.collector_paused`: the cyclic collector off inside, back as it was after (also
after an error), and records decoded inside are still freed by reference counting."""

from __future__ import annotations

import gc
import weakref

import pytest

from lorebook.collector import collector_paused
from lorebook.model import decode_line

LINE = (
    b'{"agent":"a","id":"01M8D4VJ9ADXYVPCHG5NP3C0JA","kind":"action","meta":{},'
    b'"outcome":"success","session":"s-1","ts":"2026-11-27T00:00:35.114Z","type":"commit","v":1}'
)


def test_the_collector_is_off_inside_and_back_after_even_on_an_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("a batch failed")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_records_decoded_while_paused_are_freed_without_it() -> None:
    class Box(dict):  # type: ignore[type-arg]  # a dict that a weak reference can watch
        pass

    with collector_paused():
        record, _ = decode_line(LINE)
        assert record is not None
        box = Box(record)
        watch = weakref.ref(box)
        del box, record
        assert watch() is None  # no cycle: freed at once, the collector off
