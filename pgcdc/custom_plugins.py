"""Debezium's custom converters (`converters`) and post processors (`post.processors`): Java classes named by
`<name>.type`, with their options under `<name>.*`. pgcdc runs no Java, and silently leaving them out would write
different records from Debezium's, so a non-empty list is refused with one line naming the classes and what to do
instead; the `<name>.*` properties are taken with it (not reported again as unknown)."""

from __future__ import annotations

from collections.abc import Mapping

_WHY = {
    "converters": "Debezium custom converters are Java classes ({classes}) that pgcdc cannot run; change the values "
                  "after capture with a single message transform (transforms.*), or remove the property",
    "post.processors": "Debezium post processors ({classes}) are not supported; for unchanged TOAST values "
                       "(ReselectColumnsPostProcessor's use), REPLICA IDENTITY FULL on the table makes updates carry "
                       "them, or remove the property",
}


def refuse_custom_plugins(props: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the properties without the plugins' own, one problem per non-empty plugin list)."""
    out, problems = dict(props), []
    for prop, why in _WHY.items():
        names = [n.strip() for n in props.get(prop, "").split(",") if n.strip()]
        out.pop(prop, None)  # an empty list names no plugin: nothing to do, as in Debezium
        if not names:
            continue
        owned = [k for k in props if any(k.startswith(f"{n}.") for n in names)]
        classes = ", ".join(props.get(f"{n}.type", f"{n}.type unset") for n in names)
        for k in owned:
            out.pop(k, None)
        problems.append(f"{prop}: {', '.join(names)}: {why.format(classes=classes)}")
    return out, problems
