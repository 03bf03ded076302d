"""Reading what a search found: a document's passages, readings within a budget, resources, Markdown replies."""
