"""The configured chain, applied in a `Sink` wrapper between the envelope and the real sink.

Capture computes positions from what it read, not from what the sink kept, so a transform that drops or
reroutes a record never changes what is stored or confirmed. Only a configuration with `transforms` gets this
wrapper: without it records go from the envelope's templates to the sink untouched.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pgcdc.errors import PgcdcError
from pgcdc.sink import Headers, Sink
from pgcdc.transforms import Predicate, Record, Transform
from pgcdc.transforms.codec import Codec
from pgcdc.transforms.compiled import RowSend, compile_chain, compile_rows

log = logging.getLogger(__name__)

# Headers whose value is a record key (a primary-key change): written like the key when it has no schema.
_KEY_HEADERS = frozenset({"__debezium.newkey", "__debezium.oldkey"})


class TransformError(PgcdcError):
    """A transform failed on a record and errors.tolerance=none."""


@dataclass(frozen=True, slots=True)
class Step:
    alias: str
    type: str
    transform: Transform
    predicate: Predicate | None = None
    negate: bool = False


@dataclass(frozen=True, slots=True)
class Chain:
    steps: tuple[Step, ...]
    tolerate: bool = False       # errors.tolerance=all: a failing record is skipped
    log_errors: bool = False     # errors.log.enable
    log_messages: bool = False   # errors.log.include.messages

    def __call__(self, record: Record) -> Record | None:
        r: Record | None = record
        for step in self.steps:
            assert r is not None
            # TransformationStage: the transform applies when predicate.test(record) XOR negate.
            if step.predicate is not None and step.predicate(r) == step.negate:
                continue
            try:
                r = step.transform(r)
            except Exception as exc:
                self._failed(step, record, exc)
                return None
            if r is None:
                return None
        return r

    def _failed(self, step: Step, record: Record, exc: Exception) -> None:
        what = f"transforms.{step.alias} ({step.type}) failed on a record for topic {record.topic!r}: {exc}"
        if not self.tolerate:
            raise TransformError(f"{what} (errors.tolerance=none)") from exc
        if self.log_errors:
            if self.log_messages:
                log.error("%s; skipped (errors.tolerance=all): key=%s value=%s", what, record.key, record.value)
            else:
                log.error("%s; skipped (errors.tolerance=all)", what)
        return None


class TransformingSink:
    """A `Sink` applying `chain` to every record before handing it to `inner`. The envelope writes schemas
    (transforms need them); `key_schemas`/`value_schemas` say whether the output keeps them (schemas.enable)."""

    def __init__(self, inner: Sink, chain: Chain, *, key_schemas: bool = True, value_schemas: bool = True) -> None:
        self.__dict__["inner"] = inner
        self.__dict__["chain"] = chain
        self.__dict__["codec"] = Codec()
        self.__dict__["key_schemas"] = key_schemas
        self.__dict__["value_schemas"] = value_schemas
        # The commonest chains compiled per table version (compiled.py); None: every record is interpreted.
        self.__dict__["fast"] = compile_chain(chain, inner, self.codec, key_schemas, value_schemas)
        self.__dict__["rows"] = compile_rows(chain, inner, self.codec, key_schemas, value_schemas)

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        fast = self.fast
        if fast is not None and fast(topic, key, value, headers, partition):
            return
        self.interpreted(topic, key, value, headers, partition)

    def row_sender(self, topic: str, head: bytes) -> RowSend | None:
        """For the capture, once per table version (`head`: its events' bytes up to the payload): what sends an
        insert's or update's output from its `after` row alone, without the envelope being written; None: every
        event of that table goes through `send`."""
        rows = self.rows
        return None if rows is None else rows(topic, head)

    def interpreted(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
                    partition: int | None = None) -> None:
        """The chain on Connect records: decode, apply every step, encode. Every chain, every record."""
        decode = self.codec.decode
        ks, k = decode(key)
        vs, v = decode(value)
        out = self.chain(Record(topic, partition, ks, k, vs, v, tuple(headers) if headers else ()))
        if out is None:
            return
        encode = self.codec.encode
        if out.key is k and out.key_schema is ks and self.key_schemas:
            key_bytes = key  # the key went through untouched
        else:
            key_bytes = encode(out.key_schema, out.key, self.key_schemas)
        value_bytes = encode(out.value_schema, out.value, self.value_schemas)
        hdrs = list(out.headers)
        if not self.key_schemas:
            hdrs = [(n, encode(*decode(b), False) or b"null") if n in _KEY_HEADERS else (n, b) for n, b in hdrs]
        self.inner.send(out.topic, key_bytes, value_bytes, hdrs, out.partition)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    # all_acknowledged, acknowledged, queue_depth, keepalive: the inner sink's.
    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.inner, name)
