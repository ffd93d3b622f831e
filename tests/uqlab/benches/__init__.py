"""Tests of uqlab/benches/ (one file per module)."""
