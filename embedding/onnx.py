"""The ONNX int8 backend: the same model, exported once from its bundled weights, quantised, then run by
onnxruntime.

    export:   torch (already installed for the default backend) traces the transformer to ONNX (fp32),
              onnxruntime's dynamic quantisation turns its weights into int8 (per channel). Both files
              go to `cache_dir/<model>-<digest>/`, where digest covers the weights, the tokenizer and the
              exporter's versions: a new model package or onnxruntime never reuses an old export. The
              export writes to a temporary folder and renames it into place, so a crash leaves nothing
              half-written, and concurrent first runs (Dask workers) each export and one rename wins.
    encode:   embedding/onnx_runtime.SentenceOnnx: the model's own tokenizer.json (truncation at max_seq_length,
              like sentence-transformers), one text per run (int8: see SentenceOnnx), mean pooling over the
              attention mask, L2 norm: the pipeline sentence-transformers runs for this model (modules.json:
              Transformer, Pooling mean, Normalize), so only the int8 arithmetic differs. bench.embedding
              measures how much.

No optimum: its extra would downgrade sentence-transformers (see ../shared/STACK.md).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from cairn.embedding.onnx_runtime import INPUTS

# How the file is made; part of the digest, so a change here re-exports. Eager attention exports as plain
# MatMul/Softmax ops, which onnxruntime runs ~20% faster than the SDPA export (measured on 300 runbook texts).
RECIPE = "attn=eager opset=17 int8=dynamic,per-channel,QInt8"
FILES_HASHED = ("model.safetensors", "tokenizer.json", "config.json", "modules.json", "1_Pooling/config.json")


def export_digest(model_dir: Path) -> str:
    import onnxruntime
    import torch

    digest = hashlib.sha256(f"{RECIPE} onnxruntime {onnxruntime.__version__} torch {torch.__version__}\n".encode())
    for name in FILES_HASHED:
        path = model_dir / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def check_pooling(model_dir: Path) -> None:
    """This runtime re-implements mean pooling + normalisation: refuse a model configured otherwise."""
    pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((model_dir / "modules.json").read_text())]
    if not pooling.get("pooling_mode_mean_tokens") or modules != ["Transformer", "Pooling", "Normalize"]:
        raise RuntimeError(
            f"{model_dir}: the onnx-int8 backend supports mean pooling + Normalize only ({modules}, {pooling})"
        )


def export_int8(model_dir: Path, cache_dir: Path, name: str) -> Path:
    """The int8 ONNX file for the model at `model_dir`, exported into `cache_dir` unless already there."""
    check_pooling(model_dir)
    target = cache_dir / f"{name}-{export_digest(model_dir)}"
    model_path = target / "model_int8.onnx"
    if model_path.exists():
        return model_path
    cache_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=cache_dir))
    try:
        _export(model_dir, scratch)
        try:
            scratch.rename(target)
        except OSError:
            if not model_path.exists():  # not another process's finished export: a real failure
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return model_path


def _export(model_dir: Path, out: Path) -> None:
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = export_fp32(model_dir, out / "model.onnx")
    quant_log = logging.getLogger()  # quantize_dynamic warns on the root logger about pre-processing
    level = quant_log.level
    quant_log.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32), str(out / "model_int8.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        quant_log.setLevel(level)
    fp32.unlink()  # only the int8 file is served; the fp32 one is 4x its size


def export_fp32(model_dir: Path, path: Path) -> Path:
    """The transformer traced to an fp32 ONNX file at `path`: token ids in, last hidden state out (pooling and
    normalisation are the runtime's). Also the query model of a torch collection (embedding/query_model.py)."""
    import warnings

    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    transformer = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(["an export sample", "a second, longer export sample"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(
            LastHiddenState(),
            tuple(sample[n] for n in INPUTS),
            str(path),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return path
