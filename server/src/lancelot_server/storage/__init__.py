"""The read-only database: the store, tables read through Lance, which tables a caller sees, their freshness."""
