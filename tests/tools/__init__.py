"""Tests of tools/ (one file per module)."""
