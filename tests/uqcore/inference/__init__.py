"""Tests of uqcore/inference/ (one file per module)."""
