"""Links from passages to where they are published, by a template given at index time.

    https://docs.example.com/{stem}.html#{anchor}
    https://github.com/org/repo/blob/main/docs/{path}#L{line}-L{line_end}
    https://docs.example.com/{path}#page={page}

Placeholders: `{path}` (the document's path under DOCS, with `/`), `{stem}` (the same without its last
extension), `{anchor}` (the passage's HTML anchor), `{line}` and `{line_end}` (its first and last line),
`{page}` (the PDF page it is on, from 1). Path segments are percent-encoded. A value a passage lacks (no
anchor before the first `id` of a page, no lines in HTML, no page outside a PDF) is never guessed: the part
after `#` that names it is left off, so the link points at the page. `lancelot-index --link` checks a
template with `template_problem`; the server fills it in.
"""

from __future__ import annotations

import posixpath
import string
from urllib.parse import quote

PLACEHOLDERS = ("path", "stem", "anchor", "line", "line_end", "page")
_OPTIONAL = ("anchor", "line", "line_end", "page")  # values a passage may lack: only after '#'

# Characters a URL fragment may hold as they are (RFC 3986 pchar, `/` and `?`).
_FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~"


def _fields(part: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(part) if name is not None]


def template_problem(template: str) -> str | None:
    """Why `template` cannot be used as a link template, or None."""
    if not template.strip() or any(char.isspace() for char in template):
        return "is empty or holds whitespace; give a URL such as 'https://docs.example.com/{path}#{anchor}'."
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"is not a template ({exc}); write a literal brace as '{{{{' or '}}}}'."
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion:
            return f"has {{{name}}} with a conversion or format; write it plainly as {{{name}}}."
        if name not in PLACEHOLDERS:
            return f"has {{{name}}}; the placeholders are {', '.join('{' + p + '}' for p in PLACEHOLDERS)}."
    misplaced = [name for name in _fields(template.partition("#")[0]) if name in _OPTIONAL]
    if misplaced:
        return f"has {{{misplaced[0]}}} before '#'; a passage may lack it, so it belongs in the part after '#'."
    return None


def link(
    template: str,
    path: str,
    *,
    anchor: str | None = None,
    line: int | None = None,
    line_end: int | None = None,
    page: int | None = None,
) -> str:
    """`template` filled in for one passage (or, with no anchor, lines and page, for its document)."""
    segments = path.split("/")
    values: dict[str, str | None] = {
        "path": quote(path, safe="/"),
        "stem": quote("/".join([*segments[:-1], posixpath.splitext(segments[-1])[0]]), safe="/"),
        "anchor": quote(anchor, safe=_FRAGMENT_SAFE) if anchor else None,
        "line": str(line) if line is not None else None,
        "line_end": str(line_end if line_end is not None else line) if line is not None else None,
        "page": str(page) if page is not None else None,
    }
    base, sep, fragment = template.partition("#")
    filled = base.format_map(values)
    if sep and all(values[name] is not None for name in _fields(fragment)):
        filled += sep + fragment.format_map(values)
    return filled
