"""Tests of viz/ (one file per module)."""
