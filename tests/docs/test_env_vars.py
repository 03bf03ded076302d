"""Every environment variable the code reads is documented in README.md, and every one documented is read."""

import re
from pathlib import Path

from tests.docs import readme

from lancelot_schema import settings

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "shared" / "src", ROOT / "indexer" / "src", ROOT / "server" / "src"]
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


def names_in_code() -> set[str]:
    return scanned_names() | set(settings.DEFAULTS)


def settings_table(text: str) -> set[str]:
    """Names in the first column of the tables under README's `## Settings` heading."""
    return set(TABLE_ROW.findall(readme.section("Settings", text)))


def test_the_scan_sees_every_setting_in_the_source():
    # DEFAULTS spells each name in settings.py, so a working scan finds them all on its own.
    assert set(settings.DEFAULTS) <= scanned_names()


def test_every_variable_the_code_reads_is_documented():
    documented = settings_table(readme.text())
    missing = sorted(names_in_code() - documented)
    assert missing == [], f"read by the code but not in README's settings table: {missing}"


def test_every_documented_variable_is_read_by_the_code():
    extra = sorted(settings_table(readme.text()) - names_in_code())
    assert extra == [], f"in README's settings table but read nowhere in the code: {extra}"


def test_the_scan_reads_quoted_names_only():
    assert NAME.findall("""environ.get("LANCELOT_X") or environ['OPENAI_Y'] ; OPENAI_HOST = 1 ; `LANCEDB_Z`""") == [
        "LANCELOT_X",
        "OPENAI_Y",
    ]


def test_the_table_parser_reads_a_settings_table():
    text = "# X\n## Settings\n| name | default |\n|---|---|\n| `A_B` | none |\n| `C` | `d` |\n## Next\n| `E` |\n"
    assert settings_table(text) == {"A_B", "C"}
