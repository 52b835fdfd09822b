"""Tests of the SQL state: migrations and row-level security (RFC-0003)."""
