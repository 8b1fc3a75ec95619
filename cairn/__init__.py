"""Cairn: batch ingestion and indexing for retrieval over an engineering organisation's knowledge.

Every layer is a subpackage of this one namespace (pyproject.toml maps the repository's top-level folders
into it), so a service that imports Cairn collides with nothing of its own:

    cairn.schemas    records, enums, the collection schema, the configuration model, the errors
    cairn.sources    connectors: wiki, git, pagerduty, pdf (folder or S3)
    cairn.chunkers   layouts -> parent sections and child chunks, abstracts, chunk health
    cairn.embedding  the bundled model (torch or an int8 ONNX export)
    cairn.index      the Milvus access layer, rows, the ledger read from the collection, the embedding cache
    cairn.quality    great-expectations suites and data-quality reports
    cairn.query      Retriever.retrieve(): what downstream services import
    cairn.flows      the Prefect flows that wire the layers above
    cairn.cli        the `cairn` command, on top of everything
"""

__version__ = "0.5.0"
