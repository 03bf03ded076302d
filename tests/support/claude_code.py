"""Claude Code's `claude mcp add` line, read as its CLI reads it, so a printed or documented line is checked
for what Claude Code would register, not for its text."""

from __future__ import annotations

import shlex


def claude_mcp_add(line: str, home: str = "/home/you") -> tuple[dict[str, str], dict[str, str], list[str], list[str]]:
    """Read a `claude mcp add` line as Claude Code's CLI does: (env, other options, names, server command).

    `$HOME` and `$PWD` are expanded as a shell would, to `home`. `-e/--env` is variadic in Claude Code: it takes
    every following word up to the next option, so a name written straight after it becomes one more variable
    (without `=`, an empty value here).
    """
    words = shlex.split(line.replace("$HOME", home).replace("$PWD", home))
    assert words[:3] == ["claude", "mcp", "add"], line
    cut = words.index("--")
    words, command = words[3:cut], words[cut + 1 :]
    env: dict[str, str] = {}
    options: dict[str, str] = {}
    names: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("-e", "--env"):
            while index < len(words) and not words[index].startswith("-"):
                name, _, value = words[index].partition("=")
                env[name] = value
                index += 1
        elif word.startswith("-"):
            options[word] = words[index]
            index += 1
        else:
            names.append(word)
    return env, options, names, command
