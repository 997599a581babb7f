"""The unique index a table without a primary key is keyed by (source/catalog.py first_unique_index)."""

from __future__ import annotations

import pytest

from pgcdc.source.catalog import TableInfo, first_unique_index


@pytest.mark.parametrize(("indexes", "key"), [
    ([], ()),
    ([["a"]], ("a",)),
    ([["c", "a"], ["b"]], ("c", "a")),  # the first in the catalog's order, columns in the index's order
    ([["lower(b)"], ["a"]], ("a",)),  # a function call
    ([["a", "lower(b)"], ["b"]], ("b",)),  # one expression column leaves the whole index out
    ([["(a + 1)"], ["b"]], ("b",)),  # an expression
    ([["public.f(a, b)"]], ()),
    ([["(a)"]], ("(a)",)),  # matched by neither pattern: kept, as Debezium keeps it
    ([[None], ["b"]], ("b",)),
    ([["Mixed Case"]], ("Mixed Case",)),
])
def test_first_unique_index(indexes: list[list[str | None]], key: tuple[str, ...]) -> None:
    assert first_unique_index(indexes) == key


def test_primary_key_wins() -> None:
    info = TableInfo(1, "public", "t", (), ("id",), "d", ("a",))
    assert info.key == ("id",)
    assert TableInfo(1, "public", "t", (), (), "d", ("a",)).key == ("a",)
    assert TableInfo(1, "public", "t", (), (), "d").key == ()
