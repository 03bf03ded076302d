"""`--embed`: vectors for the chunks from an OpenAI-compatible endpoint, reused for unchanged documents."""
