"""Milvus storage: the collection as the ledger, row building, the embedding cache, locks and cursors."""
