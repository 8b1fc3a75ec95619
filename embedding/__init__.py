"""The embedding model, shared by ingestion (index/) and retrieval (query/)."""
from embedding.model import Encoder, load_encoder

__all__ = ["Encoder", "load_encoder"]
