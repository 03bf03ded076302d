"""Where `lancelot-init` keeps the OpenAI API key, and how `lancelot` and `lancelot-index` read it.

The key lives in the operating system keychain (keyring service `lancelot`) or, when no keychain is
usable, in an AES-GCM encrypted file beside the settings. The settings file records which of the two
holds it (`STORE_FIELD`), so a run with the key in its environment, or with no key stored, never
imports keyring. The sealed-file format is defined here, both ways, so the writer (the server's
`lancelot-init`) and the readers agree; writing files and the keychain is the server's job.

The file's key is derived from this machine's identity and this user account: a copy of the file on
another machine or account cannot be opened, while anyone who can act as this user here can open it.

keyring and cryptography are imported inside the functions that use them: cold start matters.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import sys
from pathlib import Path

KEYRING_SERVICE = "lancelot"
KEYRING_ACCOUNT = "OPENAI_API_KEY"
KEY_FILE = "api-key.enc"

# In the settings file: where the key is kept, one of the two values below (absent: no key stored).
STORE_FIELD = "api_key_store"
IN_KEYRING = "keyring"
IN_FILE = "encrypted-file"

_FORMAT = "lancelot-sealed-1"
_KDF_INFO = b"lancelot api key file 1"
_AAD = b"lancelot:OPENAI_API_KEY"
_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


class CredentialsError(Exception):
    """The stored key cannot be read; the message names the keychain or file and the fix."""


def key_file_path(directory: Path) -> Path:
    return directory / KEY_FILE


def backend_name(backend: object) -> str:
    """A keyring backend as a person can recognise it, e.g. `keyring.backends.SecretService.Keyring`."""
    kind = type(backend)
    return f"{kind.__module__}.{kind.__qualname__}"


def read_api_key(directory: Path, where: str | None) -> str | None:
    """The stored key from wherever the settings say it is (`where`); None when none is stored."""
    if where == IN_KEYRING:
        return read_from_keyring()
    if where == IN_FILE:
        return read_from_file(key_file_path(directory))
    return None


def read_from_keyring() -> str | None:
    try:
        import keyring
    except ImportError as exc:
        raise CredentialsError(
            "The API key is stored in the keychain, but the keyring package is not installed. "
            "Install it, or run `lancelot-init --forget` and then `lancelot-init` again."
        ) from exc
    backend = keyring.get_keyring()
    try:
        value = backend.get_password(KEYRING_SERVICE, KEYRING_ACCOUNT)
    except Exception as exc:  # any backend failure (locked, no D-Bus, …) must not stop the server
        raise CredentialsError(
            f"Cannot read the API key from the keychain ({backend_name(backend)}, service "
            f"{KEYRING_SERVICE!r}): {exc}. Unlock the keychain, or run `lancelot-init --forget` "
            "and then `lancelot-init` again."
        ) from exc
    if value is None:
        raise CredentialsError(
            f"The settings say the API key is in the keychain ({backend_name(backend)}, service "
            f"{KEYRING_SERVICE!r}), but it is not there. Run `lancelot-init --forget` and then `lancelot-init`."
        )
    return str(value)


def read_from_file(path: Path) -> str:
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise CredentialsError(
            f"Cannot read the encrypted API key {path}: {exc.strerror}. "
            "Run `lancelot-init --forget` and then `lancelot-init` again."
        ) from exc
    return unseal(blob, source=str(path))


def seal(secret: str, identity: bytes | None = None) -> bytes:
    """`secret` encrypted with AES-256-GCM under a key bound to `identity` (default: this machine and user)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    salt = secrets.token_bytes(16)
    nonce = secrets.token_bytes(12)
    data = AESGCM(_derive(salt, identity)).encrypt(nonce, secret.encode("utf-8"), _AAD)
    record = {"format": _FORMAT, "salt": _b64(salt), "nonce": _b64(nonce), "data": _b64(data)}
    return json.dumps(record).encode("utf-8")


def unseal(blob: bytes, source: str, identity: bytes | None = None) -> str:
    """The secret in a blob made by `seal`; `source` names it in errors."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    fix = "Run `lancelot-init --forget` and then `lancelot-init` again."
    try:
        record = json.loads(blob)
        if record.get("format") != _FORMAT:
            raise ValueError("unknown format")
        salt, nonce, data = (base64.b64decode(record[name], validate=True) for name in ("salt", "nonce", "data"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CredentialsError(f"The encrypted API key {source} is damaged ({exc}). {fix}") from exc
    try:
        return AESGCM(_derive(salt, identity)).decrypt(nonce, data, _AAD).decode("utf-8")
    except (InvalidTag, ValueError) as exc:
        raise CredentialsError(
            f"The encrypted API key {source} cannot be opened here: it was written on another machine "
            f"or by another user, or it was changed. {fix}"
        ) from exc


def machine_identity() -> bytes:
    """What binds the encrypted file to this machine and this user account.

    The machine id where the system has one (Linux), the MachineGuid on Windows, else the host name;
    joined with the user id (user name on Windows).
    """
    machine = _read_machine_id()
    if sys.platform == "win32":
        import getpass

        user = getpass.getuser()
    else:
        user = str(os.getuid())
    return machine + b"\0" + user.encode("utf-8")


def _read_machine_id() -> bytes:
    for name in _MACHINE_ID_FILES:
        try:
            value = Path(name).read_bytes().strip()
        except OSError:
            continue
        if value:
            return value
    if sys.platform == "win32":
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography") as key:
                return str(winreg.QueryValueEx(key, "MachineGuid")[0]).encode("utf-8")
        except OSError:
            pass
    import socket

    return socket.gethostname().encode("utf-8")


def _derive(salt: bytes, identity: bytes | None) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    material = machine_identity() if identity is None else identity
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_KDF_INFO).derive(material)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")
