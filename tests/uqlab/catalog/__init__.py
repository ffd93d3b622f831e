"""Tests of uqlab/catalog/ (one file per module)."""
