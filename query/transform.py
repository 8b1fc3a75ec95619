"""Step 2, the query-transform hook (HyDE, multi-query): extra embedding seeds, never the search text.

Configure `[query] transform = "package.module:function"`; the function takes the query and returns a string
or a list of strings (a hypothetical answer, paraphrases). A spec that cannot be imported is refused when the
configuration is loaded (ConfigError); an error the function raises falls back to the raw query alone.
By default what it returns is embedded beside the question (multi-query); with `transform_replaces_query = true`
instead of it (HyDE as rule 7 has it: the hypothetical answer is what is compared with the sections). The BM25
leg always reads the question itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cairn.schemas.values import import_callable

Transform = Callable[[str], "str | list[str]"]
log = logging.getLogger("cairn.query")


def load_transform(spec: str) -> Transform | None:
    """The hook `spec` names, or None when it is off. A loaded config has checked it (schemas/values.py); a
    `QueryConfig` built by hand is checked when it is built, so this fails only on a spec never validated."""
    return import_callable(spec) if spec else None


def seeds(text: str, transform: Transform | None, replace: bool = False) -> tuple[list[str], str]:
    """The texts to embed (the raw query first, unless `replace` and the hook gave something) and a note for the
    trace."""
    if transform is None:
        return [text], "off"
    try:
        produced = transform(text)
        extra = [produced] if isinstance(produced, str) else list(produced)
        extra = [e for e in extra if isinstance(e, str) and e.strip()][:4]
    except Exception as exc:  # noqa: BLE001 - a broken hook must never break retrieval
        log.warning("query transform failed, using the raw query: %s", exc)
        return [text], f"failed ({type(exc).__name__}): raw query used"
    if replace and extra:
        return extra, f"{len(extra)} seed(s) instead of the question"
    return [text, *extra], f"{len(extra)} extra seed(s)"
