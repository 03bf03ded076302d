"""Where a database lives: a local folder or a URI on object storage, and how Lance reaches it.

Both sides call `locate(DB or LANCEDB_PATH, settings.storage)` once and hand the `Location`'s `uri` and
`options` to Lance or LanceDB, so a folder and a bucket follow one set of rules:

    /srv/db, ./db, ~/db, file:///srv/db   a local folder, made absolute
    s3://BUCKET/PREFIX                     Amazon S3, or an S3-compatible server at AWS_ENDPOINT_URL(_S3)
    s3+ddb://BUCKET/PREFIX?ddbTableName=T  S3 with Lance's DynamoDB commit table
    gs://BUCKET/PREFIX                     Google Cloud Storage
    az://CONTAINER/PREFIX, abfss://…       Azure Blob Storage (the account from AZURE_STORAGE_ACCOUNT_NAME)

A URI is kept exactly as written. Anything else that looks like a URI (another scheme, no bucket, one
slash, spaces, a key in the URI) is a `LocationError` whose one line names the place, never a secret.
Credentials are not handled here: Lance reads each cloud's standard chain itself. `failure` turns what
Lance raises when a bucket cannot be read into one such line. No I/O, no Lance import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from urllib.parse import SplitResult, unquote, urlsplit

from lancelot_schema.settings import Storage

# The object stores Lance 13 reaches that Lancelot documents and accepts (Lance also knows oss, cos, tos,
# hf and goosefs: untested here, so refused rather than half supported).
SCHEMES: dict[str, str] = {
    "s3": "Amazon S3 or an S3-compatible server",
    "s3+ddb": "Amazon S3 with a DynamoDB commit table",
    "gs": "Google Cloud Storage",
    "az": "Azure Blob Storage",
    "abfss": "Azure Data Lake Storage",
}
S3_SCHEMES = frozenset({"s3", "s3+ddb"})
SUPPORTED = "a local folder, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or az://CONTAINER/PREFIX"

# Two letters or more: `C:\\db` is a folder.
_URI = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):(?P<rest>.*)$", re.DOTALL)
# The password in `scheme://user:password@host`, shown as `***` wherever a location is named.
_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:]*):[^/@]*@")
# Bucket and container names: letters, digits, dots, hyphens, underscores (GCS), starting with a letter or digit.
_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class LocationError(ValueError):
    """DB or LANCEDB_PATH names no place Lancelot can use; the message says why in one line."""


@dataclass(frozen=True)
class Location:
    """A database: what Lance opens (`uri`), with what options, and how messages name it."""

    uri: str  # an absolute folder path, or the URI exactly as written
    scheme: str | None = None  # None for a local folder; else a key of SCHEMES
    bucket: str | None = None  # the bucket or container
    prefix: str = ""  # the path inside it, without leading or trailing slashes
    # Storage options for lance.dataset / lancedb.connect: where and how to connect, never a secret.
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Seconds between checks for a new table version: 0 (every call) on a folder, where a check is a stat.
    refresh_seconds: float = 0.0

    @property
    def local(self) -> bool:
        return self.scheme is None

    @property
    def path(self) -> Path:
        """The folder of a local database."""
        if not self.local:
            raise ValueError(f"{self.uri} is not a local folder")
        return Path(self.uri)

    def table_uri(self, name: str) -> str:
        """Where the Lance dataset of table `name` lives, as LanceDB lays a database out: `DB/NAME.lance`."""
        if self.local:
            return str(Path(self.uri) / f"{name}.lance")
        base, mark, query = self.uri.partition("?")  # s3+ddb's ?ddbTableName= stays on every table
        return f"{base.rstrip('/')}/{name}.lance{mark}{query}"

    def __str__(self) -> str:
        return self.uri  # never a secret: locate refuses a URI that carries one


def shown(text: str) -> str:
    """`text` as a message may name it: a password written into a URI (`user:password@`) becomes `***`."""
    return _PASSWORD.sub(r"\g<head>:***@", text)


def locate(text: str, storage: Storage | None = None) -> Location:
    """The database `text` names (DB or LANCEDB_PATH as given), with its storage options; `LocationError` if none."""
    storage = storage or Storage()
    if not text.strip():
        raise LocationError("The database location is empty; name a folder or a URI such as s3://BUCKET/PREFIX.")
    match = _URI.match(text)
    if match is not None:
        scheme = match["scheme"].lower()
        if match["rest"].startswith("//"):
            if scheme == "file":
                return _file(text)
            if scheme not in SCHEMES:
                raise LocationError(
                    f"{shown(text)} uses the scheme {scheme}://, which Lancelot does not read; use {SUPPORTED}."
                )
            return _object(text, scheme, storage)
        if scheme in SCHEMES:
            # `s3:/bucket/db` is what a path library makes of `s3://bucket/db`: never a folder named `s3:`.
            raise LocationError(f"{shown(text)} is not a valid URI: write {scheme}://BUCKET/PREFIX (two slashes).")
    # A folder, also `C:\\db` and a name with a colon that is no URI (`notes:2024`).
    return Location(uri=str(Path(text).expanduser().absolute()))


def _file(text: str) -> Location:
    parts = _split(text)
    if parts.netloc not in ("", "localhost") or not parts.path or parts.query or parts.fragment:
        raise LocationError(f"{shown(text)} is not a local folder URI: write file:///ABSOLUTE/PATH or the path itself.")
    return Location(uri=str(Path(unquote(parts.path)).absolute()))


def _object(text: str, scheme: str, storage: Storage) -> Location:
    example = f"{scheme}://BUCKET/PREFIX"
    if any(character.isspace() for character in text):
        raise LocationError(f"{shown(text)!r} holds a space, which a bucket URI never does: write {example}.")
    parts = _split(text)
    user, at, bucket = parts.netloc.rpartition("@")
    if at and (scheme != "abfss" or ":" in user):
        raise LocationError(
            f"{shown(text)} carries credentials; write {example} and give them the cloud's own way "
            "(AWS_ACCESS_KEY_ID, AWS_PROFILE, a role)."
        )
    if not parts.netloc:
        raise LocationError(f"{shown(text)} names no bucket: write {example}.")
    if ":" in bucket:
        raise LocationError(
            f"{shown(text)} names a server, not a bucket: write {example} and the server in AWS_ENDPOINT_URL."
        )
    if not _BUCKET.fullmatch(user if scheme == "abfss" and at else bucket):
        raise LocationError(f"{shown(text)} does not start with a bucket name: write {example}.")
    if "#" in text or ("?" in text and scheme != "s3+ddb"):
        raise LocationError(f"{shown(text)} has a query or fragment, which {example} never has.")
    if scheme == "s3+ddb" and not re.fullmatch(r"ddbTableName=[^&=]+", parts.query):
        raise LocationError(f"{shown(text)} names no DynamoDB table: write {example}?ddbTableName=TABLE.")
    return Location(
        uri=text,
        scheme=scheme,
        bucket=user if scheme == "abfss" and at else bucket,
        prefix=parts.path.strip("/"),
        options=MappingProxyType(storage_options(scheme, storage)),
        refresh_seconds=storage.refresh_seconds,
    )


def _split(text: str) -> SplitResult:
    try:
        return urlsplit(text)
    except ValueError as exc:  # brackets that are no IPv6 address
        raise LocationError(f"{shown(text)} is not a valid URI ({exc}).") from None


def storage_options(scheme: str, storage: Storage) -> dict[str, str]:
    """What Lance is told besides its own environment: for S3, the endpoint and region as resolved once.

    An `http://` endpoint is the permission to speak plain HTTP (as for the AWS CLI and boto3, which take such
    an endpoint as it is); Lance refuses one otherwise with a bare "builder error". Google Cloud and Azure take
    their settings from their own environment variables, which Lance reads.
    """
    if scheme not in S3_SCHEMES:
        return {}
    options: dict[str, str] = {}
    if storage.endpoint is not None:
        endpoint = storage.endpoint
        if not re.match(r"^https?://[^/\s]+", endpoint, re.IGNORECASE):
            named = "" if "@" in endpoint else f" {endpoint}"  # no scheme: nothing tells a password from a host
            raise LocationError(f"AWS_ENDPOINT_URL{named} is not a URL: write http://HOST:PORT or https://HOST.")
        options["aws_endpoint"] = endpoint
        if endpoint.lower().startswith("http://"):
            options["allow_http"] = "true"
    if storage.region is not None:
        options["aws_region"] = storage.region
    return options


# What each cloud's standard credential chain reads, for the messages that say where to look.
_CREDENTIALS = {
    "s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role this runs as",
    "gs": "GOOGLE_APPLICATION_CREDENTIALS, or the service account this runs as",
    "az": "AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN, or the identity this runs as",
}
# Error codes in the services' answers (S3's, and the S3-compatible servers'), as Lance quotes them, and as
# pyarrow's S3 client does (the indexer's, for documents on a bucket: INVALID_ACCESS_KEY_ID).
_REFUSED_KEYS = (
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidClientTokenId",
    "INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH", "EXPIRED_TOKEN",
)  # fmt: skip
_NO_CREDENTIALS = ("CredentialsNotLoaded", "no providers in chain", "Failed to get AWS credentials")
_DENIED = ("AccessDenied", "lacked the necessary privileges", "403 Forbidden", "status: 403")
_UNREACHABLE = {
    "Connection refused": "connection refused",
    "ConnectionRefused": "connection refused",
    "dns error": "the name does not resolve",
    "timed out": "timed out",
    "Timeout": "timed out",
    "tcp connect error": "cannot connect",
    "error sending request": "cannot connect",
    "Couldn't connect to server": "cannot connect",
}


def failure(location: Location, error: BaseException, doing: str = "read") -> str | None:
    """One line for an error Lance raised because the object store could not be used: no such bucket,
    refused or missing credentials, access denied, another region, the endpoint unreachable. None when
    `error` is something else (a local folder's, a damaged table's), for the caller to handle as before.

    Lance's own text is never passed on: it quotes requests and answers at length, and this line names
    the URI and what to check, never a key.
    """
    if location.local:
        return None
    text = str(error)
    scheme = "s3" if location.scheme in S3_SCHEMES else "az" if location.scheme in ("az", "abfss") else "gs"
    endpoint = location.options.get("aws_endpoint")
    at = f" at {shown(endpoint)}" if endpoint else ""
    if any(sign in text for sign in ("NoSuchBucket", "NO_SUCH_BUCKET", "ContainerNotFound")):
        return f"The bucket {location.bucket} of {location} does not exist{at}: check the bucket name."
    code = next((code for code in _REFUSED_KEYS if code in text), None)
    if code is not None or "status: 401" in text:
        why = f" ({code})" if code else ""
        return f"The storage service{at} refused the credentials for {location}{why}: check {_CREDENTIALS[scheme]}."
    if any(sign in text for sign in _NO_CREDENTIALS):
        return f"No credentials were found for {location}: set {_CREDENTIALS[scheme]}."
    if any(sign in text for sign in _DENIED):
        return (
            f"Access to {location} was denied (AccessDenied): the credentials in use may not {doing} it; "
            f"give them the policy in docs/object-storage.md."
        )
    if "PermanentRedirect" in text or "AuthorizationHeaderMalformed" in text:
        region = location.options.get("aws_region", "the configured one")
        return f"The bucket of {location} is in another region than {region}: set AWS_REGION to the bucket's region."
    if "Failed to resolve region for bucket" in text:
        # No region given and no endpoint: Lance asks AWS where the bucket is, and could not get an answer.
        return (
            f"Cannot tell the region of the bucket of {location}: set AWS_REGION (or AWS_DEFAULT_REGION) to the "
            "bucket's region."
        )
    if "builder error" in text:
        return f"The endpoint for {location} is plain HTTP, which Lance allows only for an http:// AWS_ENDPOINT_URL."
    reason = next((why for sign, why in _UNREACHABLE.items() if sign in text), None)
    if reason is not None:
        return f"Cannot reach the storage service for {location}{at or ''} ({reason})."
    return None
