"""The table written: rows streamed into Lance, its indexes, the record of what it was built from, and the
database it lives in (`database`: where it is, its lock, what an unfinished run left)."""
