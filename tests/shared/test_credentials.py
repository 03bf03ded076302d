import base64
import json

import pytest

from lancelot_schema import credentials
from lancelot_schema.credentials import CredentialsError, seal, unseal

KEY = "sk-proj-test0123456789abcdefXYZ"


def test_a_sealed_key_opens_again_here():
    assert unseal(seal(KEY), source="x") == KEY


def test_a_sealed_key_holds_the_key_neither_in_clear_nor_in_base64():
    blob = seal(KEY)
    assert KEY.encode() not in blob
    assert base64.b64encode(KEY.encode()) not in blob
    assert b"sk-" not in blob


def test_each_seal_is_different_for_the_same_key():
    assert seal(KEY) != seal(KEY)


def test_a_copy_from_another_machine_or_account_does_not_open():
    blob = seal(KEY, identity=b"another-machine\0" + b"1000")
    with pytest.raises(CredentialsError) as caught:
        unseal(blob, source="/somewhere/api-key.enc")
    message = str(caught.value)
    assert "/somewhere/api-key.enc" in message
    assert "another machine" in message
    assert "lancelot-init --forget" in message


def test_a_changed_file_does_not_open():
    record = json.loads(seal(KEY))
    data = bytearray(base64.b64decode(record["data"]))
    data[0] ^= 1
    record["data"] = base64.b64encode(bytes(data)).decode()
    with pytest.raises(CredentialsError, match="cannot be opened here"):
        unseal(json.dumps(record).encode(), source="f")


@pytest.mark.parametrize("blob", [b"", b"{", b"[]", b'{"format": "other"}', b'{"format": "lancelot-sealed-1"}'])
def test_a_damaged_file_names_itself_and_the_fix(blob):
    with pytest.raises(CredentialsError) as caught:
        unseal(blob, source="/x/api-key.enc")
    assert "/x/api-key.enc is damaged" in str(caught.value)
    assert "lancelot-init --forget" in str(caught.value)


def test_the_identity_binds_this_machine_and_this_user():
    identity = credentials.machine_identity()
    assert identity == credentials.machine_identity()
    machine, _, user = identity.partition(b"\0")
    assert machine and user


def test_nothing_stored_reads_as_no_key(tmp_path):
    assert credentials.read_api_key(tmp_path, None) is None


def test_a_missing_key_file_names_it(tmp_path):
    with pytest.raises(CredentialsError) as caught:
        credentials.read_api_key(tmp_path, credentials.IN_FILE)
    assert str(tmp_path / "api-key.enc") in str(caught.value)
