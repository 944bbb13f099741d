"""Evaluate: penalty (§4.2), held-out splits, the comparators a user would pick instead, the report tables and figures."""
