"""Tests of ui/logic/ (one file per module)."""
