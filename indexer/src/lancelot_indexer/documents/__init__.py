"""The documents under DOCS: which there are (`walk`), which changed since the table was built (`changes`), and
their rows, read by worker processes (`collect`, `workers`)."""
