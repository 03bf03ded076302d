"""A document as its reader gives it (blocks, metadata), packed into chunks of about the chunk size."""
