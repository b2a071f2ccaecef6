"""Tiny random models for offline tests and benchmarks (SPEC R5.24). Not used at run time.

``build_tiny_cross_encoder`` stands in for a reranker; ``build_two_file_export`` for BAAI/bge-m3's
ONNX export, whose graph keeps its tensors in two external-data files (R5.6).

No reranker ships inside a package, so the tests generate one: an ONNX graph with the inputs and
output of a real BERT-style cross-encoder export (``input_ids``, ``attention_mask``,
``token_type_ids`` → ``logits`` of shape (batch, 1)) and random weights, next to the vendored
all-MiniLM-L6-v2 tokenizer. It is loaded through fastembed's real ``TextCrossEncoder`` with
``specific_model_path``, so loading, tokenisation, truncation, batching and scoring are the
production code; only the ranking quality is meaningless. Building it needs the dev-only ``onnx``
package, imported here lazily.

The graph: word and token-type embeddings (Gather, Add) → mean over the unmasked positions →
Tanh → MatMul → + bias. A masked mean makes a pair's score independent of how much padding its
batch adds, as attention masking does in a real model; there are no position embeddings, so the
graph accepts any length and a budget that failed to cut a long passage would show in its score.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from .models import RerankerSpec
from .packaged import VENDOR_DIR

# A fastembed name of our own, so the custom-model registration path is exercised too.
TINY_SPEC = RerankerSpec(
    id="tiny-cross-encoder",
    fastembed_name="grooveseek/tiny-random-cross-encoder",
    hf_repo="grooveseek/tiny-random-cross-encoder",  # never contacted: always loaded from a directory
    model_file="model.onnx",
    download_size="0 MB",
    native=False,
    licence="MIT",
    notes="random weights, for tests and benchmarks only",
)
TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json", "vocab.txt")


def build_tiny_cross_encoder(
    target: Path,
    *,
    seed: int = 0,
    hidden: int = 8,
    model_file: str = "model.onnx",
    model_max_length: int | None = None,
) -> Path:
    """Write the random model and the vendored tokenizer into ``target`` (created); return ``target``.

    ``model_file`` may name a subdirectory (``onnx/model.onnx``, the layout of the real rerankers).
    ``model_max_length`` rewrites tokenizer_config.json's limit (the shipped file says 512), so a
    test can stand in for a model that claims a long context, as bge-reranker-v2-m3 does (8192).
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:  # a dev-only dependency; say how to get it instead of a traceback
        raise RuntimeError(
            "building the tiny test cross-encoder needs the onnx package: pip install onnx"
        ) from exc
    target.mkdir(parents=True, exist_ok=True)
    vocab = sum(1 for _ in (VENDOR_DIR / "vocab.txt").open(encoding="utf-8"))
    rng = np.random.default_rng(seed)
    weights = {
        "word_embeddings": rng.standard_normal((vocab, hidden)),
        "token_type_embeddings": rng.standard_normal((2, hidden)),
        "classifier": rng.standard_normal((hidden, 1)),
        "bias": rng.standard_normal((1,)),
    }
    inits = [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()]
    inits += [numpy_helper.from_array(np.array([axis], np.int64), f"axis{axis}") for axis in (1, 2)]
    node = helper.make_node
    nodes = [
        node("Gather", ["word_embeddings", "input_ids"], ["words"]),
        node("Gather", ["token_type_embeddings", "token_type_ids"], ["types"]),
        node("Add", ["words", "types"], ["hidden"]),
        node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["mask", "axis2"], ["mask3"]),
        node("Mul", ["hidden", "mask3"], ["masked"]),
        node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
        node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),
        node("Div", ["summed", "count"], ["mean"]),
        node("Tanh", ["mean"], ["pooled"]),
        node("MatMul", ["pooled", "classifier"], ["raw"]),
        node("Add", ["raw", "bias"], ["logits"]),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])]
    graph = helper.make_graph(nodes, "tiny_random_cross_encoder", inputs, outputs, inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="grooveseek-tests"
    )
    model.ir_version = 8  # opset 17's IR version: loadable by any onnxruntime from 1.13 on
    onnx.checker.check_model(model)
    (target / model_file).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target / model_file))
    for name in TOKENIZER_FILES:
        shutil.copyfile(VENDOR_DIR / name, target / name)
    config = json.loads((VENDOR_DIR / "tokenizer_config.json").read_text(encoding="utf-8"))
    if model_max_length is not None:
        config["model_max_length"] = model_max_length
    (target / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return target


def build_two_file_export(target: Path, *, dimension: int = 1024, hidden: int = 4, seed: int = 0) -> Path:
    """Write a random embedder laid out like BAAI/bge-m3's ONNX export into ``target``; return it.

    ``onnx/model.onnx`` holds only the graph. Its word embeddings live in the external-data file
    ``onnx/model.onnx_data``, and its output projection is the value of a Constant node stored in
    ``onnx/Constant_7_attr__value``, which is how BAAI's export stores that file. ONNX Runtime
    therefore needs both files beside the model. The output is ``last_hidden_state`` (batch,
    sequence, ``dimension``), which fastembed CLS-pools. The vendored MiniLM tokenizer sits at the
    top level, where fastembed looks for it. Needs the dev-only ``onnx`` package.
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        from onnx.external_data_helper import set_external_data
    except ImportError as exc:
        raise RuntimeError(
            "building the two-file test export needs the onnx package: pip install onnx"
        ) from exc
    onnx_dir = target / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    vocab = sum(1 for _ in (VENDOR_DIR / "vocab.txt").open(encoding="utf-8"))
    rng = np.random.default_rng(seed)
    words = numpy_helper.from_array(
        rng.standard_normal((vocab, hidden)).astype(np.float32), "word_embeddings"
    )
    set_external_data(words, "model.onnx_data")  # location is relative to model.onnx, as in BAAI's file
    projection = numpy_helper.from_array(rng.standard_normal((hidden, dimension)).astype(np.float32), "proj")
    set_external_data(projection, "Constant_7_attr__value")
    nodes = [
        helper.make_node("Gather", ["word_embeddings", "input_ids"], ["words"]),
        helper.make_node("Constant", [], ["projection"], value=projection),
        helper.make_node("MatMul", ["words", "projection"], ["last_hidden_state"]),
    ]
    # attention_mask is declared but unused: fastembed always feeds it.
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", dimension]
    )
    graph = helper.make_graph(nodes, "two_file_export", inputs, [output], [words])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="grooveseek-tests"
    )
    model.ir_version = 8
    # save_model writes every tensor marked external to its own location beside the model file.
    onnx.save_model(model, str(onnx_dir / "model.onnx"))
    for name in (*TOKENIZER_FILES, "tokenizer_config.json"):
        shutil.copyfile(VENDOR_DIR / name, target / name)
    return target
