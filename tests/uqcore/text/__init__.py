"""Tests of uqcore/text/ (one file per module)."""
