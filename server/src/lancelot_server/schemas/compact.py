"""The tools' output schemas in a shape clients check quickly: the same JSON Schema, fewer steps per value.

Every structured reply is checked against its tool's output schema by the MCP SDK's Python client (`jsonschema`,
interpreted on each call). Pydantic writes the schemas with a `$ref` per hit and `anyOf: [{type: string},
{type: null}]` per nullable field: each a step of its own, resolved or descended into for every hit of every reply.
`compact` inlines the references and writes such an `anyOf` as one `type` list, which accepts exactly the same
values, and a reply is checked faster (docs/decisions.md, "Warm searches"; bench/call_costs.py). It also
drops pydantic's `title`s, the field names capitalised ("Id", "Heading"), which say nothing the names do not.
"""

from __future__ import annotations

from typing import Any

_DEFS = "#/$defs/"


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its `$defs` inlined and each `anyOf` of bare types as one type list; `schema` itself when a
    definition refers to itself (a recursive schema cannot be inlined) or to anything but its `$defs`."""
    definitions = schema.get("$defs", {})
    try:
        shaped: dict[str, Any] = _shaped(schema, definitions, ())
    except _Unfoldable:
        return schema
    shaped.pop("$defs", None)
    return shaped


class _Unfoldable(Exception):
    pass


def _shaped(node: Any, definitions: dict[str, Any], inside: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_shaped(item, definitions, inside) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if reference is not None:
        name = reference.removeprefix(_DEFS) if isinstance(reference, str) else ""
        if len(node) > 1 or name == reference or name not in definitions or name in inside:
            raise _Unfoldable
        return _shaped(definitions[name], definitions, (*inside, name))
    shaped = {
        key: _shaped(value, definitions, inside) if key not in _LITERAL else value
        for key, value in node.items()
        if not (key == "title" and isinstance(value, str)) and key != "$defs"
    }
    alternatives = shaped.get("anyOf")
    if "type" not in shaped and isinstance(alternatives, list) and alternatives and all(map(_bare, alternatives)):
        kinds = list(dict.fromkeys(item["type"] for item in alternatives))
        del shaped["anyOf"]
        shaped["type"] = kinds[0] if len(kinds) == 1 else kinds
    return shaped


# Keywords whose value is data, not a schema: a property named "title" or a default holding "$ref" stay as they are.
_LITERAL = frozenset(("enum", "const", "default", "examples", "required"))


def _bare(item: Any) -> bool:
    return isinstance(item, dict) and set(item) == {"type"} and isinstance(item["type"], str)
