import copy
import json

import jsonschema
import pytest
from pydantic import TypeAdapter
from tests.server.test_app import call, listed

from lancelot_schema import layout
from lancelot_server.replies import SearchReply, StatusReply, TableMetadata
from lancelot_server.schemas.compact import compact


def verdicts(schema, instances):
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [validator.is_valid(instance) for instance in instances]


def spoilt(reply):
    """Copies of a valid search reply, each wrong in one way the schema forbids."""
    cases = []
    for path, value in [
        (("hits", 0, "id"), 5),
        (("hits", 0, "title"), ["a"]),
        (("hits", 0, "score"), "high"),
        (("hits", 0, "passage"), "1"),
        (("hits", 0, "lines"), ["1", 2]),
        (("hits", 0, "metadata"), "none"),
        (("hits", 0, "queries"), ["0"]),
        (("queries",), [1]),
        (("mode",), "fuzzy"),
        (("count",), None),
    ]:
        case = copy.deepcopy(reply)
        *parents, last = path
        target = case
        for key in parents:
            target = target[key]
        target[last] = value
        cases.append(case)
    without_text = copy.deepcopy(reply)
    del without_text["hits"][0]["text"]
    return [*cases, without_text]


def test_the_compact_search_schema_accepts_and_refuses_what_pydantics_does(lancelot_db):
    original = TypeAdapter(SearchReply).json_schema()
    reply = call(
        lancelot_db, "lancedb_search", {"queries": ["escaping air", "chain"], "mode": "text"}
    ).structured_content
    assert reply["hits"][0]["queries"] == [0]
    nulls = copy.deepcopy(reply)
    nulls["hits"][0].update(id=None, title=None, source=None, heading=None)
    one = call(lancelot_db, "lancedb_search", {"query": "escaping air", "mode": "text"}).structured_content
    instances = [reply, nulls, one, *spoilt(reply)]
    expected = [True, True, True] + [False] * (len(instances) - 3)
    assert verdicts(original, instances) == expected
    assert verdicts(compact(original), instances) == expected


def test_published_output_schemas_have_no_references_or_bare_type_alternatives(lancelot_db):
    tools = listed(lancelot_db)
    for name in ("lancedb_search", "lancedb_read", "lancedb_status", "lancedb_version"):
        text = json.dumps(tools[name].output_schema)
        assert "$ref" not in text and "$defs" not in text, name
        assert '"anyOf": [{"type": "string"}, {"type": "null"}]' not in text, name
    hit = tools["lancedb_search"].output_schema["properties"]["hits"]["items"]
    assert hit["properties"]["id"] == {"type": ["string", "null"]}
    assert "title" in hit["properties"] and "title" in hit["required"]  # a property named title is kept
    status = call(lancelot_db, "lancedb_status", {}).structured_content
    jsonschema.validate(status, tools["lancedb_status"].output_schema)
    assert verdicts(compact(TypeAdapter(StatusReply).json_schema()), [status, {**status, "table": 3}]) == [True, False]


def test_the_status_schema_declares_every_stamped_key_text_but_the_exclude_patterns_a_list(lancelot_db):
    assert set(TableMetadata.__annotations__) == {key.removeprefix("lancelot.") for key in layout.METADATA_KEYS}
    table = listed(lancelot_db)["lancedb_status"].output_schema["properties"]["table"]
    declared = table["properties"]["metadata"]["properties"]
    assert declared.pop("exclude") == {"type": "array", "items": {"type": "string"}}
    assert len(declared) == len(layout.METADATA_KEYS) - 1
    assert all(value == {"type": "string"} for value in declared.values())
    status = call(lancelot_db, "lancedb_status", {}).structured_content
    assert status["table"]["metadata"]["exclude"] == []


def test_data_inside_a_schema_is_left_as_it_is():
    schema = {
        "type": "object",
        "title": "Reply",
        "properties": {"kind": {"enum": [{"title": "x"}], "default": {"$ref": "#/$defs/Nothing", "title": "t"}}},
    }
    assert compact(schema) == {
        "type": "object",
        "properties": {"kind": {"enum": [{"title": "x"}], "default": {"$ref": "#/$defs/Nothing", "title": "t"}}},
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}}}, "$ref": "#/$defs/Node"},
        {"properties": {"a": {"$ref": "https://example.com/other.json"}}},
        {"properties": {"a": {"$ref": "#/$defs/Missing"}}},
        {"$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A", "description": "beside"}}},
    ],
)
def test_a_schema_that_cannot_be_inlined_is_published_as_it_is(schema):
    assert compact(schema) is schema


def test_alternatives_that_are_more_than_types_stay_alternatives():
    schema = {"anyOf": [{"type": "integer", "maximum": 20}, {"type": "null"}], "default": None}
    assert compact(schema) == schema
    assert compact({"anyOf": [{"type": "integer"}, {"type": "integer"}]}) == {"type": "integer"}
