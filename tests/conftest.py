"""Shared pytest configuration: fixtures from `tests/support` are available to every test."""

pytest_plugins = ["tests.support.fixtures"]
