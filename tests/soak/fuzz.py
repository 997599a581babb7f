"""Long decoder fuzzing: `python -m tests.soak.fuzz --examples 1000000`.

Feeds the sans-IO pgoutput decoder (and the CopyData frame parser) hypothesis-generated inputs, a quarter of
the total from each source:

- random bytes, bare or behind a valid message byte;
- every payload recorded from PostgreSQL in tests/data/pgoutput, mutated (bytes flipped, cut, inserted, deleted);
- structurally generated messages of every pgoutput type (Relation, Insert with tuples of every column kind,
  streamed variants, ...) whose length fields and counts are sometimes wrong, then possibly mutated;
- sequences of such messages through one decoder, so Stream Start/Stop state carries across them.

Asserts that only ProtocolError escapes (one line, no newline) and that no single input takes longer than
--bound seconds; a watchdog thread reports an input stuck for --hang seconds and exits 3. A failure is shrunk
by hypothesis and re-raised. Prints the count of inputs, the outcome counts and the time. The default test
suite runs a short version: tests/unit/test_pgoutput.py (test_fuzz_*) and tests/unit/test_soak_fuzz.py.
"""

from __future__ import annotations

import argparse
import operator
import os
import random
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pgcdc.errors import ProtocolError
from pgcdc.protocol import PgoutputDecoder, XLogData, parse_copy_data

DATA = Path(__file__).resolve().parents[1] / "data" / "pgoutput"
MESSAGE_BYTES = b"BCORYIUDTMSEcAbPKrp"
STREAM_START = b"S" + struct.pack("!IB", 1, 1)


def recorded_payloads() -> list[tuple[bytes, bool]]:
    """(pgoutput payload, decoded inside a streamed block) for every XLogData frame of every recording."""
    out: list[tuple[bytes, bool]] = []
    for path in sorted(DATA.glob("*.bin")):
        data, pos, decoder = path.read_bytes(), 0, PgoutputDecoder()
        while pos < len(data):
            (n,) = struct.unpack_from("!I", data, pos)
            frame = parse_copy_data(data[pos + 4:pos + 4 + n])
            pos += 4 + n
            if isinstance(frame, XLogData):
                payload = bytes(frame.payload)
                out.append((payload, decoder.in_stream))
                decoder.decode(payload)
    return out


# -- structurally generated messages ----------------------------------------------------------------------
cstring = st.binary(max_size=12).map(lambda b: b.replace(b"\x00", b"") + b"\x00") | st.binary(max_size=6)
u8, u16 = st.integers(0, 255), st.integers(0, 0xFFFF)
u32, u64 = st.integers(0, 0xFFFF_FFFF), st.integers(0, 0xFFFF_FFFF_FFFF_FFFF)
i16, i32 = st.integers(-(1 << 15), (1 << 15) - 1), st.integers(-(1 << 31), (1 << 31) - 1)
i64 = st.integers(-(1 << 63), (1 << 63) - 1)


@st.composite
def column_value(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(b"nutbx"))
    if kind in b"nu":
        return bytes([kind])
    data = draw(st.binary(max_size=24))
    length = draw(st.just(len(data)) | i32)  # usually honest, sometimes not
    return bytes([kind]) + struct.pack("!i", length) + data


@st.composite
def tuple_data(draw: st.DrawFn) -> bytes:
    values = draw(st.lists(column_value(), max_size=8))
    count = draw(st.just(len(values)) | i16)
    return struct.pack("!h", count) + b"".join(values)


@st.composite
def message(draw: st.DrawFn, inside: bool) -> bytes:
    """One pgoutput message as PostgreSQL lays it out (PG docs, Logical Replication Message Formats)."""
    xid = struct.pack("!I", draw(u32)) if inside else b""
    kind = draw(st.sampled_from("BCORYIUDTMSEcAbPKrp"))
    p = struct.pack
    if kind == "B":
        body = p("!QqI", draw(u64), draw(i64), draw(u32))
    elif kind == "C":
        body = p("!BQQq", draw(u8), draw(u64), draw(u64), draw(i64))
    elif kind == "O":
        body = p("!Q", draw(u64)) + draw(cstring)
    elif kind == "R":
        cols = draw(st.lists(st.tuples(u8, cstring, u32, i32), max_size=6))
        count = draw(st.just(len(cols)) | i16)
        body = xid + p("!I", draw(u32)) + draw(cstring) + draw(cstring) + bytes([draw(st.sampled_from(b"dnfix"))]) \
            + p("!h", count) + b"".join(bytes([f]) + n + p("!Ii", t, m) for f, n, t, m in cols)
    elif kind == "Y":
        body = xid + p("!I", draw(u32)) + draw(cstring) + draw(cstring)
    elif kind == "I":
        body = xid + p("!I", draw(u32)) + b"N" + draw(tuple_data())
    elif kind == "U":
        old = draw(st.just(b"") | st.sampled_from([b"K", b"O", b"X"]).flatmap(
            lambda k: tuple_data().map(lambda t: k + t)))
        body = xid + p("!I", draw(u32)) + old + draw(st.sampled_from([b"N", b"Q"])) + draw(tuple_data())
    elif kind == "D":
        body = xid + p("!I", draw(u32)) + draw(st.sampled_from([b"K", b"O", b"N"])) + draw(tuple_data())
    elif kind == "T":
        oids = draw(st.lists(u32, max_size=5))
        body = xid + p("!IB", draw(st.just(len(oids)) | u32), draw(u8)) + b"".join(p("!I", o) for o in oids)
    elif kind == "M":
        content = draw(st.binary(max_size=24))
        body = xid + p("!BQ", draw(u8), draw(u64)) + draw(cstring) + p("!i", draw(st.just(len(content)) | i32)) \
            + content
    elif kind == "S":
        body = p("!IB", draw(u32), draw(u8))
    elif kind == "E":
        body = b""
    elif kind == "c":
        body = p("!IBQQq", draw(u32), draw(u8), draw(u64), draw(u64), draw(i64))
    elif kind == "A":
        body = p("!II", draw(u32), draw(u32)) + draw(st.just(b"") | st.builds(p, st.just("!Qq"), u64, i64))
    elif kind in "bPKr":
        body = p("!QQqI", draw(u64), draw(u64), draw(i64), draw(u32)) + draw(cstring)
    else:  # p: Stream Prepare
        body = p("!BQQqI", draw(u8), draw(u64), draw(u64), draw(i64), draw(u32)) + draw(cstring)
    return kind.encode() + body


def mutate(data: st.DataObject, payload: bytes, most: int = 4) -> bytes:
    buf = bytearray(payload)
    for _ in range(data.draw(st.integers(0 if most else 1, max(most, 1)))):
        op = data.draw(st.sampled_from(("flip", "cut", "insert", "delete")))
        i = data.draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[i] = data.draw(u8)
        elif op == "cut":
            del buf[i:]
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        elif buf:
            del buf[i]
    return bytes(buf)


# -- the harness ------------------------------------------------------------------------------------------
@dataclass
class Run:
    bound_s: float
    inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    slowest: tuple[float, bytes] = (0.0, b"")
    current: tuple[float, bytes] | None = None  # (started, input) while one decodes, for the watchdog

    def feed(self, decoder: PgoutputDecoder, data: bytes) -> None:
        start = time.perf_counter()
        self.current = (start, data)
        try:
            msg = decoder.decode(data)
            self.outcomes[type(msg).__name__] += 1
        except ProtocolError as exc:
            text = str(exc)
            assert "\n" not in text, text
            self.outcomes[type(exc).__name__] += 1
        finally:
            self.current = None
        took = time.perf_counter() - start
        self.inputs += 1
        if took > self.slowest[0]:
            self.slowest = (took, data)
        assert took <= self.bound_s, f"{took:.3f} s (bound {self.bound_s} s) for {data.hex()}"

    def feed_mutants(self, inside: bool, data: bytes, seed: int, count: int) -> None:
        """The input itself, then `count` quick mutants of it from a PRNG seeded by hypothesis's draw (so a
        failure reproduces and shrinks with the draw)."""
        self.feed(self.decoder(inside), data)
        rnd = random.Random(seed)
        for _ in range(count):
            buf = bytearray(data)
            for _ in range(rnd.randint(1, 3)):
                op = rnd.randrange(4)
                i = rnd.randrange(len(buf)) if buf else 0
                if op == 0 and buf:
                    buf[i] = rnd.randrange(256)
                elif op == 1:
                    del buf[i:]
                elif op == 2:
                    buf[i:i] = rnd.randbytes(rnd.randint(1, 4))
                elif buf:
                    del buf[i]
            self.feed(self.decoder(inside), bytes(buf))

    def feed_frame(self, data: bytes) -> None:
        try:
            frame = parse_copy_data(data)
            self.outcomes[type(frame).__name__] += 1
        except ProtocolError as exc:
            assert "\n" not in str(exc)
            self.outcomes["frame " + type(exc).__name__] += 1
        self.inputs += 1

    def decoder(self, inside: bool) -> PgoutputDecoder:
        d = PgoutputDecoder()
        if inside:
            d.decode(STREAM_START)
        return d


def watchdog(run: Run, hang_s: float, stop: threading.Event) -> None:
    while not stop.wait(1.0):
        current = run.current
        if current is not None and time.perf_counter() - current[0] > hang_s:
            sys.stderr.write(f"hang: one input has decoded for more than {hang_s} s: {current[1].hex()}\n")
            sys.stderr.flush()
            os._exit(3)


def fuzz(examples: int, bound_s: float = 5.0, mutants: int = 16) -> Run:
    """Run about `examples` inputs through the decoder. Hypothesis draws each input; for the recorded and
    generated sources each draw is also fed as `mutants` pseudo-random mutants (hypothesis's own generation
    is the slow part: about 600 draws per second here, the decoder about 100 times faster)."""
    run = Run(bound_s)
    samples = recorded_payloads()
    share = max(examples // 4, 1)
    draws = max(share // (1 + mutants), 1)

    def config(n: int) -> settings:
        return settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                        suppress_health_check=list(HealthCheck))

    @config(draws)
    @given(data=st.binary(max_size=64) | st.builds(operator.add, st.sampled_from([bytes([b]) for b in MESSAGE_BYTES]),
                                                   st.binary(max_size=96)),
           inside=st.booleans(), frame=st.sampled_from([None] * 5 + [b"w", b"k", b""]), seed=u64)
    def random_bytes(data: bytes, inside: bool, frame: bytes | None, seed: int) -> None:
        if frame is None:
            run.feed_mutants(inside, data, seed, mutants)
        else:  # a CopyData frame: an XLogData or keepalive header, or garbage
            run.feed_frame(frame + data)

    @config(draws)
    @given(index=st.integers(0, len(samples) - 1), data=st.data(), seed=u64)
    def mutated_recordings(index: int, data: st.DataObject, seed: int) -> None:
        payload, inside = samples[index]
        run.feed_mutants(inside, mutate(data, payload), seed, mutants)

    @config(draws)
    @given(inside=st.booleans(), data=st.data(), seed=u64)
    def generated(inside: bool, data: st.DataObject, seed: int) -> None:
        msg = data.draw(message(inside))
        run.feed_mutants(inside, mutate(data, msg, most=data.draw(st.sampled_from([0, 0, 1, 3]))), seed, mutants)

    @config(max(share // 24, 1))  # a quarter of the share: each draw is 1-10 messages
    @given(data=st.data())
    def sequences(data: st.DataObject) -> None:
        decoder = PgoutputDecoder()
        for _ in range(data.draw(st.integers(1, 10))):
            msg = data.draw(st.sampled_from([STREAM_START, b"E"]) | message(decoder.in_stream))
            run.feed(decoder, mutate(data, msg, most=data.draw(st.sampled_from([0, 0, 1]))))

    stop = threading.Event()
    threading.Thread(target=watchdog, args=(run, max(bound_s * 10, 10.0), stop), daemon=True).start()
    try:
        while run.inputs < examples:  # each round draws afresh; rounds after the first top up the count
            for part in (random_bytes, mutated_recordings, generated, sequences):
                part()
    finally:
        stop.set()
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1_000_000, help="inputs to generate (default 1e6)")
    # Decoding takes microseconds; the bound is loose because the machine may be busy with other work.
    parser.add_argument("--bound", type=float, default=5.0, help="seconds any one input may take (default 5)")
    parser.add_argument("--mutants", type=int, default=16, help="quick mutants fed after each drawn input")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    run = fuzz(args.examples, args.bound, args.mutants)
    elapsed = time.perf_counter() - started
    print(f"{run.inputs} inputs in {elapsed:.0f} s ({run.inputs / elapsed:.0f}/s); only ProtocolError escaped; "
          f"slowest input {run.slowest[0] * 1e3:.2f} ms ({len(run.slowest[1])} bytes, bound {args.bound} s)")
    for name, n in run.outcomes.most_common():
        print(f"  {n:>9}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
