"""Tests of uqlab/models/ (one file per module)."""
