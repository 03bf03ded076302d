import subprocess
import sys
from pathlib import Path

import pytest

from lancelot_schema.settings import Storage
from lancelot_schema.storage import LocationError, failure, locate, shown

MINIO = Storage(endpoint="http://127.0.0.1:9000", region="us-east-1", refresh_seconds=3.0)


@pytest.mark.parametrize("text", ["db", "./db", "a/b/../db", "notes:2024", "file:db"])
def test_a_folder_is_made_absolute_and_checked_at_every_call(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    location = locate(text, MINIO)
    assert location.local and location.scheme is None
    assert location.uri == str(tmp_path / text) and Path(location.uri).is_absolute()
    assert location.path == tmp_path / text
    assert dict(location.options) == {} and location.refresh_seconds == 0.0
    assert location.table_uri("docs") == str(tmp_path / text / "docs.lance")


def test_the_home_directory_and_file_uris_name_local_folders(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert locate("~/db").uri == "/home/someone/db"
    assert locate("file:///srv/my%20db").uri == "/srv/my db"
    assert locate("file://localhost/srv/db").uri == "/srv/db"


@pytest.mark.parametrize(
    ("text", "scheme", "bucket", "prefix"),
    [
        ("s3://bucket/db", "s3", "bucket", "db"),
        ("s3://bucket", "s3", "bucket", ""),
        ("s3://bucket/teams/docs/", "s3", "bucket", "teams/docs"),
        ("S3://bucket/db", "s3", "bucket", "db"),
        ("s3+ddb://bucket/db?ddbTableName=commits", "s3+ddb", "bucket", "db"),
        ("gs://my_bucket.example/db", "gs", "my_bucket.example", "db"),
        ("az://container/db", "az", "container", "db"),
        ("abfss://container@account.dfs.core.windows.net/db", "abfss", "container", "db"),
    ],
)
def test_an_object_store_uri_is_kept_exactly_as_written(text, scheme, bucket, prefix):
    location = locate(text, MINIO)
    assert (location.uri, location.scheme, location.bucket, location.prefix) == (text, scheme, bucket, prefix)
    assert not location.local and str(location) == text
    assert location.refresh_seconds == 3.0


def test_a_table_lives_beside_the_others_under_the_prefix():
    assert locate("s3://bucket/db/").table_uri("docs") == "s3://bucket/db/docs.lance"
    assert locate("s3://bucket").table_uri("docs") == "s3://bucket/docs.lance"
    ddb = locate("s3+ddb://bucket/db?ddbTableName=commits")
    assert ddb.table_uri("docs") == "s3+ddb://bucket/db/docs.lance?ddbTableName=commits"
    with pytest.raises(ValueError, match="not a local folder"):
        _ = locate("s3://bucket/db").path


def test_s3_gets_the_endpoint_and_region_and_plain_http_only_from_an_http_endpoint():
    assert dict(locate("s3://bucket/db", MINIO).options) == {
        "aws_endpoint": "http://127.0.0.1:9000",
        "allow_http": "true",
        "aws_region": "us-east-1",
    }
    secure = Storage(endpoint="https://account.r2.cloudflarestorage.com", region="auto")
    assert dict(locate("s3://bucket/db", secure).options) == {
        "aws_endpoint": "https://account.r2.cloudflarestorage.com",
        "aws_region": "auto",
    }
    # Nothing set: Lance finds the bucket's region and the credentials itself.
    assert dict(locate("s3://bucket/db").options) == {}


def test_other_clouds_read_their_own_environment_and_no_option_carries_a_secret():
    assert dict(locate("gs://bucket/db", MINIO).options) == {}
    assert dict(locate("az://container/db", MINIO).options) == {}
    assert not any("key" in name or "secret" in name for name in locate("s3://b/db", MINIO).options)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s3:/bucket/db", r"^s3:/bucket/db is not a valid URI: write s3://BUCKET/PREFIX \(two slashes\)\.$"),
        ("s3:bucket/db", "is not a valid URI"),
        ("gs:/bucket", r"write gs://BUCKET/PREFIX"),
        ("s3://", r"^s3:// names no bucket: write s3://BUCKET/PREFIX\.$"),
        ("s3:///db", "names no bucket"),
        ("s3://my bucket/db", "holds a space"),
        ("s3://bucket/my db", "holds a space"),
        ("s3://-bucket/db", "does not start with a bucket name"),
        ("s3://localhost:9000/bucket/db", "names a server, not a bucket: write s3://BUCKET/PREFIX and the server in"),
        ("s3://bucket/db?versionId=3", "has a query or fragment"),
        ("s3://bucket/db#x", "has a query or fragment"),
        ("s3+ddb://bucket/db", r"names no DynamoDB table: write s3\+ddb://BUCKET/PREFIX\?ddbTableName=TABLE"),
        ("s3://[bucket/db", "is not a valid URI"),
        (
            "ftp://host/db",
            r"^ftp://host/db uses the scheme ftp://, which Lancelot does not read; use a local folder, s3",
        ),
        ("https://bucket.s3.amazonaws.com/db", "uses the scheme https://"),
        ("memory://db", "uses the scheme memory://"),
        ("oss://bucket/db", "uses the scheme oss://"),
        ("file://server/share/db", "is not a local folder URI: write file:///ABSOLUTE/PATH"),
        ("  ", "is empty"),
    ],
)
def test_what_names_no_usable_place_is_one_line_naming_it(text, message):
    with pytest.raises(LocationError, match=message) as caught:
        locate(text)
    assert isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value)


def test_a_key_written_into_the_uri_is_refused_without_ever_being_shown():
    with pytest.raises(LocationError) as caught:
        locate("s3://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/db")
    assert "wJalrXUtnFEMI" not in str(caught.value)
    assert str(caught.value).startswith("s3://AKIAEXAMPLE:***@bucket/db carries credentials")
    assert shown("s3://id:secret@bucket/db") == "s3://id:***@bucket/db"
    assert shown("/srv/db") == "/srv/db"


def test_an_endpoint_that_is_no_url_is_named():
    with pytest.raises(LocationError, match=r"^AWS_ENDPOINT_URL 127.0.0.1:9000 is not a URL: write http://HOST:PORT"):
        locate("s3://bucket/db", Storage(endpoint="127.0.0.1:9000"))
    with pytest.raises(LocationError) as caught:
        locate("s3://bucket/db", Storage(endpoint="minio:9000:user:pass@x"))
    assert "pass" not in str(caught.value)


# Lance's own words for each failure (abridged from what lance 13 raised against the test server).
LANCE_SAID = {
    "bucket": 'Status { status: 404, body: Some("<Error><Code>NoSuchBucket</Code></Error>") }',
    "key": 'status: 403, body: Some("<Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided',
    "signature": '403, body: Some("<Code>SignatureDoesNotMatch</Code>',
    "denied": "The operation lacked the necessary privileges to complete for path db/docs.lance/_versions/1.manifest",
    "nothing": 'Failed to get AWS credentials: CredentialsNotLoaded(CredentialsNotLoaded { source: Some("no providers',
    "down": 'ConnectError("tcp connect error", 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused })',
    "region": "<Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed",
    "no region": "Failed to resolve region for bucket 'bucket', /home/runner/work/lance/lance/rust/lance-io/src/"
    "object_store/providers/aws.rs:319:13",
}


@pytest.mark.parametrize(
    ("said", "line"),
    [
        (
            "bucket",
            "The bucket bucket of s3://bucket/db does not exist at http://127.0.0.1:9000: check the bucket name.",
        ),
        (
            "key",
            "The storage service at http://127.0.0.1:9000 refused the credentials for s3://bucket/db "
            "(InvalidAccessKeyId): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role this "
            "runs as.",
        ),
        ("signature", "(SignatureDoesNotMatch)"),
        ("denied", "Access to s3://bucket/db was denied (AccessDenied): the credentials in use may not read it;"),
        ("nothing", "No credentials were found for s3://bucket/db: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,"),
        ("down", "Cannot reach the storage service for s3://bucket/db at http://127.0.0.1:9000 (connection refused)."),
        ("region", "The bucket of s3://bucket/db is in another region than us-east-1: set AWS_REGION"),
        (
            "no region",
            "Cannot tell the region of the bucket of s3://bucket/db: set AWS_REGION (or AWS_DEFAULT_REGION) to the "
            "bucket's region.",
        ),
    ],
)
def test_each_storage_failure_is_one_line_naming_the_uri_and_what_to_check(said, line):
    error = OSError(f"LanceError(IO): Generic S3 error: {LANCE_SAID[said]} ... secret wJalrXUtnFEMI")
    explained = failure(locate("s3://bucket/db", MINIO), error)
    assert explained is not None and line in explained
    assert "\n" not in explained and "wJalrXUtnFEMI" not in explained and "LanceError" not in explained


def test_what_is_no_storage_failure_is_left_to_the_caller():
    assert failure(locate("s3://bucket/db"), RuntimeError("Not found: data/x.lance")) is None
    assert failure(locate("/srv/db"), OSError("Connection refused")) is None
    gcs = failure(locate("gs://bucket/db"), OSError("Client error with status 401 Unauthorized: status: 401"))
    assert (
        gcs == "The storage service refused the credentials for gs://bucket/db: check GOOGLE_APPLICATION_CREDENTIALS, "
        "or the service account this runs as."
    )


def test_the_storage_module_imports_nothing_heavy():
    code = (
        "import sys, lancelot_schema.storage;"
        "print(','.join(m for m in ('lance', 'lancedb', 'pyarrow', 'boto3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
