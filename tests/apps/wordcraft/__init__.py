"""Tests of the WordCraft adapter and its stand-in for wordcraft-cli."""
