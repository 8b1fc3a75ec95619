"""What a run from the shell sets starting before its own modules import: the embedded index's server.

A scheduled run usually finds the index server idled out (`[milvus] lite_idle_seconds`, default 30), and the first
thing a run does, once its modules have imported (a second or two of one core), is connect to it: it then waited
for the server to start and open the folder (1-3 s, more at size). Started from a thread at the command's
beginning, the server starts on the other core while this one imports, and the run's own connection finds it
serving (index/liteserver.py: a second `connect` waits for a start under way, never starts a second server).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.schemas.config import MilvusConfig

log = logging.getLogger(__name__)


def start_index_server(milvus: MilvusConfig) -> threading.Thread | None:
    """The thread that finds or starts the server of an existing Lite index (None: a Milvus server, or an index
    the run creates); it holds a lease on it for this process's life (the run's connection takes its own). What
    goes wrong there is left for the run's own connection to meet and report."""
    folder = Path(milvus.uri)
    if not milvus.is_lite or not folder.is_dir():
        return None

    def connect() -> None:
        from cairn.index import liteserver

        try:
            liteserver.connect(folder, milvus.lite_idle_seconds)
        except Exception as exc:  # noqa: BLE001 - the run's own connection reports it
            log.debug("the index server did not start ahead of the run: %s", exc)

    thread = threading.Thread(target=connect, name="cairn-index-server", daemon=True)
    thread.start()
    return thread
