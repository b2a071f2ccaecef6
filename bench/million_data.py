"""The synthetic knowledge base of bench/million.py: documents, chunks, vectors and queries, all a
pure function of a document's number and the seed, so any level can be (re)built on either backend
and a query's exact neighbours recomputed.

Text. Words come from the bench corpora (/work/shared/bench/corpora): English words of npm-docs
and js-primer drawn Zipf-like, and Japanese runs (2 to 12 kana/kanji) of js-primer. Every document
belongs to one of ``TOPICS`` topics; half of a chunk's English words come from its topic's own
slice of the vocabulary, so a topic's queries match its chunks more than others'. Every tenth
document is Japanese (runs of js-primer's Japanese with a few English words, as the book mixes them).

Vectors (the default model's dimension, minilm 384 + USE 512 = 896). Real embeddings have a low
intrinsic dimension, so uniform random vectors (every distance about equal) are the wrong test
for a graph index. Here a chunk is a point of a ``LATENT``-dimensional space, topic centroid +
document offset + chunk noise, mapped into 896 dimensions by one fixed random projection, plus a
little isotropic noise, then set to unit length. A query is its topic's centroid plus an offset of
the size of a document's, so its nearest chunks are a few documents of that topic: recall@10
against the exact neighbours then says whether HNSW finds them.

Filters. ``category`` is ``cat0``..``cat9`` (10 % of documents each) and the path starts with
``team00/``..``team99/`` (1 % each), so filtered searches run at both selectivities.
"""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import numpy as np

CORPORA = Path("/work/shared/bench/corpora")
DIM = 896  # minilm-l6-int8 (384) + use-multilingual-v3 (512): the default composite model
LATENT = 48
TOPICS = 64
PER_DOC = 20
WORDS = 40
JA_EVERY = 10  # every tenth document is Japanese


@cache
def english() -> list[str]:
    """English words of npm-docs and js-primer, most frequent first."""
    counts: dict[str, int] = {}
    for corpus in ("npm-docs", "js-primer"):
        for path in sorted((CORPORA / corpus).rglob("*.md")):
            for word in re.findall(r"[a-z][a-z-]{2,}", path.read_text(encoding="utf-8").lower()):
                counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:3000]


@cache
def japanese() -> list[str]:
    """Japanese runs of js-primer (kana and kanji, 2 to 12 characters), most frequent first."""
    counts: dict[str, int] = {}
    for path in sorted((CORPORA / "js-primer").rglob("*.md")):
        for run in re.findall(r"[\u3040-\u30ff\u4e00-\u9fff]{2,12}", path.read_text(encoding="utf-8")):
            counts[run] = counts.get(run, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:4000]


@cache
def _weights(n: int) -> list[float]:
    return [1.0 / (rank + 1) for rank in range(n)]


def topic_words(topic: int) -> list[str]:
    """The topic's own 40 words: a slice of the mid-frequency English vocabulary."""
    words = english()[100:]
    return [words[(topic * 37 + i) % len(words)] for i in range(40)]


def topic_runs(topic: int) -> list[str]:
    runs = japanese()[50:]
    return [runs[(topic * 53 + i) % len(runs)] for i in range(40)]


class Space:
    """The latent geometry: topic centroids and the projection into ``DIM`` dimensions."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.centroids = rng.normal(size=(TOPICS, LATENT)).astype(np.float32)
        self.projection = (rng.normal(size=(LATENT, DIM)) / np.sqrt(LATENT)).astype(np.float32)
        self.seed = seed

    def embed(self, latent: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = latent @ self.projection
        out += rng.normal(scale=0.15, size=out.shape).astype(np.float32)
        out /= np.linalg.norm(out, axis=-1, keepdims=True)
        return out.astype(np.float32)


def doc_topic(doc: int) -> int:
    return (doc * 2654435761) % 2**32 % TOPICS


def document(doc: int, space: Space):
    """Document number ``doc``: its record, chunks and unit vectors (deterministic)."""
    from grooveseek.store.records import DocumentRecord
    from grooveseek.types import Chunk

    topic = doc_topic(doc)
    rng = random.Random(space.seed * 1_000_003 + doc)
    ja = doc % JA_EVERY == JA_EVERY - 1
    texts = [_japanese_text(rng, topic) if ja else _english_text(rng, topic) for _ in range(PER_DOC)]
    chunks = [
        Chunk(i, f"{'節' if ja else 'section'} {i}", 2, f"{t} note {doc}-{i}", len(t) // 4)
        for i, t in enumerate(texts)
    ]
    record = DocumentRecord(
        f"team{doc % 100:02d}/topic{topic:02d}/doc{doc:07d}.md",
        "md",
        f"document {doc}",
        False,
        f"topic{topic:02d}",
        False,
        f"cat{doc % 10}",
        None,
        (),
        None,
        f"hash{doc}",
        sum(len(t) for t in texts),
    )
    return record, chunks, doc_vectors(doc, space)


def doc_vectors(doc: int, space: Space) -> np.ndarray:
    """The unit vectors of document ``doc``'s chunks (its own generator: recomputable alone)."""
    vrng = np.random.default_rng([space.seed, doc])
    offset = vrng.normal(scale=0.6, size=LATENT).astype(np.float32)
    noise = vrng.normal(scale=0.35, size=(PER_DOC, LATENT)).astype(np.float32)
    return space.embed(space.centroids[doc_topic(doc)] + offset + noise, vrng)


def _english_text(rng: random.Random, topic: int) -> str:
    words = english()
    own = topic_words(topic)
    half = WORDS // 2
    picked = rng.choices(words, _weights(len(words)), k=WORDS - half) + rng.choices(own, k=half)
    rng.shuffle(picked)
    return " ".join(picked)


def _japanese_text(rng: random.Random, topic: int) -> str:
    runs = japanese()
    picked = rng.choices(runs, _weights(len(runs)), k=8) + rng.choices(topic_runs(topic), k=8)
    rng.shuffle(picked)
    picked[::5] = [f" {w} " for w in rng.choices(english()[:200], k=len(picked[::5]))]
    return "、".join(picked) + "。"


def queries(count: int, space: Space) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
    """``count`` English and ``count`` Japanese queries with their vectors. An English query is
    two of a topic's words and one mid-frequency word; a Japanese query two of the topic's runs.
    Each vector is the topic's centroid plus a document-sized offset (see the module docstring)."""
    rng = random.Random(space.seed + 99)
    vrng = np.random.default_rng(space.seed + 99)
    english_q, japanese_q, vectors = [], [], {}
    for i in range(count):
        topic = rng.randrange(TOPICS)
        en = " ".join([*rng.sample(topic_words(topic), 2), rng.choice(english()[30:400])])
        jq = " ".join(rng.sample(topic_runs(topic), 2))
        for text, bucket in ((en, english_q), (jq, japanese_q)):
            text = f"{text} {i}" if text in vectors else text
            latent = space.centroids[topic] + vrng.normal(scale=0.6, size=LATENT).astype(np.float32)
            vectors[text] = space.embed(latent[None, :], vrng)[0]
            bucket.append(text)
    return english_q, japanese_q, vectors
