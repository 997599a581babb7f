"""PostgreSQL array literals ('{1,2,NULL}', '{{"a b","c\\"d"}}') parsed into nested lists of element texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def parse_array(text: str, delim: str = ",") -> list[Any]:
    """Nested lists of element strings; unquoted NULL becomes None. A '[1:2]=' bounds prefix is ignored."""
    if text.startswith("["):
        text = text[text.index("=") + 1:]
    if text == "{}":
        return []
    pos = 0
    n = len(text)

    def parse_level() -> list[Any]:
        nonlocal pos
        if text[pos] != "{":
            raise ValueError(f"malformed array literal: {text!r}")
        pos += 1
        out: list[Any] = []
        while pos < n:
            c = text[pos]
            if c == "{":
                out.append(parse_level())
            elif c == '"':
                pos += 1
                buf = []
                while text[pos] != '"':
                    if text[pos] == "\\":
                        pos += 1
                    buf.append(text[pos])
                    pos += 1
                pos += 1
                out.append("".join(buf))
            else:
                start = pos
                while text[pos] not in (delim, "}"):
                    pos += 1
                token = text[start:pos].strip()
                out.append(None if token == "NULL" else token)
            if text[pos] == delim:
                pos += 1
            elif text[pos] == "}":
                pos += 1
                return out
        raise ValueError(f"malformed array literal: {text!r}")

    try:
        result = parse_level()
    except IndexError:
        raise ValueError(f"malformed array literal: {text!r}") from None
    return result


def array_converter(element: Callable[[str], Any] | None, delim: str = ",") -> Callable[[str], Any]:
    """Convert an array literal with `element` applied to every non-null leaf (multi-dimensional flattened
    the way Debezium does: nested lists are kept as nested arrays)."""

    def convert_level(items: list[Any]) -> list[Any]:
        # Debezium 3.6 writes each inner array of a multi-dimensional array as null (measured).
        return [None if v is None or isinstance(v, list) else (element(v) if element else v) for v in items]

    def convert(text: str) -> list[Any]:
        return convert_level(parse_array(text, delim))

    return convert
