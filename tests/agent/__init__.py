"""Tests of the native file tools (ADR-0006)."""
