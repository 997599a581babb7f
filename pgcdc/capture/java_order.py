"""Java's orders that Debezium's output shows: a java.util.HashMap's iteration order (an END event's
data collections)."""

from __future__ import annotations


def _java_string_hash(s: str) -> int:
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():  # UTF-16 code units, as Java's String.hashCode
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: list[str]) -> list[str]:
    """The iteration order of a java.util.HashMap holding `keys` (inserted in this order): Debezium lists an
    END event's data collections from a HashMap. Buckets are (h ^ h >>> 16) & (capacity - 1); the capacity
    doubles past 0.75 load; within a bucket, insertion order."""
    capacity = 16
    while len(keys) > capacity * 0.75:
        capacity *= 2

    def bucket(k: str) -> int:
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # sorted() is stable: insertion order within a bucket
