"""Stores: where chunks, vectors and the registry live (memory reference, SQLite default)."""
