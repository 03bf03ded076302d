"""The only code in the server distribution that writes anything: lancelot-init's own settings.

It writes the settings file and the encrypted key file in Lancelot's per-user configuration directory
(created 0700, files 0600, replaced atomically) and stores or removes the key in the keychain. It never
touches a database folder. The read side, shared with the indexer, is `lancelot_schema.credentials`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lancelot_schema import credentials, stored

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

_PRIVATE_DIR = 0o700
_PRIVATE_FILE = 0o600


@dataclass(frozen=True)
class KeyPlace:
    """Where a stored key went: `kind` is credentials.IN_KEYRING or IN_FILE; `label` says it to a person."""

    kind: str
    label: str


def save_settings(directory: Path, values: Mapping[str, str]) -> Path:
    """Replace the settings file with `values`; returns its path."""
    path = stored.settings_path(directory)
    _write_private(path, (json.dumps(dict(values), indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return path


def store_api_key(directory: Path, key: str, environ: Mapping[str, str]) -> KeyPlace:
    """Keep `key` in the keychain when one is usable, else in the encrypted file; clear the other place."""
    backend = usable_keyring(environ)
    if backend is not None:
        try:
            backend.set_password(credentials.KEYRING_SERVICE, credentials.KEYRING_ACCOUNT, key)
            kept = backend.get_password(credentials.KEYRING_SERVICE, credentials.KEYRING_ACCOUNT)
        except Exception:  # a keychain that fails to take the key: the encrypted file still can
            kept = None
        if kept == key:
            _remove_file(credentials.key_file_path(directory))
            return keyring_place(backend)
    path = credentials.key_file_path(directory)
    _write_private(path, credentials.seal(key))
    _clear_keyring(backend)
    return KeyPlace(credentials.IN_FILE, f"encrypted in {path}")


def forget_api_key(directory: Path, environ: Mapping[str, str]) -> None:
    """Remove the key from the keychain and the encrypted file, wherever it is."""
    _remove_file(credentials.key_file_path(directory))
    _clear_keyring(usable_keyring(environ))


def forget_all(directory: Path, environ: Mapping[str, str]) -> None:
    """Remove everything lancelot-init stored, damaged or not, and the directory when it is left empty."""
    forget_api_key(directory, environ)
    _remove_file(stored.settings_path(directory))
    with contextlib.suppress(OSError):
        directory.rmdir()


def keyring_place(backend: KeyringBackend) -> KeyPlace:
    label = f"in the keychain ({credentials.backend_name(backend)}, service {credentials.KEYRING_SERVICE!r})"
    return KeyPlace(credentials.IN_KEYRING, label)


def usable_keyring(environ: Mapping[str, str]) -> KeyringBackend | None:
    """The keyring backend to keep the key in, or None to use the encrypted file.

    Unusable: keyring's `fail` and `null` backends and, unless the person chose a backend themselves
    (PYTHON_KEYRING_BACKEND or keyring's config file), the ones keyring itself does not recommend
    (priority below 1, such as keyrings.alt's plain-text file): our encrypted file is safer than those.
    """
    try:
        import keyring
        from keyring.backends import chainer, fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring) or backend.priority <= 0:
            return None
        if _chosen_by_person(environ):
            return backend
        first = backend.backends[0] if isinstance(backend, chainer.ChainerBackend) else backend
    except Exception:  # a backend that cannot even say what it is, is not usable
        return None
    return backend if first.priority >= 1 else None


def _chosen_by_person(environ: Mapping[str, str]) -> bool:
    if environ.get("PYTHON_KEYRING_BACKEND", "").strip():
        return True
    from keyring import core

    return core.load_config() is not None


def _clear_keyring(backend: KeyringBackend | None) -> None:
    if backend is None:
        return
    from keyring.errors import PasswordDeleteError

    # Nothing there to remove is fine; a keychain that refuses is reported by the next read.
    with contextlib.suppress(PasswordDeleteError, NotImplementedError):
        backend.delete_password(credentials.KEYRING_SERVICE, credentials.KEYRING_ACCOUNT)


def _write_private(path: Path, content: bytes) -> None:
    """Write `content` to `path` atomically, readable by this user only, in a directory only they can enter."""
    path.parent.mkdir(mode=_PRIVATE_DIR, parents=True, exist_ok=True)
    path.parent.chmod(_PRIVATE_DIR)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE_FILE)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)
    except BaseException:
        _remove_file(temporary)
        raise


def _remove_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
