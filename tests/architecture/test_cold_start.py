"""Cold start: the entry points import nothing they do not need before the first tool call."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["lancedb", "openai", "pyarrow", "lance", "numpy", "pandas"]


def imported_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_building_the_server_imports_no_database_or_embedding_library():
    loaded = imported_after(
        "from lancelot_schema.settings import resolve\nfrom lancelot_server.app import build_server\n"
        "build_server(resolve({'LANCEDB_PATH': '/nowhere'}))"
    )
    assert "mcp" in loaded
    assert [name for name in HEAVY if name in loaded] == []


def test_the_cli_module_and_the_package_import_neither_mcp_nor_the_database():
    loaded = imported_after("import lancelot_server, lancelot_server.cli")
    assert [name for name in ["mcp", *HEAVY] if name in loaded] == []
