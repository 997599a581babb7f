"""`connector.plugin.version` (Kafka Connect 4.1+, KIP-891): the version range Connect picks the connector's plugin
by, read as Connect reads it (PluginUtils.connectorVersionRequirement: `latest` or unset is any version; a bare
version means exactly that one; otherwise Maven's VersionRange syntax), and compared with the Debezium release whose
events pgcdc writes. Versions are ordered as Maven's ComparableVersion orders them (numbers, then qualifiers:
alpha < beta < milestone < rc = cr < snapshot < release = final = ga < sp < any other), without its nested lists.
"""

from __future__ import annotations

import re

from pgcdc.envelope.source import DEBEZIUM_VERSION

_QUALIFIERS = {"alpha": 0, "a": 0, "beta": 1, "b": 1, "milestone": 2, "m": 2, "rc": 3, "cr": 3, "snapshot": 4,
               "": 5, "ga": 5, "final": 5, "release": 5, "sp": 6}
Item = tuple[int, int, str]  # (kind: 1 number / 0 qualifier, value or rank, unknown qualifier text)


def _items(version: str) -> list[Item]:
    items: list[Item] = []
    for tok in re.findall(r"\d+|[a-z]+", version.strip().lower()):
        if tok.isdigit():
            items.append((1, int(tok), ""))
        else:
            rank = _QUALIFIERS.get(tok)
            items.append((0, 7, tok) if rank is None else (0, rank, ""))
    while items and items[-1] in ((1, 0, ""), (0, 5, "")):  # 3.6.0.Final is 3.6
        items.pop()
    return items


def compare(a: str, b: str) -> int:
    """-1, 0 or 1, as ComparableVersion(a).compareTo(ComparableVersion(b)) for flat versions."""
    x, y = _items(a), _items(b)
    pad: Item = (1, 0, "")
    for i in range(max(len(x), len(y))):
        p = x[i] if i < len(x) else pad
        q = y[i] if i < len(y) else pad
        if p == q:
            continue
        if p[0] != q[0]:  # a number beats a qualifier, except that padding meets a qualifier as a release
            if p == pad and i >= len(x):
                return -1 if q[1] > 5 else 1
            if q == pad and i >= len(y):
                return 1 if p[1] > 5 else -1
            return 1 if p[0] > q[0] else -1
        return 1 if (p[1], p[2]) > (q[1], q[2]) else -1
    return 0


def _restrictions(spec: str) -> list[tuple[str | None, bool, str | None, bool]]:
    """Maven's VersionRange.createFromVersionSpec: (lower, lower inclusive, upper, upper inclusive) per set."""
    out: list[tuple[str | None, bool, str | None, bool]] = []
    rest = spec
    while rest.startswith(("[", "(")):
        end = min((i for i in (rest.find("]"), rest.find(")")) if i >= 0), default=-1)
        if end < 0:
            raise ValueError(f"Unbounded range: {spec}")
        body, lo_inc, hi_inc = rest[1:end], rest[0] == "[", rest[end] == "]"
        if "," not in body:
            if not (lo_inc and hi_inc):
                raise ValueError(f"Single version must be surrounded by []: {spec}")
            out.append((body.strip(), True, body.strip(), True))
        else:
            lo, hi = (s.strip() or None for s in body.split(",", 1))
            order = compare(lo, hi) if lo is not None and hi is not None else -1
            if order > 0:
                raise ValueError(f"Range defies version ordering: {spec}")
            if order == 0 and not (lo_inc and hi_inc):
                raise ValueError(f"Range cannot have identical boundaries: {spec}")
            out.append((lo, lo_inc, hi, hi_inc))
        rest = rest[end + 1:].strip().removeprefix(",").strip()
    if rest:
        raise ValueError(f"Only fully-qualified sets allowed in multiple set scenario: {spec}" if out
                         else f"Unbounded range: {spec}")
    return out


def contains(spec: str, version: str) -> bool:
    for lo, lo_inc, hi, hi_inc in _restrictions(spec):
        above = lo is None or compare(version, lo) > (-1 if lo_inc else 0)
        below = hi is None or compare(version, hi) < (1 if hi_inc else 0)
        if above and below:
            return True
    return False


def connector_version_problem(value: str) -> str | None:
    text = value.strip()
    if not text or text == "latest":
        return None
    spec = text if text.startswith(("[", "(")) else f"[{text}]"  # a bare version is that version only
    try:
        if contains(spec, DEBEZIUM_VERSION):
            return None
    except ValueError as exc:
        return f"bad version range: {exc}"
    return (f"pgcdc writes the events of Debezium {DEBEZIUM_VERSION}, which {text!r} leaves out; "
            f"remove it or name {DEBEZIUM_VERSION}")


def converter_version_problem(value: str) -> str | None:
    """`key.converter.plugin.version` and its siblings (KIP-891): pgcdc's converters are built in, one version
    each, so only `latest` (Connect's newest installed) or unset asks for nothing pgcdc cannot give."""
    text = value.strip()
    if not text or text == "latest":
        return None
    try:
        _restrictions(text if text.startswith(("[", "(")) else f"[{text}]")
    except ValueError as exc:
        return f"bad version range: {exc}"
    return ("pgcdc's converters are built in (docs/configuration.md, Converters), no version of one can be "
            "chosen; remove it or use latest")
