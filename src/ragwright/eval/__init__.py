"""Evaluation: BEIR datasets, IR metrics, and (with later issues) statistics and reports."""
