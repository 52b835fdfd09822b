"""Tests of artifactr.files.core."""
