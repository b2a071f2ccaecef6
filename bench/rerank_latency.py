#!/usr/bin/env python3
"""Reranker latency for one query against 50 realistic passages (SPEC R5.23; issue 3 part 5).

    .venv/bin/python bench/rerank_latency.py [--runs 20] [--shape minilm|base|large] [--batch-size 16]

Passages are the chunks of tests/fixtures/corpora/npm-docs, indexed with the fake embedder and
sent exactly as the rerank stage sends them (``<context>\\n\\n<content>``), cycled up to --pairs.
Three kinds of model are timed, each with the GrooveSeek scorer (pair budget 512 tokens,
length-sorted balanced batches) and with fastembed's own ``rerank`` loop (input order, every
batch padded to its longest pair) for comparison:

- ``tiny``: the tiny random test model. It has no attention layers, so its time is the pipeline's
  overhead (tokenising, padding, batching, the ONNX calls), NOT the cost of a real reranker.
- ``--shape minilm|base|large``: random weights in the shape of ms-marco-MiniLM-L-6 (6 layers,
  384 wide), bge-reranker-base (12 × 768) or bge-reranker-v2-m3 (24 × 1024). Latency depends on
  the shape, not on the weight values, so this estimates a real model's cost; rankings are noise.
  ``base`` and ``large`` are slow: tens of seconds per run on 2 cores.
- any of bge-v2-m3, jina-v2-ml, bge-base that is already in the model cache (nothing is
  downloaded; HF_HUB_OFFLINE=1 is forced).

Every figure is printed, never asserted: medians and p95 over --runs runs after one warm-up.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpora" / "npm-docs"
QUERY = "how do I install a package from the registry and keep the lockfile in sync"
SHAPES = {  # layers, hidden, heads, feed-forward
    "minilm": (6, 384, 12, 1536),  # MiniLM-L6: ms-marco-MiniLM-L-6-v2; cheap, for comparing strategies
    "base": (12, 768, 12, 3072),  # XLM-RoBERTa base: bge-reranker-base, jina-reranker-v2-base
    "large": (24, 1024, 16, 4096),  # XLM-RoBERTa large: bge-reranker-v2-m3
}


def corpus_passages(corpus: Path, pairs: int) -> tuple[list[str], int]:
    """Chunks of ``corpus`` as the rerank stage sends them, cycled to ``pairs``; and the distinct count."""
    from grooveseek.app import build_app
    from grooveseek.index.guard import open_for_index
    from grooveseek.index.indexer import Indexer, IndexOptions
    from grooveseek.index.report import Reporter
    from grooveseek.search.rerank import candidate_text
    from grooveseek.store.records import HitRow
    from grooveseek.testing import FakeEmbedder

    work = Path(tempfile.mkdtemp(prefix="rerank-bench-"))
    try:
        shutil.copytree(corpus, work / "kb")
        (work / "groove.toml").write_text('kb_path = "kb"\n', encoding="utf-8")
        app = build_app(str(work / "groove.toml"), None, with_embedder=False)
        store = open_for_index(app.db, force=False)
        reporter = Reporter(quiet=True, sink=lambda m: None)
        Indexer(app.kb, store, app.config, app.registry, FakeEmbedder(16), reporter).run(
            IndexOptions(force=True)
        )
        rows = list(store.conn.execute("select context, content from chunks order by id"))
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    texts = [
        candidate_text(HitRow(0, "", None, None, None, None, (), body, ctx, 0, 0, None)) for ctx, body in rows
    ]
    return [texts[i % len(texts)] for i in range(pairs)], len(texts)


def pair_lengths(model_dir: Path, query: str, texts: Sequence[str]) -> np.ndarray:
    """Untruncated token counts of each (query, passage) pair with the model's tokenizer."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return np.array([len(e.ids) for e in tok.encode_batch([(query, t) for t in texts])])


def padded_work(lengths: np.ndarray, cap: int, batch: int, *, sort: bool) -> tuple[int, float]:
    """(tokens fed to the model, attention cells in millions) for a batching strategy."""
    cut = np.minimum(lengths, cap)
    order = np.argsort(-cut, kind="stable") if sort else np.arange(len(cut))
    n_batches = math.ceil(len(cut) / batch)
    groups = (
        np.array_split(order, n_batches)
        if sort
        else [order[i : i + batch] for i in range(0, len(cut), batch)]
    )
    tokens = sum(len(g) * int(cut[g].max()) for g in groups)
    cells = sum(len(g) * int(cut[g].max()) ** 2 for g in groups) / 1e6
    return tokens, cells


def timed(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, tuple[float, float]]:
    """Median and p95 seconds of each function over ``runs`` runs, after one warm-up run each.

    The functions take turns within every run (rotating who goes first), so load from other
    processes on a shared machine falls on all of them alike instead of skewing one.
    """
    for fn in fns.values():
        fn()
    seconds: dict[str, list[float]] = {label: [] for label in fns}
    labels = list(fns)
    for i in range(runs):
        for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
            start = time.perf_counter()
            fns[label]()
            seconds[label].append(time.perf_counter() - start)
    return {
        label: (statistics.median(s), float(np.percentile(s, 95, method="higher")))
        for label, s in seconds.items()
    }


def build_shaped_model(
    target: Path, layers: int, hidden: int, heads: int, ffn: int, max_pos: int = 520
) -> None:
    """A BERT-style cross-encoder with random weights: embeddings, ``layers`` encoder blocks, CLS head."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits: list = []
    nodes: list = []

    def weight(name: str, *shape: int, scale: float = 0.02) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape, dtype=np.float32) * scale), name))
        return name

    def const(name: str, value: object, dtype: object = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def op(kind: str, inputs: list[str], out: str, **attrs_: object) -> str:
        nodes.append(helper.make_node(kind, inputs, [out], **attrs_))
        return out

    def dense(x: str, name: str, n_in: int, n_out: int) -> str:
        return op(
            "Add",
            [op("MatMul", [x, weight(f"{name}.w", n_in, n_out)], f"{name}.mm"), weight(f"{name}.b", n_out)],
            f"{name}.out",
        )

    def norm(x: str, name: str) -> str:
        gamma, beta = const(f"{name}.g", np.ones(hidden)), const(f"{name}.b", np.zeros(hidden))
        return op("LayerNormalization", [x, gamma, beta], f"{name}.out", axis=-1, epsilon=1e-5)

    dh = hidden // heads
    const("heads_shape", [0, 0, heads, dh], np.int64)
    const("hidden_shape", [0, 0, hidden], np.int64)
    const("one", 1.0)
    const("neg", -1e4)
    const("scale", 1 / math.sqrt(dh))
    const("half", 0.5)
    const("rsqrt2", 1 / math.sqrt(2))
    const("zero_i", 0, np.int64)
    const("one_i", 1, np.int64)
    const("axes12", [1, 2], np.int64)
    seq = op("Gather", [op("Shape", ["input_ids"], "shape"), "one_i"], "seq_len", axis=0)
    positions = op("Range", ["zero_i", seq, "one_i"], "positions")
    x = op(
        "Add",
        [
            op("Gather", [weight("word", 30522, hidden), "input_ids"], "we"),
            op("Gather", [weight("type", 2, hidden), "token_type_ids"], "te"),
        ],
        "wt",
    )
    x = norm(op("Add", [x, op("Gather", [weight("pos", max_pos, hidden), positions], "pe")], "emb"), "emb_ln")
    mask = op(
        "Unsqueeze", [op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT), "axes12"], "mask4"
    )
    bias = op("Mul", [op("Sub", ["one", mask], "inv_mask"), "neg"], "mask_bias")
    for i in range(layers):
        x = _encoder_block(op, dense, norm, x, f"l{i}", hidden, ffn, bias)
    cls = op("Gather", [x, "zero_i"], "cls", axis=1)
    pooled = op("Tanh", [dense(cls, "pool", hidden, hidden)], "pooled")
    op("Identity", [dense(pooled, "cls_head", hidden, 1)], "logits")
    names = ("input_ids", "attention_mask", "token_type_ids")
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in names]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])]
    graph = helper.make_graph(nodes, "random_cross_encoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    # External data: the large shape is 1.3 GB, near protobuf's 2 GB ceiling.
    onnx.save(model, str(target / "model.onnx"), save_as_external_data=True, location="model.onnx_data")


def _encoder_block(op, dense, norm, x: str, p: str, hidden: int, ffn: int, bias: str) -> str:
    """Self-attention + feed-forward, post-norm, as in BERT and XLM-RoBERTa."""

    def split(t: str, perm: list[int]) -> str:
        return op("Transpose", [op("Reshape", [t, "heads_shape"], f"{t}.r")], f"{t}.t", perm=perm)

    q = split(dense(x, f"{p}.q", hidden, hidden), [0, 2, 1, 3])
    k = split(dense(x, f"{p}.k", hidden, hidden), [0, 2, 3, 1])
    v = split(dense(x, f"{p}.v", hidden, hidden), [0, 2, 1, 3])
    scores = op("Add", [op("Mul", [op("MatMul", [q, k], f"{p}.qk"), "scale"], f"{p}.qks"), bias], f"{p}.s")
    ctx = op("MatMul", [op("Softmax", [scores], f"{p}.p", axis=-1), v], f"{p}.ctx")
    ctx = op(
        "Reshape", [op("Transpose", [ctx], f"{p}.ctx_t", perm=[0, 2, 1, 3]), "hidden_shape"], f"{p}.ctx_r"
    )
    x = norm(op("Add", [x, dense(ctx, f"{p}.o", hidden, hidden)], f"{p}.res1"), f"{p}.ln1")
    h = dense(x, f"{p}.up", hidden, ffn)
    erf = op("Erf", [op("Mul", [h, "rsqrt2"], f"{p}.hs")], f"{p}.erf")
    gelu = op("Mul", [op("Mul", [h, op("Add", [erf, "one"], f"{p}.erf1")], f"{p}.hg"), "half"], f"{p}.gelu")
    return norm(op("Add", [x, dense(gelu, f"{p}.down", ffn, hidden)], f"{p}.res2"), f"{p}.ln2")


def fastembed_loop(model_dir: Path, spec, texts: list[str], batch: int) -> Callable[[], object]:
    """fastembed's own ``rerank`` on the same files: input order, each batch padded to its longest."""
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    encoder = TextCrossEncoder(spec.fastembed_name, specific_model_path=str(model_dir))
    return lambda: list(encoder.rerank(QUERY, texts, batch_size=batch))


def bench_local(label: str, spec, model_dir: Path, texts: list[str], args) -> None:
    from groove_fastembed import FastEmbedReranker

    ours = FastEmbedReranker(
        spec,
        str(model_dir.parent / "cache"),
        env={},
        model_dir=model_dir,
        batch_size=args.batch_size,
        max_length=args.max_length,
    )
    ours.load()
    runtime = ours._get_runtime()
    pairs = [(QUERY, t) for t in texts]
    mine = f"grooveseek (budget {args.max_length}, sorted, batch {args.batch_size})"
    theirs = f"fastembed rerank (limit 512, input order, batch {args.fastembed_batch})"
    results = timed(
        {
            mine: lambda: ours.score(QUERY, texts),
            theirs: fastembed_loop(model_dir, spec, texts, args.fastembed_batch),
        },
        args.runs,
    )
    row(label, mine, *results[mine])
    row(
        label,
        "  of which: tokenising all pairs",
        *timed({"t": lambda: runtime.tokenizer.encode_batch(pairs)}, args.runs)["t"],
    )
    row(label, theirs, *results[theirs])
    print(f"{'':<12} (load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def bench_cached(texts: list[str], args) -> None:
    from groove_fastembed import FastEmbedReranker
    from groove_fastembed.models import RERANKERS

    from grooveseek.errors import GrooveError

    for rid, spec in RERANKERS.items():
        reranker = FastEmbedReranker(
            spec,
            batch_size=args.batch_size,
            max_length=args.max_length,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        try:
            reranker.load()
        except GrooveError:
            print(f"{rid:<12} not in the model cache ({reranker.cache_dir}): skipped, nothing is downloaded")
            continue
        mine = f"grooveseek (budget {args.max_length}, sorted, batch {args.batch_size})"
        row(rid, mine, *timed({mine: lambda r=reranker: r.score(QUERY, texts)}, args.runs)[mine])


def row(model: str, strategy: str, median: float, p95: float) -> None:
    print(f"{model:<12} {strategy:<58} {median * 1000:>10.1f} {p95 * 1000:>10.1f}", flush=True)


def print_passages(lengths: np.ndarray, distinct: int, args) -> None:
    print(f"query: {QUERY!r}")
    print(
        f"passages: {len(lengths)} pairs from {distinct} distinct npm-docs chunks (cycled), context prefixed"
    )
    q = np.percentile(lengths, [50, 90])
    print(
        f"pair tokens before truncation (MiniLM WordPiece): min {lengths.min()}, median {q[0]:.0f}, "
        f"p90 {q[1]:.0f}, max {lengths.max()}; {int((lengths > args.max_length).sum())} over the "
        f"{args.max_length}-token budget"
    )
    print("sorted:", " ".join(str(n) for n in sorted(lengths)))
    print("\nwork per query (tokens fed to the model / attention cells in millions, deterministic):")
    for name, cap, batch, sort in (
        (
            f"grooveseek: budget {args.max_length}, sorted, batch {args.batch_size}",
            args.max_length,
            args.batch_size,
            True,
        ),
        (f"budget 512, input order, one batch of {args.fastembed_batch}", 512, args.fastembed_batch, False),
        (
            f"model limit 8192 (bge-v2-m3's tokenizer), one batch of {args.fastembed_batch}",
            8192,
            args.fastembed_batch,
            False,
        ),
    ):
        tokens, cells = padded_work(lengths, cap, batch, sort=sort)
        print(f"  {name:<66} {tokens:>8} tokens {cells:>10.1f} M cells")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20, help="timed runs per row (after one warm-up; >= 5)")
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--fastembed-batch", type=int, default=64, help="fastembed's default batch size")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append", default=[])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    args.runs = max(5, args.runs)
    from groove_fastembed.testing import TINY_SPEC, build_tiny_cross_encoder

    work = Path(tempfile.mkdtemp(prefix="rerank-models-"))
    try:
        tiny_dir = build_tiny_cross_encoder(work / "tiny" / "model")
        texts, distinct = corpus_passages(args.corpus, args.pairs)
        print_passages(pair_lengths(tiny_dir, QUERY, texts), distinct, args)
        print(f"\n{'model':<12} {'strategy':<58} {'median ms':>10} {'p95 ms':>10}   ({args.runs} runs)")
        print(
            "NOTE: 'tiny' is a random model without attention: it measures GrooveSeek's pipeline overhead, "
            "not a real reranker."
        )
        bench_local("tiny", TINY_SPEC, tiny_dir, texts, args)
        for shape in args.shape:
            shaped_dir = build_tiny_cross_encoder(work / shape / "model")
            build_shaped_model(shaped_dir, *SHAPES[shape])
            spec = attrs.evolve(TINY_SPEC, id=f"random-{shape}", fastembed_name=f"grooveseek/random-{shape}")
            print(
                f"NOTE: 'random-{shape}' has random weights in the shape of a real reranker: its time "
                "estimates a real model's, its scores mean nothing."
            )
            bench_local(f"random-{shape}", spec, shaped_dir, texts, args)
        bench_cached(texts, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
