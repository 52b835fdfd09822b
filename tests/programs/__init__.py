"""Tests of artifactr.files.programs."""
