"""Experiment drivers behind ``kpm reproduce`` (one module per paper table or figure)."""
