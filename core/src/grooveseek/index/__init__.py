"""Indexing: opening the index for a run, the model guard, and the incremental indexer (SPEC §4)."""
