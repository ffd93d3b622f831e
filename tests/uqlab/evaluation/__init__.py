"""Tests of uqlab/evaluation/ (one file per module)."""
