import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.device.protocol import (
    CalibrationLine,
    ClockLine,
    LineBuffer,
    PhaseLine,
    ProcessLine,
    ProtocolError,
    RunEndLine,
    SampleLine,
    StderrLine,
    parse_line,
)


def test_each_line_kind_parses():
    assert parse_line("K\t0\t100\tepoch\t95\t1\tread\t32") == ClockLine(
        0, 100, "epoch", -5, 1, "read", 32
    )
    assert parse_line("S\t3\t200\t7\t45000\t\tDischarging") == SampleLine(
        3, 200, 7, ("45000", "", "Discharging")
    )
    assert parse_line("C\t1\t9\t10,12,11") == CalibrationLine(1, 9, (10, 12, 11))
    assert parse_line("P\t2\t10\tmeasure\t1\t200\t\t") == PhaseLine(
        2, 10, "measure", 1, 200, None, ""
    )
    assert parse_line("E\t3\t11\t4\tbad\\tthing\\\\") == StderrLine(3, 11, "4", "bad\tthing\\")
    assert parse_line("I\t4\t12\t4\tmeasure\t1\t0\t100\t250\t1\t0\t") == ProcessLine(
        4, 12, 4, "measure", 1, 0, 100, 250, 1, False
    )
    assert parse_line("I\t4\t12\t4\tmeasure\t1\t0\t100\t250\t0\t0\t90").scheduled_us == 90
    assert parse_line("X\t5\t13\tcompleted\t28\t900\t") == RunEndLine(
        5, 13, "completed", 28, 900, ""
    )


@pytest.mark.parametrize("text", ["", "S\t1", "Z\t1\t2\tx", "S\tx\t1\t0", "I\t1\t2\t3"])
def test_lines_outside_the_protocol_are_refused(text):
    with pytest.raises(ProtocolError):
        parse_line(text)


def test_line_buffer_keeps_a_torn_line_until_its_newline():
    buffer = LineBuffer(100)
    assert buffer.feed(b"ab\ncd") == [(b"ab", 103)]
    assert buffer.offset == 103 and buffer.pending == 2
    assert buffer.feed(b"e\n") == [(b"cde", 107)]


def test_a_discarded_partial_is_never_a_line():
    buffer = LineBuffer()
    buffer.feed(b"whole\nto")
    assert buffer.discard_partial() == 2
    assert buffer.offset == 6
    assert buffer.feed(b"rn\n") == [(b"rn", 9)]


@given(st.lists(st.binary(max_size=30), max_size=20), st.data())
def test_any_chunking_gives_the_same_lines_and_offsets(chunks, data):
    stream = b"".join(chunks)
    whole = LineBuffer()
    expected = whole.feed(stream)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    split = LineBuffer()
    got = [line for piece in pieces for line in split.feed(piece)]
    assert got == expected
    assert split.offset == whole.offset
