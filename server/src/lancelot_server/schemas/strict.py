"""The tools' input schemas made strict, and every `tools/call` checked against them before the SDK sees it.

Pydantic and plain values, no SDK: `app.py` hands in each tool's argument model and publishes the stricter one,
and asks `refusal` about each call. The SDK's argument model ignores unknown names, so a misspelt `limt` would
pass unnoticed; it refuses a call without a tool name, or with arguments that are not an object, with a protocol
error, and bad arguments with pydantic's report, links and all. Here each is a tool error that names what is
wrong and what it must be.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import structlog
from pydantic import BaseModel, ConfigDict, ValidationError

from lancelot_server.arguments import call_problem, invalid_arguments

log = structlog.get_logger("lancelot.server")
M = TypeVar("M", bound=BaseModel)


def refusing_unknown(model: type[M]) -> type[M]:
    """`model` refusing arguments it does not declare; its JSON schema says so (`additionalProperties: false`)."""
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return cast(type[M], type(model.__name__, (model,), {"model_config": config}))


@dataclass(frozen=True)
class Declared:
    """One tool's arguments as published: its input schema, and the check of a call's arguments against it."""

    schema: dict[str, Any]
    check: Callable[[dict[str, Any]], object]  # raises pydantic's ValidationError


def refusal(params: Any, tools: Mapping[str, Declared]) -> str | None:
    """What a `tools/call` with `params` is refused with, or None when it names a tool and fits its schema."""
    problem = call_problem(params, list(tools))
    if problem is not None or params is None:  # (a call without params always has a problem)
        log.info("tool refused", reason="malformed call")
        return problem or ""
    name = params["name"]
    try:
        tools[name].check(params.get("arguments") or {})
    except ValidationError as exc:
        log.info("tool refused", tool=name, reason="invalid arguments")
        return invalid_arguments(name, tools[name].schema, exc)
    return None
