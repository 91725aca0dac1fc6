"""Shipped test support: the store conformance suite and test doubles for unit tests."""
