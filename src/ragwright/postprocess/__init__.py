"""Post-retrieval stages, in the seed's order: redundancy → MMR → rerank → token budget → reorder."""
