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


def _table_size_for(n: int) -> int:
    """HashMap.tableSizeFor: the smallest power of two at least `n` (1 for n <= 1)."""
    size = 1
    while size < n:
        size *= 2
    return size


def _by_bucket(keys: list[str], capacity: int) -> list[str]:
    def bucket(k: str) -> int:
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: insertion order within a bucket, as a resize keeps it


def java_hashset_copy_order(keys: list[str]) -> list[str]:
    """The iteration order of `new HashSet<>(collection)` holding `keys` (in the collection's order): its map
    is made with capacity max(size / .75 + 1, 16), so holding them never resizes it (Java 17's HashSet)."""
    return _by_bucket(keys, _table_size_for(max(int(len(keys) / 0.75) + 1, 16)))


def java_hashmap_copy_order(copied: list[str], added: list[str]) -> list[str]:
    """The iteration order of `new HashMap<>(map)` of `copied` keys, then `added` put one by one: the copy
    sizes its table for the map (tableSizeFor(size / .75 + 1); the default 16 for an empty one), each put past
    three quarters of it doubles it. `copied` is taken in the given order: Debezium copies a `Map.of`, whose
    own order changes from one JVM to the next, so keys sharing a bucket may come in either order there."""
    capacity = _table_size_for(int(len(copied) / 0.75 + 1.0)) if copied else 16
    size = len(copied)
    for _ in added:
        size += 1
        if size > capacity * 0.75:
            capacity *= 2
    return _by_bucket([*copied, *added], capacity)
