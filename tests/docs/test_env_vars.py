"""docs/settings.md lists every environment variable the code reads, once, in one table, and only those.

What the code reads: the settings `lancelot_schema.settings` resolves, the variables the commands' options
fall back to, and, as a net for a variable read anywhere else, every quoted name of Lancelot's own families
in the source.
"""

import re
from pathlib import Path

from tests.docs import pages
from tests.docs.test_options import command

from lancelot_schema import settings

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "shared" / "src", ROOT / "indexer" / "src", ROOT / "server" / "src"]
COMMANDS = ("lancelot-index", "lancelot", "lancelot-init")
# Lancelot's own names and the ones it shares with LanceDB, OpenAI and AWS tooling (the AWS names it resolves),
# as string literals: the code reads a variable by a quoted name, while an unquoted match is a Python constant
# (OPENAI_HOST).
NAME = re.compile(
    r"(?<=[\"'])(?:LANCEDB_[A-Z0-9_]*[A-Z0-9]|LANCELOT_[A-Z0-9_]*[A-Z0-9]|OPENAI_[A-Z0-9_]*[A-Z0-9]|EMBEDDING_MODEL"
    r"|AWS_(?:ENDPOINT_URL(?:_S3)?|REGION|DEFAULT_REGION))(?=[\"'])"
)
TABLE_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|", re.MULTILINE)


def scanned_names() -> set[str]:
    found: set[str] = set()
    for source in SOURCES:
        for path in source.rglob("*.py"):
            found |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return found


def option_variables() -> set[str]:
    """The variables the commands' options read when they are not given (click's `envvar`)."""
    found: set[str] = set()
    for name in COMMANDS:
        for param in command(name).params:
            envvar = param.envvar
            found |= {envvar} if isinstance(envvar, str) else set(envvar or ())
    return found


def names_in_code() -> set[str]:
    return scanned_names() | set(settings.DEFAULTS) | option_variables()


def table_rows(text: str) -> list[str]:
    """Names in the first column of the table under the page's `## Environment variables` heading."""
    return TABLE_ROW.findall(pages.section("Environment variables", text))


def test_the_scan_sees_every_setting_in_the_source():
    # DEFAULTS spells each name in settings.py, so a working scan finds them all on its own.
    assert set(settings.DEFAULTS) <= scanned_names()


def test_the_options_fall_back_to_variables():
    assert {"LANCELOT_HTTP_REQUEST_TIMEOUT", "LANCELOT_HTTP_MAX_REQUESTS"} <= option_variables()


def test_every_variable_the_code_reads_is_documented():
    documented = set(table_rows(pages.page("settings.md")))
    missing = sorted(names_in_code() - documented)
    assert missing == [], f"read by the code but not in the settings table: {missing}"


def test_every_documented_variable_is_read_by_the_code():
    extra = sorted(set(table_rows(pages.page("settings.md"))) - names_in_code())
    assert extra == [], f"in the settings table but read nowhere in the code: {extra}"


def test_each_variable_is_listed_once_in_one_table():
    settings_page = pages.page("settings.md")
    rows = table_rows(settings_page)
    assert len(rows) == len(set(rows))
    assert TABLE_ROW.findall(settings_page) == rows  # no other table of the page lists a variable
    for name, text in pages.documents().items():
        if name != "docs/settings.md":
            assert set(TABLE_ROW.findall(text)) & set(rows) == set(), f"{name} lists a variable in a table"


def test_the_scan_reads_quoted_names_only():
    assert NAME.findall("""environ.get("LANCELOT_X") or environ['OPENAI_Y'] ; OPENAI_HOST = 1 ; `LANCEDB_Z`""") == [
        "LANCELOT_X",
        "OPENAI_Y",
    ]


def test_the_table_parser_reads_a_settings_table():
    text = "# X\n## Environment variables\n| name | default |\n|---|---|\n| `A_B` | none |\n| `C` | `d` |\n"
    text += "## Next\n| `E` |\n"
    assert table_rows(text) == ["A_B", "C"]
