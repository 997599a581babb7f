"""The commonest chains compiled per topic and table version: ExtractNewRecordState (any
delete.tombstone.handling.mode, add.fields of source, transaction, op and timestamps; no added headers, no
routing or dropped fields) with any number of RegexRouters, no predicates.

For an insert, update or snapshot read, such a chain writes the envelope's `after` row under the row's own
schema on a renamed topic, and leaves key, headers and partition alone. The envelope's bytes already hold
that row as JsonConverter writes it, so the compiled path cuts it out of them and puts it behind the output
schema's bytes, computed once per envelope schema by the interpreted transform itself
(`ExtractNewRecordState._plan`, the codec's schema text); the topic goes through the routers once per topic.
Per record that is two `startswith`, one `rfind` and one concatenation, instead of a parse of the payload,
the chain on dicts and a serialization; add.fields parse the envelope's tail after the row (source,
transaction, op, timestamps: a few hundred bytes) and serialize the added values.

The streaming capture goes one step further where it can (`compile_rows`, capture/rows.py): for an insert or
update without a `before` row it hands over the row's bytes alone, and the record is the output schema's bytes
around them; the envelope is never written. The same plan decides, so the bytes are the same.

Everything else takes the interpreted chain, record by record: tombstones, deletes and truncates (their
after is null), heartbeats, transaction metadata, logical messages (their schema is no Envelope), a record
whose schema is not the one compiled for its topic until that one is compiled (a schema change), a
primary-key change whose key headers need rewriting (key.converter.schemas.enable=false), and row schemas in
which the cut could be ambiguous (see `_plan`). A chain with anything else is not compiled at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from orjson import loads

from pgcdc.envelope.connect import dumps
from pgcdc.sink import Headers, Sink
from pgcdc.transforms import Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec
from pgcdc.transforms.unwrap import ExtractNewRecordState, FieldRef

if TYPE_CHECKING:
    from pgcdc.transforms.chain import Chain

REGEX_ROUTER = "org.apache.kafka.connect.transforms.RegexRouter"
_MARK = b',"payload":'
_NO_BEFORE = b'{"before":null,"after":'
_BEFORE_ROW = b'{"before":{'
_AFTER = b',"after":'
_SOURCE = b',"source":'
_DELETED = b',"__deleted":"false"'
_KEY_HEADERS = frozenset({"__debezium.newkey", "__debezium.oldkey"})
_ENVELOPE = ("before", "after", "source")
_PER_TOPIC = 8  # table versions remembered per topic (a schema change adds one)

# send(topic, key, value, headers, partition) -> True when it sent the record, False: use the interpreted chain
FastSend = Callable[[str, "bytes | None", "bytes | None", "Headers | None", "int | None"], bool]
# send_row(key, row, headers) -> True when it sent the record made of one change event's `after` row (its JSON
# bytes, as the envelope holds them) with a null `before`; False: send the whole event.
RowSend = Callable[["bytes | None", bytes, Headers], bool]


def _keys(schema: Schema, out: set[str]) -> bool:
    """Adds every struct field name under `schema` to `out`; False if a map (whose keys are data) is there."""
    t = schema.get("type")
    if t == "map":
        return False
    if t == "array":
        return _keys(schema.get("items") or {}, out)
    for f in schema.get("fields") or ():
        out.add(f["field"])
        if not _keys(f, out):
            return False
    return True


class _Plan:
    """One envelope schema's compiled output: the bytes around the cut-out row, and the add.fields to append
    (read from the envelope's tail: source, transaction, op and timestamps)."""

    __slots__ = ("before_row", "close", "envelope", "middle", "prefix", "refs", "suffix", "trim")

    def __init__(self, prefix: bytes, middle: bytes, suffix: bytes, trim: int, before_row: bool,
                 envelope: Schema, refs: list[FieldRef]) -> None:
        self.prefix, self.middle, self.suffix, self.trim = prefix, middle, suffix, trim
        self.before_row, self.envelope, self.refs = before_row, envelope, refs
        self.close = middle + suffix  # what follows the row when no add.fields come between


def _plan(unwrap: ExtractNewRecordState, codec: Codec, vs: Schema | None, value_schemas: bool) -> _Plan | None:
    """The plan for records of envelope schema `vs`, or None when the interpreted chain must take them."""
    if not isinstance(vs, dict) or [f.get("field") for f in (vs.get("fields") or [])][:3] != list(_ENVELOPE):
        return None
    try:
        _, valid, out, refs = unwrap._plan(vs)
    except ValueError:  # a row with its own __deleted field: the interpreted chain reports it
        return None
    if not valid or out is None:
        return None
    # add.fields read from the tail only (never before/after), and hold no doubles the codec would rewrite.
    if any(r.field in ("before", "after") or r.struct not in (None, "source", "transaction") for r in refs) or any(
            f.get("type") in ("float", "double") for f in S.fields(out)[len(S.fields(out)) - len(refs):]):
        return None
    fields = vs["fields"]
    # The row ends where `,"source":` starts, found from the end: nothing after it may hold that text as a key.
    tail: set[str] = set()
    if not all(_keys(f, tail) for f in fields[2:]) or "source" in tail:
        return None
    after = fields[1]
    if after.get("type") != "struct":
        return None
    # The rewrite modes and add.fields append inside the row's braces: an empty row has none to open.
    trim = 1 if unwrap.rewrite or refs else 0
    if trim and not after.get("fields"):
        return None
    # A `before` row ends where `,"after":` first occurs only if no key inside it can be "after".
    inside: set[str] = set()
    before_row = _keys(fields[0], inside) and "after" not in inside
    prefix = b'{"schema":' + codec.schema_json(out) + _MARK if value_schemas else b""
    middle = _DELETED if unwrap.rewrite else b""  # {…row, "__deleted", …add.fields} (unwrap._plan's order)
    suffix = (b"}" if trim else b"") + (b"}" if value_schemas else b"")
    return _Plan(prefix, middle, suffix, trim, before_row, vs, refs)


def _route(steps: list[Callable[[Record], Record | None]], topic: str) -> str | None:
    """The topic after the chain's RegexRouters (the interpreted transforms, on a record holding the topic);
    None when one fails: the interpreted chain then handles the record and its error."""
    r: Record | None = Record(topic, None, None, None, None, None)
    try:
        for step in steps:
            assert r is not None
            r = step(r)
    except Exception:
        return None
    return None if r is None else r.topic


def _compilable(chain: Chain) -> tuple[ExtractNewRecordState, list[Callable[[Record], Record | None]]] | None:
    """The chain's ExtractNewRecordState and RegexRouters, or None when it is not one this module compiles."""
    unwraps = [s.transform for s in chain.steps if isinstance(s.transform, ExtractNewRecordState)]
    routers = [s.transform for s in chain.steps if s.type == REGEX_ROUTER]
    if len(unwraps) != 1 or len(unwraps) + len(routers) != len(chain.steps) \
            or any(s.predicate is not None for s in chain.steps):
        return None
    unwrap = unwraps[0]
    if unwrap.headers or unwrap.route is not None or unwrap.drop_header is not None \
            or not unwrap.replace_null:
        return None
    return unwrap, routers


def compile_rows(chain: Chain, inner: Sink, codec: Codec, key_schemas: bool,
                 value_schemas: bool) -> Callable[[str, bytes], RowSend | None] | None:
    """For a chain this module compiles: `senders(topic, head)`, the `RowSend` of one table version's events
    (`head`: its envelope's bytes up to the payload), or None when that table's records must take `send`."""
    parts = _compilable(chain)
    if parts is None:
        return None
    unwrap, routers = parts

    def senders(topic: str, head: bytes) -> RowSend | None:
        """Cold path, once per table version: the output topic and the bytes around the row."""
        if not head.endswith(_MARK):
            return None
        new_topic = _route(routers, topic)
        if new_topic is None:
            return None
        vs, _ = codec.decode(head + b"null}")
        plan = _plan(unwrap, codec, vs, value_schemas)
        if plan is None or plan.refs:  # add.fields read the envelope's tail: the whole event is needed
            return None
        prefix, close, trim = plan.prefix, plan.close, plan.trim

        def send_row(key: bytes | None, row: bytes, headers: Headers) -> bool:
            if not key_schemas and key is not None:
                k = key.find(_MARK)
                if k < 0:
                    return False
                key = key[k + len(_MARK):-1]
            inner.send(new_topic, key, b"".join((prefix, row[:len(row) - trim], close)), headers, None)
            return True
        return send_row

    return senders


def compile_chain(chain: Chain, inner: Sink, codec: Codec, key_schemas: bool, value_schemas: bool) -> FastSend | None:
    """The compiled send for `chain`, or None when the chain is not one this module compiles."""
    parts = _compilable(chain)
    if parts is None:
        return None
    unwrap, routers = parts
    # topic -> (new topic or None, [(schema bytes up to the payload, plan or None)]); None: not compiled
    topics: dict[str, tuple[str | None, list[tuple[bytes, _Plan | None]]]] = {}

    def learn(topic: str, value: bytes) -> tuple[bytes, _Plan | None] | None:
        """Cold path: the plan for `value`'s schema on `topic`, kept for the records after it."""
        i = value.find(_MARK)
        if i <= 0:
            return None
        known = topics.get(topic)
        if known is None:
            known = topics[topic] = (_route(routers, topic), [])
        vs, _ = codec.decode(value)
        entry = (value[:i + len(_MARK)], _plan(unwrap, codec, vs, value_schemas) if known[0] is not None else None)
        known[1].insert(0, entry)
        del known[1][_PER_TOPIC:]
        return entry

    def fast(topic: str, key: bytes | None, value: bytes | None, headers: Headers | None,
             partition: int | None) -> bool:
        if value is None:
            return False
        known = topics.get(topic)
        entry = None
        if known is not None:
            for e in known[1]:
                if value.startswith(e[0]):
                    entry = e
                    break
        if entry is None:
            entry = learn(topic, value)
            if entry is None:
                return False
            known = topics[topic]
        plan = entry[1]
        if plan is None:
            return False
        h = len(entry[0])
        if value.startswith(_NO_BEFORE, h):
            a = h + len(_NO_BEFORE)
        elif plan.before_row and value.startswith(_BEFORE_ROW, h):
            a = value.find(_AFTER, h) + len(_AFTER)
        else:
            return False
        if value[a] != 123:  # not '{': a null after (a delete, a truncate)
            return False
        end = value.rfind(_SOURCE, a)
        if end < 0:
            return False
        if not key_schemas:
            if headers and any(n in _KEY_HEADERS for n, _ in headers):
                return False
            if key is not None:
                k = key.find(_MARK)
                if k < 0:
                    return False
                key = key[k + len(_MARK):-1]
        assert known is not None and known[0] is not None
        if plan.refs:
            # The tail alone is parsed: `{` + `"source":{…},…,"ts_ns":…}` (the payload's end, not the wrapper's).
            tail = loads(b"{" + value[end + 1:-1])
            added = b"," + dumps({ref.new: ref.value(plan.envelope, tail) for ref in plan.refs})[1:-1]
            out = b"".join((plan.prefix, value[a:end - plan.trim], plan.middle, added, plan.suffix))
        else:
            out = b"".join((plan.prefix, value[a:end - plan.trim], plan.close))
        # `inner.send` looked up per record, as the capture does: a wrapper may replace its own `send`. The
        # headers list is passed on as it came (the interpreted path's is a copy; no sink changes it).
        inner.send(known[0], key, out, headers or [], partition)
        return True

    return fast
