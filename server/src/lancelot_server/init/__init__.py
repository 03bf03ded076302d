"""`lancelot-init`: the prompts, the checks, and the one writer of the server distribution (its own settings)."""
