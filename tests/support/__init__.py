"""Real test helpers (servers on 127.0.0.1 and their fixtures), shared by the test suites and benches."""
