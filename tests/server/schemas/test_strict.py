"""The input schemas made strict and each `tools/call` checked, without the SDK (the SDK's side: test_app.py)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from lancelot_server.schemas.strict import Declared, refusal, refusing_unknown


class Arguments(BaseModel):
    query: str
    limit: Annotated[int, Field(ge=1, le=50)] = 10


STRICT = refusing_unknown(Arguments)
TOOLS = {"search": Declared(STRICT.model_json_schema(by_alias=True), STRICT.model_validate)}


def test_a_strict_model_refuses_unknown_names_and_its_schema_says_so():
    assert STRICT.model_json_schema()["additionalProperties"] is False
    assert STRICT(query="chain").limit == 10
    assert "additionalProperties" not in Arguments.model_json_schema()


def test_a_call_that_fits_its_schema_is_not_refused():
    assert refusal({"name": "search", "arguments": {"query": "chain", "limit": 3}}, TOOLS) is None


@pytest.mark.parametrize(
    ("params", "said"),
    [
        (None, "tools/call needs params with `name` (one of search)"),
        ({"arguments": {}}, "tools/call needs `name`, the tool to call (one of search); got null."),
        ({"name": "find"}, "Unknown tool 'find'; the tools are search."),
        ({"name": "search", "arguments": [1]}, "arguments must be an object of named parameters; got an array"),
        ({"name": "search", "arguments": {"query": "a", "limt": 3}}, "limt is not a parameter (parameters: query"),
        ({"name": "search", "arguments": {"query": "a", "limit": 99}}, "Invalid arguments for search: limit:"),
        ({"name": "search"}, "Invalid arguments for search: query is required."),
    ],
)
def test_a_call_that_does_not_fit_is_refused_with_what_is_wrong(params, said):
    assert said in (refusal(params, TOOLS) or "")
