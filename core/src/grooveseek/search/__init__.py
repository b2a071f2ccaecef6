"""Search: query compilation, the two retrieval legs and their fusion (SPEC §6)."""
