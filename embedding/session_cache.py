"""The ONNX session of a model, built from its graph as onnxruntime optimised it before, kept in the onnx cache.

Building an onnxruntime session optimises the model's graph first (fusing the transformer's attention, layer norms
and quantised matrix products): most of the 0.7-1.1 s a `cairn query` spent on its model before its first vector.
The first session of a model saves that optimised graph (`SessionOptions.optimized_model_filepath`) into
`[embedding] onnx_cache`/optimized/; later sessions load it with graph optimisations off, which gives the same
graph, so the same vectors, bit for bit (tests/integration/test_embedding.py holds that).

What a cached graph is trusted for is written beside it (`<name>.json`): the model file it was made from (its
resolved path, size and modification time), onnxruntime's version, the optimisation recipe and this machine's CPU
(the graph may hold operators chosen for it), and the SHA-256 of the cached file. All of it is part of the cached
file's name, so a model or onnxruntime that changed is another entry (the stale one is removed when the new one
is written); a cached file whose bytes are not those its record names (cut short, changed, another file) is never
loaded: the session is built from the model and the cache written anew. The cache folder must be a directory of
its own (not a link); a cache that cannot be read or written (a read-only index) only costs the optimisation, as
before, never the question.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger("cairn.embedding")

FOLDER = "optimized"  # under [embedding] onnx_cache
RECIPE = "ort-optimized-graph level=all v1"  # how a cached graph is made; a change here makes new entries


def cpu_identity() -> str:
    """This machine's CPU as an optimised graph may depend on it: the architecture and its instruction flags."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        flags = platform.processor()
    return f"{platform.machine()} {hashlib.sha256(flags.encode()).hexdigest()[:16]}"


def source_record(source: Path, ort_version: str) -> dict[str, Any]:
    """What a cached graph of `source` is trusted for (its file, onnxruntime, the recipe, the CPU)."""
    resolved = source.resolve()
    info = resolved.stat()
    return {
        "source": str(resolved),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "onnxruntime": ort_version,
        "recipe": RECIPE,
        "cpu": cpu_identity(),
    }


def entry_name(record: dict[str, Any]) -> tuple[str, str]:
    """(the prefix every entry of this source shares, this entry's name): both digests, no caller's text."""
    family = hashlib.sha256(record["source"].encode()).hexdigest()[:12]
    key = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]
    return family, f"graph-{family}-{key}"


def cache_folder(cache: Path) -> Path | None:
    """`cache`/optimized, made if missing, when `cache` is in a folder that exists (an index's; a caller's default
    path under a working directory without one is not created); None (nothing cached) when it cannot be made or is
    not a plain directory of the cache (a link, a file)."""
    folder = cache / FOLDER
    try:
        if not cache.parent.is_dir():
            return None
        folder.mkdir(parents=True, exist_ok=True)
        if folder.is_symlink() or cache.is_symlink() or not folder.is_dir():
            log.warning("%s is not a directory of its own: optimised graphs are not cached there", folder)
            return None
    except OSError as exc:  # a read-only index: the sessions are built as before
        log.debug("no optimised-graph cache at %s: %s", folder, exc)
        return None
    return folder


def read_trusted(folder: Path, name: str, record: dict[str, Any]) -> bytes | None:
    """The cached graph `name`, if its record is `record` and its bytes are those the record names; else None."""
    model, manifest = folder / f"{name}.onnx", folder / f"{name}.json"
    try:
        if model.is_symlink() or manifest.is_symlink() or not model.is_file():
            return None
        saved = json.loads(manifest.read_text(encoding="utf-8"))
        data = model.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or {k: saved.get(k) for k in record} != record:
        return None
    if saved.get("bytes") != len(data) or saved.get("sha256") != hashlib.sha256(data).hexdigest():
        log.warning("the cached optimised graph %s is not the file its record names: made again", model)
        return None
    return data


def write_entry(folder: Path, family: str, name: str, record: dict[str, Any], written: Path) -> None:
    """Move the graph onnxruntime saved at `written` into place as `name`, with its record; remove the entries of
    the same model file that this one replaces."""
    data = written.read_bytes()
    manifest = {**record, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    handle, scratch = tempfile.mkstemp(prefix=".record-", dir=folder)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
    os.replace(written, folder / f"{name}.onnx")
    os.replace(scratch, folder / f"{name}.json")
    for old in folder.glob(f"*-{family}-*"):
        if old.stem != name and old.suffix in (".onnx", ".json"):
            old.unlink(missing_ok=True)


def cached_session(ort: Any, source: Path, options: Any, cache: Path, providers: list[str]) -> Any:
    """A session of the model at `source` with `options`: from its cached optimised graph when one is trusted,
    else built from the model (optimised as always), its optimised graph then cached."""
    folder = cache_folder(cache)
    if folder is None:
        return ort.InferenceSession(str(source), options, providers=providers)
    record = source_record(source, ort.__version__)
    family, name = entry_name(record)
    data = read_trusted(folder, name, record)
    if data is not None:
        level = options.graph_optimization_level
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            session = ort.InferenceSession(data, options, providers=providers)
            log.debug("the session of %s loaded its optimised graph %s", source, name)
            return session
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types for a graph it refuses
            log.warning("the cached optimised graph %s did not load (%s): made again", name, exc)
            options.graph_optimization_level = level
    try:
        handle, scratch = tempfile.mkstemp(prefix=".graph-", suffix=".onnx", dir=folder)
    except OSError as exc:  # a read-only cache: the session as before, not cached
        log.debug("the optimised graph of %s is not cached: %s", source, exc)
        return ort.InferenceSession(str(source), options, providers=providers)
    os.close(handle)
    written = Path(scratch)
    options.optimized_model_filepath = str(written)
    try:
        session = ort.InferenceSession(str(source), options, providers=providers)
        try:
            write_entry(folder, family, name, record, written)
            log.debug("the optimised graph of %s cached as %s", source, name)
        except OSError as exc:
            log.debug("the optimised graph of %s is not cached: %s", source, exc)
    finally:
        written.unlink(missing_ok=True)
    return session
