"""Tests of the library uqcore/ (one file per module)."""
