"""Tests of artifactr.files.apps.fake."""
