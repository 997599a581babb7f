"""COPY TO text rows parsed as psycopg's `Copy.rows()` parses them: bytes captured from PostgreSQL 15 (COPY of
a VALUES list), expected tuples from psycopg 3.3 reading the same COPY."""

from __future__ import annotations

import pytest

from pgcdc.capture.snapshot_readers import copy_text_row, row_parser

CAPTURED = [
    (b'1\ta\\tb\\nc\\rd\\\\e\t\\N\t\\\\N\t\\b\\f\\v\x01\t\xc3\xbcn\xc3\xaf \xe2\x82\xac\t'
     b'{"k": "q\\\\"\\\\\\\\\\\\\\\\"}\t\n',
     ("1", "a\tb\nc\rd\\e", None, "\\N", "\x08\x0c\x0b\x01", "ünï €", '{"k": "q\\"\\\\\\\\"}', "")),
    (b"2\t\\N\tx\tplain\t\t\\\\\\\\N\t\\N\t\\N\n", ("2", None, "x", "plain", "", "\\\\N", None, None)),
    (b"3\tc4ca4238a0b923820dcc509a6f75849b\t0.14\tt\n", ("3", "c4ca4238a0b923820dcc509a6f75849b", "0.14", "t")),
    (b"\n", ("",)),  # one column holding ''
]


@pytest.mark.parametrize(("data", "row"), CAPTURED)
def test_copy_text_row_as_psycopg(data: bytes, row: tuple[str | None, ...]) -> None:
    assert copy_text_row(data, "utf-8") == row
    assert copy_text_row(memoryview(data), "utf-8") == row


def test_a_table_without_columns_has_empty_rows() -> None:
    assert row_parser(())(b"\n", "utf-8") == ()
    assert row_parser(("v",))(b"\n", "utf-8") == ("",)
