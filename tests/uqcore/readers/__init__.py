"""Tests of uqcore/readers/ (one file per module)."""
