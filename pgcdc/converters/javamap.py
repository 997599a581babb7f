"""java.util.HashMap's iteration order, for text a Java library writes by iterating one (everit-json-schema's
schemas, org.json's JSONObject).

A HashMap iterates its table's buckets in order, each bucket's entries in the order they were put (a resize
splits a bucket keeping that order); a key's bucket is String.hashCode spread (h ^ h >>> 16) masked by the table
size. So the order is a stable sort of the put order by bucket, for the table size the map ended with, which
depends on how it was made. Buckets turned into trees (8 colliding keys in a table of 64 or more) are not
modelled.
"""

from __future__ import annotations

from functools import cache


@cache
def _spread(key: str) -> int:
    h = 0
    data = key.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):  # String.hashCode over UTF-16 code units
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size_for(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


def _grown(size: int, n: int) -> int:
    while n > size * 0.75:  # resize() once the count passes the load factor's threshold
        size <<= 1
    return size


def _order(keys: list[str], size: int) -> list[str]:
    return sorted(keys, key=lambda k: _spread(k) & (size - 1))


def inserted_order(keys: list[str]) -> list[str]:
    """`new HashMap<>()` (16 buckets, growing), the keys put in this order."""
    return _order(keys, _grown(16, len(keys)))


def copied_order(keys: list[str]) -> list[str]:
    """`new HashMap<>(map)` of a map iterating in this order (JDK 8-17 sizing: tableSizeFor(n / 0.75 + 1))."""
    return _order(keys, _table_size_for(int(len(keys) / 0.75 + 1.0))) if keys else keys


def jsonobject_order(keys: list[str], fresh: bool) -> list[str]:
    """org.json's JSONObject: `new JSONObject()` then puts (fresh: 16 buckets), or `new JSONObject(map)`
    (`new HashMap<>(map.size())`, then puts in the map's order)."""
    return _order(keys, _grown(16 if fresh else _table_size_for(len(keys)), len(keys)))
