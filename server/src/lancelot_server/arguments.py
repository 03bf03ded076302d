"""The tools' arguments as their schemas publish them, and what is said when a call does not fit them.

Pydantic only: `app.py` turns these types into the tools' input schemas, and `schemas/strict.py` checks every
`tools/call` against them before the SDK sees it. Integers are strict (no `"3"`, no `true`) and every string has a
maximum, so that the schema a client reads is exactly what the server accepts; a refusal names the
argument and never echoes more than a short prefix of a value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, Strict, Tag, ValidationError
from pydantic_core import PydanticCustomError

from lancelot_server.errors import shown, shown_number
from lancelot_server.reading.read import MAX_AROUND, MAX_BUDGET, MIN_BUDGET
from lancelot_server.replies import Mode
from lancelot_server.search.filters import (
    DATE_FORMS,
    DATE_PATTERN,
    FEWER_TAGS,
    MAX_TAGS,
    MAX_TYPES,
    date_problem,
)
from lancelot_server.storage.tables import MAX_TABLES
from lancelot_server.tools import (
    DEFAULT_PER_DOCUMENT,
    MAX_LIMIT,
    MAX_QUERIES,
    MAX_QUERY,
    MIN_LIMIT,
    QUERY_LIMIT,
    SEARCH_LIMIT,
)

# Longest id, source or path prefix accepted: a path of 4,096 bytes (PATH_MAX) and a passage number.
MAX_ADDRESS = 4200
# Longest table name: LanceDB's own limit (lancelot_schema.layout.table_name_problem).
MAX_TABLE = 249
# Longest tool name `tools/call` may name in a message: ours are 15 characters.
SHOWN_NAME = 40


def _whole(value: Any) -> Any:
    # JSON Schema's `integer` admits 3.0; the strict check after this refuses "3", true and 3.5.
    return int(value) if isinstance(value, float) and value.is_integer() else value


# Integers as the schemas publish them: JSON numbers with no fraction, never strings or booleans. The bounds
# come before the fraction check, so that the published schema shows them as minimum and maximum.
STRICT, WHOLE = Strict(), BeforeValidator(_whole)

Phrasing = Annotated[str, Field(min_length=1, max_length=MAX_QUERY)]
# Optional in the schema: exactly one of query and queries is given, which the tool checks (`tools._phrasings`).
Query = Annotated[
    Phrasing | None, Field(description="What to search for: words or a question (or pass queries instead).")
]


def _few_enough_phrasings(value: Any) -> Any:
    # Before pydantic's own `max_length` check (which the published schema shows), to say what to do instead.
    if isinstance(value, list) and len(value) > MAX_QUERIES:
        raise PydanticCustomError(
            "too_many_queries",
            "Input should list at most {most} phrasings; keep the {most} that differ most",
            {"most": MAX_QUERIES},
        )
    return value


def _distinct_phrasings(phrasings: list[str] | None) -> list[str] | None:
    trimmed = [phrasing.strip() for phrasing in phrasings or []]
    for position, phrasing in enumerate(trimmed):
        if phrasing in trimmed[:position]:
            raise PydanticCustomError(
                "distinct",
                "Phrasings must differ; [{position}] repeats [{first}] once trimmed: drop the repeat or reword it",
                {"position": position, "first": trimmed.index(phrasing)},
            )
    return phrasings


Queries = Annotated[
    list[Phrasing] | None,
    Field(
        min_length=1,
        max_length=MAX_QUERIES,
        json_schema_extra=lambda schema: _unique_items(schema["anyOf"][0]),
        description=f"In place of query: 1 to {MAX_QUERIES} distinct phrasings of what to search for (keywords, a "
        "question, a name), searched together and their hits fused; each hit's `queries` lists the positions (from 0) "
        "of the phrasings that found it.",
    ),
    BeforeValidator(_few_enough_phrasings),
    AfterValidator(_distinct_phrasings),
]
SearchMode = Annotated[
    Mode,
    Field(
        description="auto: hybrid when it can run, else vector, else text; text: full-text (BM25) or substring; "
        "vector: embeddings; hybrid: text and vector rankings fused by their scaled scores."
    ),
]
OneTable = Annotated[str, Field(min_length=1, max_length=MAX_TABLE)]
TableName = Annotated[OneTable | None, Field(description="Table to read; default from LANCEDB_TABLE.")]


def _distinct(names: list[str]) -> list[str]:
    for position, name in enumerate(names):
        if name in names[:position]:
            raise PydanticCustomError(
                "distinct", "Table names must be distinct; {name} is named twice", {"name": shown(name)}
            )
    return names


def _unique_items(schema: dict[str, Any]) -> None:
    schema["uniqueItems"] = True


def _tables_kind(value: Any) -> str | None:
    return ONE if isinstance(value, str) else SEVERAL if isinstance(value, list) else None


# The branch names of a discriminated union, which pydantic puts in an error's location: left out of messages.
ONE, SEVERAL = "one table", "several tables"
SeveralTables = Annotated[
    list[OneTable],
    Field(min_length=1, max_length=MAX_TABLES, json_schema_extra=_unique_items),
    AfterValidator(_distinct),
]
# One name or a list, told apart by the value's type: a refusal then speaks of the form that was sent, where a
# plain union would report both forms' errors.
TableNames = Annotated[
    Annotated[
        Annotated[OneTable, Tag(ONE)] | Annotated[SeveralTables, Tag(SEVERAL)],
        Discriminator(
            _tables_kind,
            custom_error_type="table_type",
            custom_error_message=f"Input should be a table name or a list of 1 to {MAX_TABLES} table names",
        ),
    ]
    | None,
    Field(
        description=f"Table to search, or a list of up to {MAX_TABLES} distinct tables (default from LANCEDB_TABLE; "
        "lancedb_status lists the tables). Several tables are searched each in its own way and their hits merged "
        "by rank (each table's first hit, then each table's second...); each hit names its table."
    ),
]
PathPrefix = Annotated[
    str | None,
    Field(max_length=MAX_ADDRESS, description="Only hits whose source starts with this prefix, matched literally."),
]
Limit = Annotated[int, Field(ge=MIN_LIMIT, le=MAX_LIMIT), STRICT, WHOLE]
BudgetSize = Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET), STRICT, WHOLE]
Around = Annotated[int, Field(ge=0, le=MAX_AROUND), STRICT, WHOLE]
Count = Annotated[int, Field(ge=0), STRICT, WHOLE]

Budget = Annotated[BudgetSize, Field(description="Maximum characters of the Markdown reply.")]
SearchLimit = Annotated[Limit, Field(description=f"Most hits to return (default {SEARCH_LIMIT}).")]
PerDocument = Annotated[
    Limit,
    Field(
        description=f"Most passages of one document in the reply (default {DEFAULT_PER_DOCUMENT}); raise it to see "
        "several passages of one page, lancedb_read to read a page on.",
    ),
]
QueryLimit = Annotated[Limit, Field(description=f"Most passages to return (default {QUERY_LIMIT}).")]

# The metadata filters (`filters.py`). A tag is matched whole, once normalised (at most layout.MAX_TAG characters):
# this is room for its spaces and case.
MAX_TAG_ARGUMENT = 200


def _date(value: str) -> str:
    problem = date_problem(value)
    if problem is not None:
        raise PydanticCustomError(
            "date", "Input should be a date, {forms}: {problem}", {"forms": DATE_FORMS, "problem": problem}
        )
    return value


def _few_enough_tags(value: Any) -> Any:
    # Before pydantic's own `max_length` check (which the published schema shows), to say what to do instead.
    if isinstance(value, list) and len(value) > MAX_TAGS:
        raise PydanticCustomError(
            "too_many_tags", "Input should list at most {most} tags; {advice}", {"most": MAX_TAGS, "advice": FEWER_TAGS}
        )
    return value


Tags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_ARGUMENT)]] | None,
    Field(
        min_length=1,
        max_length=MAX_TAGS,
        description="Only documents with these tags: their front matter's tags, keywords or categories, or the "
        "keywords of an HTML page, PDF or Word document; a tag is matched whole, in any case. Any of them, unless "
        "tagMatch is all.",
    ),
    BeforeValidator(_few_enough_tags),
]
TagMatch = Annotated[
    Literal["any", "all"],
    Field(description="With tags: any (default), documents with at least one; all, with every one."),
]
Day = Annotated[str, Field(max_length=10, json_schema_extra={"pattern": DATE_PATTERN}), AfterValidator(_date)]
Since = Annotated[
    Day | None,
    Field(
        description=f"Only documents dated on or after this day ({DATE_FORMS}: its first day). A document's date is "
        "its front matter's date (or published, created), an HTML page's date meta, a PDF's or Word document's "
        "creation date; undated documents are left out.",
    ),
]
Until = Annotated[
    Day | None, Field(description=f"Only documents dated on or before this day ({DATE_FORMS}: its last day).")
]
FileType = Literal["docx", "html", "md", "pdf", "rst", "txt"]
FileTypes = Annotated[
    list[FileType] | None,
    Field(
        min_length=1,
        max_length=MAX_TYPES,
        description="Only documents of these file types (md: .md and .markdown; html: .html and .htm; txt: text).",
    ),
]


PassageId = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_ADDRESS,
        description="A hit's id, as lancedb_search returns it: read that passage and the passages around it.",
    ),
]
Source = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_ADDRESS,
        description="A document's source, as a hit's `source`: read the document from its start (or from `from`).",
    ),
]
Before = Annotated[Around | None, Field(description="With id: passages before it to include (default 1).")]
After = Annotated[Around | None, Field(description="With id: passages after it to include (default 2).")]
From = Annotated[
    Count | None,
    Field(
        alias="from",
        description="With source: the passage number to start at, as a reply's `next` gives it (default 0).",
    ),
]
Offset = Annotated[
    Count | None,
    Field(description="With from: characters into that passage to start at, to go on after a cut passage."),
]
ReadBudget = Annotated[BudgetSize, Field(description="Maximum characters of the reply's Markdown text.")]


def _problem(error: Any, parameters: list[str]) -> str:
    """One argument problem in words, without echoing a long value back."""
    name = _where(error["loc"])
    if error["type"] == "extra_forbidden":
        return f"{name} is not a parameter (parameters: {', '.join(parameters) or 'none'})"
    if error["type"] == "missing":
        return f"{name} is required"
    value = error.get("input")
    if isinstance(value, str) and len(value) > 40:
        got = f"{len(value):,} characters"
    elif isinstance(value, int) and not isinstance(value, bool):
        got = shown_number(value)
    elif isinstance(value, str | bool | float) or value is None:
        got = repr(value)
    else:
        got = _kind(value)
    return f"{name}: {error['msg']} (got {got})"


def _where(location: tuple[Any, ...]) -> str:
    """An error's location as a client wrote it: `table[1]`, without the union branch pydantic names."""
    where = ""
    for part in location:
        if part in (ONE, SEVERAL):
            continue
        where += f"[{part}]" if isinstance(part, int) else f"{'.' if where else ''}{part}"
    return where or "arguments"


def invalid_arguments(tool: str, schema: dict[str, Any], exc: ValidationError) -> str:
    """Every argument problem of one call, in one message."""
    parameters = list(schema.get("properties", {}))
    problems = "; ".join(_problem(error, parameters) for error in exc.errors())
    return f"Invalid arguments for {tool}: {problems}."


def call_problem(params: Any, tools: list[str]) -> str | None:
    """What is wrong with the shape of a `tools/call` (no tool name, arguments that are not an object), or None.

    The SDK answers these with a protocol error; a tool error with the reason is what every other
    request problem gets, and what a client shows to its model.
    """
    names = ", ".join(tools)
    if not isinstance(params, dict):
        return f"tools/call needs params with `name` (one of {names}) and `arguments` (an object)."
    name = params.get("name")
    if not isinstance(name, str):
        return f"tools/call needs `name`, the tool to call (one of {names}); got {_kind(name)}."
    if name not in tools:
        return f"Unknown tool {shown(name, SHOWN_NAME)}; the tools are {names}."
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return f"Invalid arguments for {name}: arguments must be an object of named parameters; got {_kind(arguments)}."
    return None


def _kind(value: Any) -> str:
    """A JSON value's type in words, for a message that must not echo the value itself."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return f"an array of {len(value):,} item{'' if len(value) == 1 else 's'}"
    kinds = {
        bool: "a boolean",
        str: "a string",
        list: "an array",
        dict: "an object",
        int: "a number",
        float: "a number",
    }
    return kinds.get(type(value), type(value).__name__)
