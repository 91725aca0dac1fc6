"""Pure data: documents, chunks, ids, typed metadata, filters, results, identities. No I/O."""
