"""The embedding model, shared by ingestion (index/) and retrieval (query/)."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
# What the package offers, each name once (`X as X`: an explicit re-export, instead of an import and __all__).
from cairn.embedding.encoder import Encoder as Encoder
from cairn.embedding.model import BACKENDS as BACKENDS
from cairn.embedding.model import ModelEncoder as ModelEncoder
from cairn.embedding.model import encoder_for as encoder_for
from cairn.embedding.model import encoder_for_identity as encoder_for_identity
from cairn.embedding.model import load_encoder as load_encoder
from cairn.embedding.model import query_encoder_for as query_encoder_for
