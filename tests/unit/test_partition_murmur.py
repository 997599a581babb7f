"""Debezium's MurmurHash3 (PartitionRouting's `partition.hash.function=murmur`) against values measured from the
oracle's own class: strings, Java hash codes, and byte arrays of every tail length (recorded in
tests/data/debezium_murmur3.json). The partitions it gives whole records are compared with Debezium in
tests/conformance/test_transforms_keys_vs_debezium.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgcdc.transforms import murmur

MEASURED = json.loads((Path(__file__).resolve().parents[1] / "data" / "debezium_murmur3.json").read_text())
BYTES = bytes.fromhex(MEASURED["byte_prefixes_of"].replace(" ", ""))


@pytest.mark.parametrize(("text", "expected"), MEASURED["strings"])
def test_strings(text: str, expected: int) -> None:
    assert murmur.hash_string(text) == expected


@pytest.mark.parametrize(("java_hash", "expected"), MEASURED["hash_codes"])
def test_hash_codes(java_hash: int, expected: int) -> None:
    assert murmur.hash_code(java_hash) == expected


@pytest.mark.parametrize(("length", "expected"), list(enumerate(MEASURED["bytes"])))
def test_byte_arrays_of_every_tail_length(length: int, expected: int) -> None:
    assert murmur.hash_bytes(BYTES[:length]) == expected
