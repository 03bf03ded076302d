from lancelot_schema import layout


def test_chunk_id_is_path_and_number():
    assert layout.chunk_id("guide/install.md", 0) == "guide/install.md#0"
    assert layout.chunk_id("a b/c.html", 12) == "a b/c.html#12"


def test_source_precedence_puts_anythingllm_columns_first():
    assert layout.SOURCE_COLUMNS == ("chunkSource", "docSource", "path")


def test_decode_metadata_keeps_only_our_keys_without_prefix():
    raw = {
        b"lancelot.layout_version": b"1",
        b"lancelot.chunk_size": b"1200",
        b"pandas": b"{}",
    }
    assert layout.decode_metadata(raw) == {"layout_version": "1", "chunk_size": "1200"}
    assert layout.decode_metadata(None) == {}


def test_metadata_keys_are_distinct_and_prefixed():
    assert len(set(layout.METADATA_KEYS)) == len(layout.METADATA_KEYS)
    assert all(key.startswith("lancelot.") for key in layout.METADATA_KEYS)


def test_table_names_lancedb_accepts_pass_and_others_say_why():
    assert layout.table_name_problem("docs-v2.1_en") is None
    assert "not a table name" in (layout.table_name_problem("../x") or "")
    assert layout.table_name_problem("..") is not None
