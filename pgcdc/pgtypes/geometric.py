"""PostgreSQL's geometric types other than point (line, lseg, box, path, polygon, circle), and PostGIS.

Debezium 3.6 has no logical type for them: with include.unknown.datatypes=false it leaves the column out of
the schema and the values (a warning "Unexpected JDBC type '1111'", no error); with true it writes the text of
the pgjdbc object (PGline, PGbox, ...) as bytes. Those classes print the same layout as PostgreSQL, with each
coordinate through Java's Double.toString: '{1,2,3}' becomes '{1.0,2.0,3.0}', '1e-05' becomes '1.0E-5'
(measured, streaming and snapshot alike). Arrays of them are arrays of such bytes; arrays of point are left
out in both settings (measured).
"""

from __future__ import annotations

import base64
import re
import struct
from typing import Any

from pgcdc.pgtypes import numbers

TYPES = frozenset({"line", "lseg", "box", "path", "polygon", "circle"})
ARRAY_DELIMITER = {"box": ";"}  # pg_type.typdelim: box arrays separate elements with ';'

_NUMBER = re.compile(r"-?(?:Infinity|NaN|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def _java(m: re.Match[str]) -> str:
    text = m.group(0)
    if text[-1] in "yN":  # Infinity, -Infinity, NaN: Double.toString spells them as PostgreSQL does
        return text
    return numbers.java_double_text(text)


def java_text(text: str) -> str:
    """PostgreSQL's text of a geometric value with every coordinate as Java's Double.toString writes it."""
    return _NUMBER.sub(_java, text)


def as_bytes(text: str) -> str:
    """include.unknown.datatypes=true: the pgjdbc text as Connect bytes (base64 in JSON)."""
    return base64.b64encode(java_text(text).encode()).decode()


# -- PostGIS -------------------------------------------------------------------------------------------------
# pgoutput sends geometry and geography as hex EWKB. Debezium 3.6 keeps those bytes as they are (the SRID stays
# inside them, with its flag) and copies the SRID out, null when the EWKB has none; binary.handling.mode and
# include.unknown.datatypes change nothing, and snapshots read the same (measured).
_EWKB_SRID_FLAG = 0x20000000
POSTGIS_DELIMITER = ":"  # pg_type.typdelim of geometry and geography


def postgis_schema(kind: str) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {"type": "bytes", "optional": False, "field": "wkb"},
            {"type": "int32", "optional": True, "field": "srid"},
        ],
        "name": f"io.debezium.data.geometry.{kind}",
        "version": 1,
        "doc": kind,
    }


def ewkb(text: str) -> dict[str, Any]:
    """io.debezium.data.geometry.Geometry / Geography of a hex EWKB value."""
    raw = bytes.fromhex(text)
    order = "<" if raw[0] == 1 else ">"
    (kind,) = struct.unpack_from(order + "I", raw, 1)
    srid = struct.unpack_from(order + "i", raw, 5)[0] if kind & _EWKB_SRID_FLAG else None
    return {"wkb": base64.b64encode(raw).decode(), "srid": srid}
