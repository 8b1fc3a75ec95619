"""The embedding model, shared by ingestion (index/) and retrieval (query/)."""
from embedding.model import BACKENDS, Encoder, encoder_for, load_encoder

__all__ = ["BACKENDS", "Encoder", "encoder_for", "load_encoder"]
