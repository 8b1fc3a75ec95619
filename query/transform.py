"""Step 2, the query-transform hook (HyDE, multi-query): extra embedding seeds, never the search text.

Configure `[query] transform = "package.module:function"`; the function takes the query and returns a string
or a list of strings (a hypothetical answer, paraphrases). A spec that cannot be imported is refused when the
configuration is loaded (ConfigError); an error the function raises falls back to the raw query alone.
By default what it returns is embedded beside the question (multi-query); with `transform_replaces_query = true`
instead of it (HyDE as rule 7 has it: the hypothetical answer is what is compared with the sections). The BM25
leg always reads the question itself.

The hook has `[query] transform_timeout_seconds` (2 s) per question: it runs on a daemon thread of its own, and a
hook that has not returned by then is left to finish on its own while the question runs with the raw query,
flagged in the trace (`transform: "timed out after 2 s: raw query used"`). While MAX_STUCK calls are still
running past their deadline, the hook is not called at all (flagged too): a hook that hangs costs a few threads,
never a thread per question.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from cairn.schemas.values import import_callable

Transform = Callable[[str], "str | list[str]"]
log = logging.getLogger("cairn.query")
MAX_STUCK = 4  # hook calls still running past their deadline; with this many, the hook is not called
_stuck = threading.BoundedSemaphore(MAX_STUCK)  # one slot per call running (a slot is kept by a call that overran)


class TransformTimeout(Exception):
    """The hook did not return within its deadline."""


class TransformBusy(Exception):
    """MAX_STUCK earlier calls of the hook are still running past their deadlines."""


def call_in_time(transform: Transform, text: str, seconds: float) -> Any:
    """`transform(text)` on a daemon thread, waited for at most `seconds`: its value or its exception;
    TransformTimeout when it overran (it goes on, holding its slot until it ends); TransformBusy when every slot is
    held by a call that overran."""
    if not _stuck.acquire(blocking=False):
        raise TransformBusy()
    done = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = transform(text)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["error"] = exc
        finally:
            done.set()
            _stuck.release()

    threading.Thread(target=run, name="cairn-transform", daemon=True).start()
    if not done.wait(seconds):
        raise TransformTimeout()
    if "error" in box:
        raise box["error"]
    return box["value"]


def load_transform(spec: str) -> Transform | None:
    """The hook `spec` names, or None when it is off. A loaded config has checked it (schemas/values.py); a
    `QueryConfig` built by hand is checked when it is built, so this fails only on a spec never validated."""
    return import_callable(spec) if spec else None


def seeds(
    text: str, transform: Transform | None, replace: bool = False, timeout: float | None = None
) -> tuple[list[str], str]:
    """The texts to embed (the raw query first, unless `replace` and the hook gave something) and a note for the
    trace. With `timeout`, the hook has that many seconds (call_in_time)."""
    if transform is None:
        return [text], "off"
    try:
        produced = transform(text) if timeout is None else call_in_time(transform, text, timeout)
    except TransformTimeout:
        log.warning("query transform did not return within %g s: the raw query is used", timeout)
        return [text], f"timed out after {timeout:g} s: raw query used"
    except TransformBusy:
        log.warning("query transform skipped: %d earlier calls are still running past their deadline", MAX_STUCK)
        return [text], f"skipped ({MAX_STUCK} earlier calls still running): raw query used"
    except Exception as exc:  # noqa: BLE001 - a broken hook must never break retrieval
        log.warning("query transform failed, using the raw query: %s", exc)
        return [text], f"failed ({type(exc).__name__}): raw query used"
    try:
        extra = [produced] if isinstance(produced, str) else list(produced)
        extra = [e for e in extra if isinstance(e, str) and e.strip()][:4]
    except Exception as exc:  # noqa: BLE001 - a broken hook must never break retrieval
        log.warning("query transform failed, using the raw query: %s", exc)
        return [text], f"failed ({type(exc).__name__}): raw query used"
    if replace and extra:
        return extra, f"{len(extra)} seed(s) instead of the question"
    return [text, *extra], f"{len(extra)} extra seed(s)"
