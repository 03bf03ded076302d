"""Cold start: the entry points import nothing they do not need before the first tool call, and a search reads
through Lance alone (lancedb's import costs more than a second: its REST client's models)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

HEAVY = ["lancedb", "openai", "pyarrow", "lance", "numpy", "pandas", "ray", "onnxruntime", "tokenizers"]


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


def test_a_search_reads_through_lance_and_never_imports_lancedb(indexed_db):
    loaded = imported_after(
        "from lancelot_schema.settings import resolve\nfrom lancelot_server.storage.store import Store\n"
        "from lancelot_server.tools import Tools\n"
        f"settings = resolve({{'LANCEDB_PATH': {str(indexed_db)!r}}})\n"
        "tools = Tools(Store(settings.db_path), settings)\n"
        "assert tools.search('tyre', mode='text')['hits']\n"
        "assert tools.search('yre', mode='text', path='guide/')['textMatch'] == 'substring'\n"
        "assert tools.status()['table']['rows']"
    )
    assert "lance" in loaded and "pyarrow" in loaded
    assert [name for name in ["lancedb", "lance_namespace", "openai", "pandas"] if name in loaded] == []


def test_a_table_of_local_vectors_loads_its_model_only_for_a_vector_query(tmp_path, local_model):
    from tests.server import corpus
    from tests.server.local_corpus import DOCS

    db = tmp_path / "db"
    corpus.index(corpus.write_docs(tmp_path / "docs", DOCS), db, "--embed", f"local:{local_model}")
    start = (
        "from lancelot_schema.settings import resolve\nfrom lancelot_server.storage.store import Store\n"
        "from lancelot_server.tools import Tools\n"
        f"settings = resolve({{'LANCEDB_PATH': {str(db)!r}, 'LANCELOT_EMBED_MODEL_PATH': {str(local_model)!r}}})\n"
        "tools = Tools(Store(settings.db_path), settings)\n"
        "assert tools.status()['table']['rows']\n"
        "assert tools.search('tyre', mode='text')['hits']\n"
    )
    assert {"onnxruntime", "tokenizers"} & imported_after(start) == set()
    assert {"onnxruntime", "tokenizers"} <= imported_after(
        start + "assert tools.search('tyre')['searchType'] == 'hybrid'"
    )


def test_a_refused_http_start_is_refused_before_the_sdk_uvicorn_or_lance_is_imported(tmp_path, clean_env):
    # The command's own entry point, the modules it had imported written out as it exits (stdout is stderr
    # in HTTP mode). Each refusal is the one line a person reads; the auth settings are refused before the
    # port (taken here) is tried.
    code = (
        "import json, sys\nfrom lancelot_server.cli import main\n"
        "try:\n    main(sys.argv[2:])\n"
        "finally:\n    open(sys.argv[1], 'w').write(json.dumps(sorted(sys.modules)))"
    )
    env = clean_env | {"LANCEDB_PATH": str(tmp_path / "db")}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        refusals = [
            (["--http", port], {}, f"Error: Cannot listen on 127.0.0.1:{port}: Address already in use."),
            (["--http", port, "--host", "0.0.0.0"], {}, "Error: Refusing to serve 0.0.0.0 without authentication"),
            (["--http", port], {"LANCELOT_AUTH_TOKENS": "short"}, "the token is shorter than 16"),
        ]
        for number, (arguments, extra, message) in enumerate(refusals):
            modules = tmp_path / f"modules-{number}.json"
            command = [sys.executable, "-c", code, str(modules), *arguments]
            done = subprocess.run(command, env=env | extra, capture_output=True, text=True, timeout=60)
            assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
            loaded = set(json.loads(modules.read_text(encoding="utf-8")))
            assert [name for name in ["mcp", "uvicorn", "lancelot_server.app", *HEAVY] if name in loaded] == []
