"""Tests of the lab uqlab/ (one file per module)."""
