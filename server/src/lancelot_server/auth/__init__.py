"""Who may call an HTTP or Lambda server, and who is calling: bearer tokens (static, JWT) and the caller."""
