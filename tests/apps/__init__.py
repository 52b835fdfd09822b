"""Tests of artifactr.files.apps."""
