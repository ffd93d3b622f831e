"""Tests of uqcore/nets/ (one file per module)."""
