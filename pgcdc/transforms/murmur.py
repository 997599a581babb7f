"""Debezium's MurmurHash3 (io.debezium.util.MurmurHash3, taken from Infinispan), as PartitionRouting's
`partition.hash.function=murmur` uses it.

It is not the final MurmurHash3 that libraries such as mmh3 implement: Infinispan's x64 variant keeps the
multipliers `c1`/`c2` in the state and changes them after every block (MurmurHash3's pre-release form), and the
32-bit result is the upper half of `h1`. So it is written out here, step for step with the Java, on 64-bit
unsigned arithmetic; the tail bytes are sign-extended as Java's `(long) byte` does. The seed is 9001.

`MurmurHash3.hash(Object)`: a byte[] hashes its bytes, a String the UTF-8 bytes of its code points (an unpaired
surrogate as `?`, which Python's `replace` error handler also writes), anything else the 4 little-endian bytes
of its Java `hashCode()`.
"""

from __future__ import annotations

import struct

_M = (1 << 64) - 1
_SEED = 9001
_BLOCK = struct.Struct("<QQ")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M
    return k ^ (k >> 33)


def hash_bytes(data: bytes) -> int:
    """MurmurHash3_x64_32(data, 9001): a Java int."""
    h1, h2 = 0x9368E53C2F6AF274 ^ _SEED, 0x586DCD208F7CD3FD ^ _SEED
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F

    def bmix(k1: int, k2: int) -> None:
        nonlocal h1, h2, c1, c2
        k1 = (_rotl((k1 * c1) & _M, 23) * c2) & _M
        h1 = ((h1 ^ k1) + h2) & _M
        h2 = _rotl(h2, 41)
        k2 = (_rotl((k2 * c2) & _M, 23) * c1) & _M
        h2 = ((h2 ^ k2) + h1) & _M
        h1 = (h1 * 3 + 0x52DCE729) & _M
        h2 = (h2 * 3 + 0x38495AB5) & _M
        c1 = (c1 * 5 + 0x7B7D159C) & _M
        c2 = (c2 * 5 + 0x6BCE6396) & _M

    n = len(data)
    full = n >> 4 << 4
    for i in range(0, full, 16):
        bmix(*_BLOCK.unpack_from(data, i))
    if n & 15:
        k1 = k2 = 0
        for j, b in enumerate(data[full:]):  # (long) key[i] << 8j: the byte sign-extended to 64 bits
            v = ((b - 256 if b > 127 else b) << (8 * (j & 7))) & _M
            if j < 8:
                k1 ^= v
            else:
                k2 ^= v
        bmix(k1, k2)
    h2 ^= n
    h1 = (h1 + h2) & _M
    h2 = (h2 + h1) & _M
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & _M
    top = h1 >> 32
    return top - (1 << 32) if top >= 1 << 31 else top


def hash_string(s: str) -> int:
    return hash_bytes(s.encode("utf-8", "replace"))


def hash_code(java_hash: int) -> int:
    """hash(int): the 4 little-endian bytes of a Java hashCode()."""
    return hash_bytes((java_hash & 0xFFFFFFFF).to_bytes(4, "little"))
