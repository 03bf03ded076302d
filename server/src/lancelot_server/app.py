"""The MCP server: the five tools published with annotations, input and output schemas, and the documents as
resources. The only module importing mcp.

`build_server(settings)` returns an `MCPServer` that stdio (`cli.py`), Streamable HTTP (`http/serve.py`) and
Lambda (`lambda_handler.py`) all serve. Every `LancelotError` becomes a tool result with `isError: true`
here, in one place; so does an argument outside the declared schema (`schemas/strict.py` says what is wrong).
Each tool's description and the instructions name the tables served (`storage/described.py`), as of each request.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import weakref
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

import anyio
import structlog
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    CallToolResult,
    DiscoverResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    RequestParams,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp.types import Tool as MCPTool
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from lancelot_schema.settings import Settings
from lancelot_server import __version__
from lancelot_server.arguments import (
    After,
    Before,
    Budget,
    FileTypes,
    From,
    Offset,
    PassageId,
    PathPrefix,
    PerDocument,
    Queries,
    Query,
    QueryLimit,
    ReadBudget,
    SearchLimit,
    SearchMode,
    Since,
    Source,
    TableName,
    TableNames,
    TagMatch,
    Tags,
    Until,
)
from lancelot_server.errors import LancelotError
from lancelot_server.reading import resources
from lancelot_server.reading.read import DEFAULT_BUDGET, Reading, ReadReply
from lancelot_server.replies import SearchReply, StatusReply, VersionReply
from lancelot_server.schemas import strict
from lancelot_server.schemas.compact import compact
from lancelot_server.search.filters import Filters
from lancelot_server.stdio import ScrubbedLines
from lancelot_server.storage import described
from lancelot_server.storage.store import Store
from lancelot_server.tools import DEFAULT_PER_DOCUMENT, QUERY_LIMIT, SEARCH_LIMIT, Tools

log = structlog.get_logger("lancelot.server")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "Lancelot searches a folder of documents indexed into LanceDB. Use lancedb_search for JSON hits with "
    "sources and scores, lancedb_query for a Markdown block of passages that fits a character budget, "
    "lancedb_read to read on from a hit (its neighbouring passages, or the whole document in budgeted "
    "parts), lancedb_status to see what is indexed (the tables you may search) and which search types can "
    "run, lancedb_version for versions. Each document is also a resource (lancelot://TABLE/SOURCE). All "
    "tools are read-only."
)


def _annotations(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def _refusal(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _answer(tool: str, produce: Callable[[], Any], *, as_json: bool) -> CallToolResult:
    """Run one tool body; its reply, or its error as `isError` text. The one place errors are converted."""
    try:
        value = produce()
    except LancelotError as exc:
        log.info("tool refused", tool=tool, reason=str(exc))
        return _refusal(str(exc))
    except Exception as exc:
        log.exception("tool failed", tool=tool)
        message = f"{tool} failed unexpectedly ({type(exc).__name__}: {exc}). The server log on stderr has details."
        return _refusal(message)
    if isinstance(value, Reading):
        # The Markdown is what an assistant reads; the same passages are the structured content.
        return CallToolResult(content=[TextContent(type="text", text=value.text)], structured_content=value.reply)
    if not as_json:
        return CallToolResult(content=[TextContent(type="text", text=value)])
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)


_TITLES: dict[str, str] = {}
_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def _titled(title: str) -> Callable[[F], F]:
    """Publish a method of `Published` as a tool with this title."""

    def publish(method: F) -> F:
        _TITLES[method.__name__] = title
        return method

    return publish


class Published:
    """The tools as the SDK publishes them, over one `Tools`: each `@_titled` method is one tool, its name the
    tool's, its signature the input schema, its return type the output schema and its docstring the description.
    Adding a tool: its body in `tools.py`, its arguments in `arguments.py`, its reply in `replies.py`, a method here.
    """

    def __init__(self, tools: Tools) -> None:
        self.tools = tools

    def published(self) -> list[Tool]:
        return [_tool(getattr(self, name), title) for name, title in _TITLES.items()]

    @_titled("Search documents")
    def lancedb_search(
        self,
        query: Query = None,
        mode: SearchMode = "auto",
        limit: SearchLimit = SEARCH_LIMIT,
        table: TableNames = None,
        path: PathPrefix = None,
        perDocument: PerDocument = DEFAULT_PER_DOCUMENT,
        tags: Tags = None,
        tagMatch: TagMatch = "any",
        since: Since = None,
        until: Until = None,
        types: FileTypes = None,
        queries: Queries = None,
    ) -> Annotated[CallToolResult, SearchReply]:
        """Search the indexed documents; returns JSON hits: id, title, source, heading, text, score, metadata, table.

        searchType says which search produced the hits and textMatch (bm25 or substring) how text search matched;
        note says why, when the search is not the one asked for. Scores: vector = distance (lower is closer),
        bm25 = BM25 (higher is better), substring = share of query words found (higher is better),
        hybrid = fused relevance (higher is better). Only vector and hybrid send the query to the embedding endpoint.
        With several tables, `tables` says how each was searched; hits are in rank order (each table's first, then
        each table's second...) and scores compare only within one table. tags, since, until and types keep only
        documents with those tags, dates and file types (each hit's metadata holds its document's own: front matter,
        HTML meta, PDF or Word properties). `queries` (in place of query) searches up to 5 phrasings at once and
        fuses their hits; each hit's `queries` says which phrasings found it, and its score is the fused relevance.
        """
        return _answer(
            "lancedb_search",
            lambda: self.tools.search(
                query, mode, limit, table, path, perDocument, Filters.of(tags, tagMatch, since, until, types), queries
            ),
            as_json=True,
        )

    @_titled("Search documents as Markdown")
    def lancedb_query(
        self,
        query: Query = None,
        mode: SearchMode = "auto",
        limit: QueryLimit = QUERY_LIMIT,
        table: TableNames = None,
        path: PathPrefix = None,
        budget: Budget = DEFAULT_BUDGET,
        perDocument: PerDocument = DEFAULT_PER_DOCUMENT,
        tags: Tags = None,
        tagMatch: TagMatch = "any",
        since: Since = None,
        until: Until = None,
        types: FileTypes = None,
        queries: Queries = None,
    ) -> CallToolResult:
        """Search and return one Markdown block: a header, then each passage with its title, source and text (and
        its table, when several are searched).

        Passages that would take the block past `budget` characters are left out whole, and the block says how many.
        tags, since, until and types keep only documents with those tags, dates and file types. `queries` (in place
        of query) searches up to 5 phrasings at once, fused; each passage says which phrasings found it.
        """
        filters = (tags, tagMatch, since, until, types)
        return _answer(
            "lancedb_query",
            lambda: self.tools.query(
                query, mode, limit, table, path, budget, perDocument, Filters.of(*filters), queries
            ),
            as_json=False,
        )

    @_titled("Read a document")
    def lancedb_read(self, **arguments: Any) -> Annotated[CallToolResult, ReadReply]:
        """Read on from a hit: with `id`, that passage and its neighbours; with `source`, the document from its start.

        Returns Markdown within `budget` characters (and the same passages as structured content): the document's
        title and source, its number of passages, then passages in document order, each with its number, heading and
        text (and lines, anchor, page and link where the table has them). When the budget or the document ends the
        reply, it says so, and `next` holds the exact arguments that continue (`source`, `from`, and `offset` after
        a passage cut to fit); following them walks a document with every passage exactly once.
        """
        return _answer(
            "lancedb_read",
            lambda: self.tools.read(
                id=arguments.get("id"),
                source=arguments.get("source"),
                table=arguments.get("table"),
                before=arguments.get("before"),
                after=arguments.get("after"),
                start=arguments.get("from"),
                offset=arguments.get("offset"),
                budget=arguments.get("budget", DEFAULT_BUDGET),
            ),
            as_json=True,
        )

    # `from` is the argument's name on the wire and a Python keyword: the signature is declared by hand, with
    # `from_` aliased to `from` (the SDK passes arguments by their aliases, which **arguments takes).
    lancedb_read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("id", _KEYWORD, default=None, annotation=PassageId),
            inspect.Parameter("source", _KEYWORD, default=None, annotation=Source),
            inspect.Parameter("table", _KEYWORD, default=None, annotation=TableName),
            inspect.Parameter("before", _KEYWORD, default=None, annotation=Before),
            inspect.Parameter("after", _KEYWORD, default=None, annotation=After),
            inspect.Parameter("from_", _KEYWORD, default=None, annotation=From),
            inspect.Parameter("offset", _KEYWORD, default=None, annotation=Offset),
            inspect.Parameter("budget", _KEYWORD, default=DEFAULT_BUDGET, annotation=ReadBudget),
        ],
        return_annotation=Annotated[CallToolResult, ReadReply],
    )

    @_titled("Database status")
    def lancedb_status(self) -> Annotated[CallToolResult, StatusReply]:
        """The database and tables being served: rows, columns, full-text index, vectors, and which searches can run.

        `table` is the default table; `tables` every table this server lets you search, each with its searchTypes.
        """
        return _answer("lancedb_status", self.tools.status, as_json=True)

    @_titled("Versions")
    def lancedb_version(self) -> Annotated[CallToolResult, VersionReply]:
        """Versions of Lancelot, LanceDB, PyArrow, the MCP SDK and Python, and the MCP protocol versions supported."""
        return _answer("lancedb_version", self.tools.version, as_json=True)


def _tool(fn: Callable[..., Any], title: str) -> Tool:
    # Python before 3.13 keeps a docstring's indentation, which would reach the model as runs of spaces.
    description = inspect.cleandoc(fn.__doc__ or "")
    return _compacted(
        _strict(Tool.from_function(fn, title=title, description=description, annotations=_annotations(title)))
    )


def _compacted(tool: Tool) -> Tool:
    """The tool with its output schema as `schemas.compact` shapes it: what clients check each reply against.
    The SDK checks the reply itself against the tool's return type, never this schema."""
    published = tool.fn_metadata.output_schema
    if published is not None:
        # The metadata's field is read live; the tool's own `output_schema` is a cached copy of it.
        tool.fn_metadata.output_schema = tool.output_schema = compact(published)
    return tool


class _AsSent(FuncMetadata):
    """The SDK's argument handling without its guess that a string holding JSON was meant as that JSON: a
    `path` of "null" or "[1]" is that text, as the schema says."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


def _strict(tool: Tool) -> Tool:
    """Refuse arguments the tool does not declare, and say so in its schema (`schemas.strict`)."""
    model = strict.refusing_unknown(tool.fn_metadata.arg_model)
    tool.fn_metadata = _AsSent.model_construct(**{**dict(tool.fn_metadata), "arg_model": model})
    tool.parameters = model.model_json_schema(by_alias=True)
    return tool


class ArgumentCheck:
    """Check every `tools/call` against the tool's declared schema before the SDK does (`schemas.strict`)."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = {
            tool.name: strict.Declared(tool.parameters, tool.fn_metadata.validate_arguments) for tool in tools
        }

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and (problem := strict.refusal(ctx.params, self.tools)) is not None:
            return _refusal(problem)
        return await call_next(ctx)


def build_server(settings: Settings, store: Store | None = None) -> MCPServer:
    """The MCP server over `store` (by default one for `settings.db_path`; pass one to reuse a connection)."""
    store = store or Store(settings.db_path, settings.storage)
    bodies = Tools(store, settings, protocol_versions=KNOWN_PROTOCOL_VERSIONS)
    tools = Published(bodies).published()
    server = MCPServer(
        name="lancelot",
        title="Lancelot",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools,
        log_level="WARNING",
        middleware=[ArgumentCheck(tools)],
    )
    _publish_documents(server, resources.Resources(bodies))
    _name_tables(server, described.Announcer(lambda: described.line(store, bodies.tables), described.interval(store)))
    return server


_DESCRIBED: weakref.WeakKeyDictionary[MCPServer, described.Announcer] = weakref.WeakKeyDictionary()


def _with_tables(tool: MCPTool, said: str) -> MCPTool:
    """The tool with the tables named after its first line: what every client shows the assistant."""
    if not said:
        return tool
    first, _, rest = (tool.description or "").partition("\n")
    return tool.model_copy(update={"description": f"{first}\n{said}\n{rest}".rstrip()})


def _name_tables(server: MCPServer, tables: described.Announcer) -> None:
    """Tool descriptions and instructions that name the served tables, as of each `tools/list` and `initialize`
    (a stateless HTTP server's next `tools/list` shows a rebuilt table's new description)."""
    _DESCRIBED[server] = tables
    lowlevel = server._lowlevel_server  # MCPServer has no public way to replace a handler

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> ListToolsResult:
        tables.session = ctx.session
        said = await anyio.to_thread.run_sync(tables.line)
        return ListToolsResult(tools=[_with_tables(tool, said) for tool in await server.list_tools()])

    lowlevel.add_request_handler("tools/list", PaginatedRequestParams, list_tools)
    options, discovered = lowlevel.create_initialization_options, lowlevel._handle_discover

    def instructions() -> str:
        said = tables.line()
        return f"{INSTRUCTIONS} {said}" if said else INSTRUCTIONS

    def initialization_options(notification_options: NotificationOptions | None = None, *more: Any) -> Any:
        return options(notification_options, *more).model_copy(update={"instructions": instructions()})

    async def discover(ctx: ServerRequestContext[Any, Any], params: RequestParams) -> DiscoverResult:
        # The 2026 era's handshake: the same instructions.
        return (await discovered(ctx, params)).model_copy(update={"instructions": instructions()})

    lowlevel.create_initialization_options = initialization_options  # type: ignore[method-assign,assignment]
    lowlevel.add_request_handler("server/discover", RequestParams, discover)


def _publish_documents(server: MCPServer, documents: resources.Resources) -> None:
    """Documents as resources: listed in pages (MCPServer's own listing has no cursor), read by URI."""

    async def list_documents(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        items, cursor = await _resource_call("resources/list", lambda: documents.page(params.cursor))
        listed = [
            Resource(uri=item.uri, name=item.source, title=item.title, mime_type=resources.MIME_TYPE) for item in items
        ]
        return ListResourcesResult(resources=listed, next_cursor=cursor)

    async def list_templates(ctx: Any, params: PaginatedRequestParams) -> ListResourceTemplatesResult:
        template = ResourceTemplate(
            uri_template=resources.TEMPLATE,
            name="document",
            title="Document",
            description="A document of a table, by its source (a hit's `source`); ?from=N reads on from passage N.",
            mime_type=resources.MIME_TYPE,
        )
        return ListResourceTemplatesResult(resource_templates=[template])

    async def read_document(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        text = await _resource_call("resources/read", lambda: documents.read(params.uri))
        return ReadResourceResult(
            contents=[TextResourceContents(uri=params.uri, text=text, mime_type=resources.MIME_TYPE)]
        )

    lowlevel = server._lowlevel_server  # MCPServer has no public way to replace a handler
    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_documents)
    lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, list_templates)
    lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, read_document)


async def _resource_call(method: str, produce: Callable[[], T]) -> T:
    """Run a resource request's work off the event loop; a `LancelotError` becomes an invalid-params error."""
    try:
        return await anyio.to_thread.run_sync(produce)
    except LancelotError as exc:
        log.info("resource request refused", method=method, reason=str(exc))
        raise MCPError(code=INVALID_PARAMS, message=str(exc)) from exc
    except Exception as exc:
        log.exception("resource request failed", method=method)
        message = f"{method} failed unexpectedly ({type(exc).__name__}). The server log on stderr has details."
        raise MCPError(code=INTERNAL_ERROR, message=message) from exc


def serve_stdio(server: MCPServer, serving: Callable[[], None] = lambda: None) -> None:
    """Serve over this process's stdin and stdout until stdin closes; `serving()` is called once the
    transport holds stdout (from then on anything else written to fd 1 goes to stderr).

    The SDK's `run("stdio")`, with two mends: lines go through `ScrubbedLines` first, and a line the
    SDK cannot read gets a JSON-RPC error (id null) where the SDK would drop it and leave the client
    waiting.
    """
    anyio.run(_serve_stdio, server, serving)


async def _serve_stdio(server: MCPServer, serving: Callable[[], None]) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs; no public accessor
    # Our own descriptor for stdin: the text wrapper closes it when collected, never fd 0 itself.
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8", errors="replace"))
    async with stdio_server(stdin=cast(Any, ScrubbedLines(stdin))) as (read, write):
        serving()
        relay_send, relay_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_send:
                async for item in read:
                    if isinstance(item, Exception):
                        await write.send(SessionMessage(_unreadable(item)))
                    else:
                        await relay_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            # stdio holds one session that can be told when the tools change: the one transport that says so.
            options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
            if (tables := _DESCRIBED.get(server)) is not None:
                group.start_soon(tables.run)
            await lowlevel.run(relay_read, write, options)
            group.cancel_scope.cancel()


def _unreadable(exc: Exception) -> JSONRPCError:
    """The answer to a line that is not JSON (-32700) or not a JSON-RPC message (-32600)."""
    not_json = isinstance(exc, ValidationError) and any(error["type"] == "json_invalid" for error in exc.errors())
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid request: the line is not a JSON-RPC message")
    log.warning("unreadable message", reason=error.message)
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)


# Streamable HTTP (`http/serve.py`) and AWS Lambda (`lambda_handler.py`) wrap these, so that they need no mcp import.

Server = MCPServer
"""The server type that `build_server` returns, for the transports' annotations."""

HTTP_PROTOCOL_VERSIONS: tuple[str, ...] = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
"""Every MCP-Protocol-Version an HTTP client may send: the handshake era and the stateless 2026 era."""


def http_endpoint(server: MCPServer) -> StreamableHTTPSessionManager:
    """A fresh stateless Streamable HTTP endpoint for `server` that answers each POST with one JSON object.

    Use it as `async with endpoint.run(): await endpoint.handle_request(scope, receive, send)`. The SDK's
    own Host/Origin checks are off: `lancelot_server.http.guard` does them, with our statuses, in front of it.
    Cheap enough to build per Lambda invocation, which the SDK needs there (its session manager runs only
    once; python-sdk #3121).
    """
    server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return server.session_manager
