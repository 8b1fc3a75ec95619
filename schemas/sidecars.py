"""Where Cairn writes beside its index: never on the configuration file, never inside a folder a source reads.

A state file named like the configuration replaced it (moved aside as damaged, then rebuilt as SQLite); a cache
inside a wiki folder would be written into what the next run reads. The configuration is refused instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.schemas.config import CairnConfig


def check_sidecars(config: CairnConfig) -> None:
    """ValueError naming the key when something Cairn writes (cursors and ledgers, the embedding cache, a Lite
    index, reports) would land on the configuration file or inside a source's folder."""
    written = {
        "state_path": config.state_path,
        "[embedding] cache_path": config.embedding.cache_path,
        "[quality] report_dir": config.quality.report_dir,
    }
    if config.serve.feedback_path:
        written["[serve] feedback_path"] = config.serve.feedback_path
    if config.milvus.is_lite:
        written["[milvus] uri"] = config.milvus.uri
    config_file = Path(config.config_path).resolve() if config.config_path else None
    # the folders a source reads files from; a git source's path is a repository it reads committed blobs of,
    # so Cairn's files inside its working tree (state under ./data in the repository itself) are never read
    roots = {
        s.name: Path(root).resolve() for s in config.sources if s.type != "git" and (root := getattr(s, "path", None))
    }
    for key, value in written.items():
        where = Path(value).resolve()
        if where == config_file:
            raise ValueError(
                f"{key} {value!r} is the configuration file itself: give Cairn's files a path of their own"
            )
        for name, root in roots.items():
            if where.is_relative_to(root):
                raise ValueError(
                    f"{key} {value!r} is inside the folder source {name!r} reads ({root}): Cairn would write into its"
                    " own input; put it elsewhere"
                )
