"""Speculative-decoding benchmark helpers."""
