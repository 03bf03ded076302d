"""Searching a table: BM25 and vector rankings, the substring match, fusion, filters, hits, query embeddings."""
