"""`--embed` through the real pipeline, a real LanceDB table and the real openai client against the test endpoint."""

import shutil

import lancedb
import pyarrow as pa
import pytest

from lancelot_indexer.embedding.vectors import VectorExtension
from lancelot_indexer.errors import EmbeddingKeyError
from lancelot_indexer.pipeline import Options, build
from lancelot_schema import layout


@pytest.fixture
def docs(small_docs):
    return small_docs


def run(docs, db, server, *, model="test-8", key="sk-test", progress=None):
    extension = VectorExtension(model=model, api_key=key, base_url=server.url, concurrency=2, on_progress=progress)
    build(docs, db, Options(), extension=extension)
    return extension.report


def read(db):
    return lancedb.connect(str(db)).open_table(layout.DEFAULT_TABLE)


def test_every_chunk_gets_the_vector_of_its_text_and_the_table_is_stamped(docs, tmp_path, embedding_server):
    seen = []
    report = run(docs, tmp_path / "db", embedding_server, progress=lambda *a: seen.append(a))
    table = read(tmp_path / "db")
    assert table.schema.field(layout.VECTOR).type == pa.list_(pa.float32(), 8)
    rows = table.to_arrow().to_pylist()
    for row in rows:
        assert row[layout.VECTOR] == pytest.approx(embedding_server.vector(row[layout.TEXT], "test-8"), abs=1e-6)
    stamped = layout.decode_metadata(table.schema.metadata)
    assert stamped["embedding_model"] == "test-8" and stamped["vector_width"] == "8"
    assert stamped["embedded"] == layout.EMBEDDED_TEXT == "text"
    assert stamped["embedding_host"] == f"127.0.0.1:{embedding_server.port}"
    assert (report.embedded, report.reused, report.width) == (len(rows), 0, 8)
    assert seen[-1] == ("embed", len(rows), len(rows))


def test_an_unchanged_folder_makes_no_request_and_an_edit_embeds_only_the_changed_chunk(
    docs, tmp_path, embedding_server
):
    first = run(docs, tmp_path / "db", embedding_server)
    before = {r[layout.ID]: r[layout.VECTOR] for r in read(tmp_path / "db").to_arrow().to_pylist()}
    embedding_server.reset()
    second = run(docs, tmp_path / "db", embedding_server)
    assert embedding_server.requests == [] and (second.embedded, second.reused) == (0, first.embedded)
    (docs / "notes.txt").write_text("Backups are taken with pg_basebackup.\n", encoding="utf-8")
    third = run(docs, tmp_path / "db", embedding_server)
    assert [t for r in embedding_server.requests for t in r.inputs] == ["Backups are taken with pg_basebackup."]
    assert (third.embedded, third.reused) == (1, first.embedded - 1)
    after = {r[layout.ID]: r[layout.VECTOR] for r in read(tmp_path / "db").to_arrow().to_pylist()}
    assert after["notes.txt#0"] == pytest.approx(
        embedding_server.vector("Backups are taken with pg_basebackup.", "test-8")
    )
    assert all(after[i] == before[i] for i in before if i != "notes.txt#0")


def test_identical_texts_are_embedded_once(docs, tmp_path, embedding_server):
    shutil.copy(docs / "notes.txt", docs / "copy.txt")
    report = run(docs, tmp_path / "db", embedding_server)
    assert report.reused == 0 and report.embedded == read(tmp_path / "db").count_rows()
    assert embedding_server.input_count == report.embedded - 1  # the copy's chunk was not sent again


def test_another_model_embeds_everything_again(docs, tmp_path, embedding_server):
    run(docs, tmp_path / "db", embedding_server, model="test-8")
    embedding_server.reset()
    report = run(docs, tmp_path / "db", embedding_server, model="test-16")
    table = read(tmp_path / "db")
    assert report.reused == 0 and embedding_server.input_count == table.count_rows()
    assert table.schema.field(layout.VECTOR).type == pa.list_(pa.float32(), 16)
    assert layout.decode_metadata(table.schema.metadata)["embedding_model"] == "test-16"


def test_a_failed_embedding_leaves_the_table_as_it_was(docs, tmp_path, embedding_server):
    run(docs, tmp_path / "db", embedding_server)
    before = read(tmp_path / "db")
    version, rows = before.version, before.to_arrow()
    (docs / "new.md").write_text("# New\n\nA page that needs a vector.\n", encoding="utf-8")
    with pytest.raises(EmbeddingKeyError):
        run(docs, tmp_path / "db", embedding_server, key="sk-wrong")
    after = read(tmp_path / "db")
    assert after.version == version and after.to_arrow().equals(rows)


def vectors_match(db, server, model):
    return all(
        row[layout.VECTOR] is not None
        and row[layout.VECTOR] == pytest.approx(server.vector(row[layout.TEXT], model), abs=1e-6)
        for row in read(db).to_arrow().to_pylist()
    )


def test_another_model_of_the_same_width_replaces_every_vector(docs, tmp_path):
    from tests.support.embedding_server import EmbeddingServer
    from tests.support.fake_vectors import hashed_vector

    def embed(texts, model):
        return [hashed_vector(f"{model}:{text}", 8) for text in texts]

    with EmbeddingServer(models={"a": 8, "b": 8}, embed=embed) as server:
        run(docs, tmp_path / "db", server, model="a")
        assert vectors_match(tmp_path / "db", server, "a")
        run(docs, tmp_path / "db", server, model="b")
        assert vectors_match(tmp_path / "db", server, "b")


def test_another_width_replaces_every_vector(docs, tmp_path, embedding_server):
    run(docs, tmp_path / "db", embedding_server, model="test-8")
    run(docs, tmp_path / "db", embedding_server, model="test-16")
    assert vectors_match(tmp_path / "db", embedding_server, "test-16")


def test_embedding_a_table_built_without_vectors_fills_every_row(docs, tmp_path, embedding_server):
    build(docs, tmp_path / "db", Options())
    run(docs, tmp_path / "db", embedding_server)
    assert vectors_match(tmp_path / "db", embedding_server, "test-8")


def test_new_vectors_replace_the_table_in_one_commit_and_the_same_model_merges(docs, tmp_path, embedding_server):
    db = tmp_path / "db"
    build(docs, db, Options())
    version = read(db).version
    extension = VectorExtension(model="test-8", api_key="sk-test", base_url=embedding_server.url)
    assert build(docs, db, Options(), extension=extension).strategy == "overwrite"
    # One commit for data, vectors and stamp, then one per index (full text on text, title and heading;
    # B-tree on path and passage; bitmap on file_type): no version shows stale vectors.
    assert read(db).version == version + 7
    (docs / "notes.txt").write_text("Backups are taken with pg_basebackup.\n", encoding="utf-8")
    assert build(docs, db, Options(), extension=extension).strategy == "merge"
    assert vectors_match(db, embedding_server, "test-8")
    assert list(read(db).list_indices())  # the full-text index survived both


class Earlier:
    """`--embed` as another version wrote it: vectors of `embeds(row)` from the test endpoint's vector
    function (no request), stamped with the model and width, and with `embedded` when given."""

    def __init__(self, server, embedded, embeds):
        self.server, self.embedded, self.embeds = server, embedded, embeds

    def settings(self):
        return {layout.META_EMBEDDING_MODEL: "test-8"} | (
            {layout.META_EMBEDDED: self.embedded} if self.embedded else {}
        )

    def kept(self, rows, width):
        pass

    def extend(self, rows, current, staged):
        vectors = [self.server.vector(self.embeds(row), "test-8") for row in rows.to_pylist()]
        column = pa.array(vectors, type=pa.list_(pa.float32(), 8))
        stamp = {layout.META_EMBEDDING_MODEL: "test-8", layout.META_VECTOR_WIDTH: "8"}
        if self.embedded is not None:
            stamp[layout.META_EMBEDDED] = self.embedded
        return rows.append_column(pa.field(layout.VECTOR, column.type), column), stamp


def in_context(row):
    return f"{row[layout.TITLE]} > {row[layout.HEADING]}\n\n{row[layout.TEXT]}"


def test_a_table_from_before_the_stamp_keeps_its_vectors_of_the_text_and_is_stamped(docs, tmp_path, embedding_server):
    db = tmp_path / "db"
    build(docs, db, Options(), extension=Earlier(embedding_server, None, lambda row: row[layout.TEXT]))
    assert "embedded" not in layout.decode_metadata(read(db).schema.metadata)
    report = run(docs, db, embedding_server)
    assert embedding_server.requests == [] and (report.embedded, report.reused) == (0, read(db).count_rows())
    assert layout.decode_metadata(read(db).schema.metadata)["embedded"] == layout.EMBEDDED_TEXT
    assert vectors_match(db, embedding_server, "test-8")


def test_vectors_of_another_input_are_all_made_again_once_then_reused(docs, tmp_path, embedding_server):
    db = tmp_path / "db"
    build(docs, db, Options(), extension=Earlier(embedding_server, layout.EMBEDDED_CONTEXT, in_context))
    first = run(docs, db, embedding_server)
    rows = read(db).to_arrow().to_pylist()
    assert (first.embedded, first.reused) == (len(rows), 0)
    assert sorted(t for r in embedding_server.requests for t in r.inputs) == sorted(r[layout.TEXT] for r in rows)
    assert layout.decode_metadata(read(db).schema.metadata)["embedded"] == layout.EMBEDDED_TEXT
    embedding_server.reset()
    second = run(docs, db, embedding_server)
    assert embedding_server.requests == [] and (second.embedded, second.reused) == (0, len(rows))


def test_vectors_of_another_input_are_replaced_in_the_table(docs, tmp_path, embedding_server):
    db = tmp_path / "db"
    build(docs, db, Options(), extension=Earlier(embedding_server, layout.EMBEDDED_CONTEXT, in_context))
    run(docs, db, embedding_server)
    assert vectors_match(db, embedding_server, "test-8")
