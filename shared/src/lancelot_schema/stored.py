"""The settings file that `lancelot-init` writes, read back for `lancelot` and `lancelot-index`.

The file holds plain settings only (database path, table). The API key is kept apart, in the
keychain or an encrypted file, by the server's init command.
"""

from __future__ import annotations

import json
from pathlib import Path

SETTINGS_FILE = "settings.json"


class StoredSettingsError(Exception):
    """The stored settings exist but cannot be used; the message names the file and the fix."""


def settings_path(directory: Path) -> Path:
    return directory / SETTINGS_FILE


def load(directory: Path) -> dict[str, str]:
    """The stored settings as a name → value mapping; empty when nothing is stored."""
    path = settings_path(directory)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoredSettingsError(
            f"Cannot read the stored settings {path}: {exc.strerror}. "
            "Fix its permissions or run `lancelot-init --forget`."
        ) from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise StoredSettingsError(
            f"The stored settings {path} are damaged ({exc}). Run `lancelot-init --forget`, then `lancelot-init`."
        ) from exc
    if not isinstance(data, dict):
        raise StoredSettingsError(
            f"The stored settings {path} are not a JSON object. Run `lancelot-init --forget`, then `lancelot-init`."
        )
    return {str(k): v for k, v in data.items() if isinstance(v, str)}
