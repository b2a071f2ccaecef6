"""An index that carries vectors from several embedders: the composite embedder (issues 11, 26).

A model id such as ``minilm-l6-int8+use-multilingual-v3`` names a *composite*: each part is an
installed embedder, loaded through its own entry point. Each chunk is embedded once by every part
that reads its language, and only by those (``document_parts``, issue 26): a chunk more than a fifth
of whose letters are kanji or kana by the parts that read CJK (USE), any other chunk by every part
(minilm and USE). So a Japanese chunk
costs one USE call and no minilm call, an English chunk both, and every chunk has the multilingual
part's vector, which is what cross-lingual queries need.

The stored row is every part's unit vector side by side, each scaled by ``1/sqrt(m)`` for ``m``
parts, whether or not a chunk has every part, so a part's slot has the same scale on every row and
its inner product with a query ranks all rows alike. A part that did not embed a chunk gets, in its
slot, the first embedding part's vector mapped into that slot by a fixed random orthonormal
projection (``filler``): the row stays unit length (the L2 scan, sqlite-vec and the connection graph
need that), the filler is near-orthogonal to any query of that part (its cosine with a real query
vector is about 0 +- 1/sqrt(dim)), and two chunks filled the same way keep their similarity in that
slot, so the graph's chunk-to-chunk similarity stays the mean of the parts' cosines.

A query is embedded only by the parts that read it (``query_parts``), in their own slots scaled by
``1/sqrt(k)`` for ``k`` chosen parts, with the other slots zero; its inner product with a row is the
mean of the chosen parts' cosines, an absent part counting about 0. A mostly-CJK query goes to the
CJK parts, which embedded every chunk. Any other query goes to the specialists (minilm), and also
to USE when minilm embedded less than half of the index: an English query over mostly-Japanese
notes must reach the Japanese chunks, which minilm never read. The index records its language mix
at index time (``langmix.language_mix_meta``); the search's query-vector provider, bound to the opened
index (``search/queryvectors.py``), passes it to ``embed_query_over``: the shared model holds no
per-index state.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from .cjk import cjk_share, covers_cjk, mostly_cjk
from .errors import ModelError
from .interfaces import Embedder, FloatArray

__all__ = [
    "SEPARATOR",
    "CompositeEmbedder",
    "component_ids",
    "document_parts",
    "filler",
    "query_parts",
]

SEPARATOR = "+"


def component_ids(model_id: str) -> tuple[str, ...]:
    """The embedder ids a model id names: one for a plain id, each part for a composite."""
    return tuple(model_id.split(SEPARATOR)) if SEPARATOR in model_id else (model_id,)


#: A chunk more than this share of whose letters are kanji or kana is Japanese (or Chinese, Korean)
#: for embedding: only the parts that read CJK embed it. Lower than a query's "mostly CJK" (one
#: half, D-FUSE.1) on purpose: Japanese prose around code (js-primer: 36 % of chunks are under one
#: half, 12 % under one fifth) is read by USE, which reads both scripts, while minilm would read
#: only the Latin part, at eight times USE's cost per chunk. Measured on js-primer (docs/models.md):
#: at 0.5, hybrid .771 and cross-lingual .545; at 0.2, .774 and .622, with a third of the minilm work.
DOCUMENT_CJK_SHARE = 0.2


def reads_as_cjk(text: str) -> bool:
    """Whether a chunk counts as CJK text for embedding (``DOCUMENT_CJK_SHARE``)."""
    return cjk_share(text) > DOCUMENT_CJK_SHARE


def document_parts(languages: Sequence[Sequence[str]], text: str) -> tuple[int, ...]:
    """Which parts embed a chunk's ``text``: every part that reads its language (issue 26).

    A CJK text (``reads_as_cjk``) is read by the parts whose languages cover CJK; any other text by
    every part. When no part reads CJK, every part embeds every text (as before issue 26).
    """
    everyone = tuple(range(len(languages)))
    if not reads_as_cjk(text):
        return everyone
    chosen = tuple(i for i, langs in enumerate(languages) if covers_cjk(langs))
    return chosen or everyone


def query_parts(
    languages: Sequence[Sequence[str]], query: str, english_share: float | None = None
) -> tuple[int, ...]:
    """Which parts embed ``query``, by the languages each part declares and the index's mix.

    A mostly-CJK query goes to the parts that read CJK, which embedded every chunk. Any other query
    goes to the specialists, the parts that name a language rather than only ``multilingual`` (on
    its own language a specialist ranks better than a generalist: npm-docs, vector leg, minilm .508
    against USE .414 on the same chunks), and also to the parts that read CJK when the specialists
    embedded less than half of the index (``english_share`` < 0.5, the share of chunks that are not
    CJK text; None when the index has not recorded it). An English query over mostly-Japanese
    notes is then ranked by the model that read them as well as by the one that reads its words
    (identifiers such as ``Array.prototype.flatMap``, which USE ranks poorly). When no part
    qualifies, every part embeds the query.
    """
    cjk_parts = [i for i, langs in enumerate(languages) if covers_cjk(langs)]
    specialists = [i for i, langs in enumerate(languages) if set(langs) - {"multilingual"}]
    if mostly_cjk(query):
        chosen = cjk_parts
    elif english_share is not None and english_share < MAJORITY:
        chosen = sorted(set(specialists) | set(cjk_parts))
    else:
        chosen = specialists
    return tuple(chosen) if chosen else tuple(range(len(languages)))


#: The share of an index's chunks the specialists must have embedded for an English query to go to
#: them: a majority, so a query never ranks most of the notes with a model that did not read them.
MAJORITY = 0.5
#: Seed of the fixed projections that fill an absent part's slot (``filler``). Changing it changes
#: what every new row stores, so it is part of the stored format: never change it.
FILLER_SEED = 26


@functools.cache
def _projection(dim_from: int, dim_to: int) -> FloatArray:
    import numpy as np  # here, not at the top: the loader imports this module for its ids

    rng = np.random.default_rng([FILLER_SEED, dim_from, dim_to])
    return rng.standard_normal((dim_to, dim_from)).astype(np.float32)


def filler(vectors: FloatArray, dim_to: int) -> FloatArray:
    """Unit rows of ``dim_to`` dims for an absent part: ``vectors`` (unit rows of another part)
    through a fixed Gaussian random projection (Johnson-Lindenstrauss: inner products between rows
    are kept up to about 1/sqrt(dim_to)), then normalised. Independent of any real vector of the
    absent part, so a query of that part sees it at a cosine of about 0."""
    import numpy as np

    projected = vectors @ _projection(int(vectors.shape[1]), dim_to).T
    norms = np.linalg.norm(projected, axis=1, keepdims=True)
    return (projected / np.maximum(norms, 1e-12)).astype(np.float32)


class CompositeEmbedder(Embedder):
    """Several embedders as one: each chunk embedded by the parts that read it, routed queries."""

    def __init__(self, parts: Sequence[Embedder]) -> None:
        if len(parts) < 2:
            raise ValueError("a composite embedder needs at least two parts")
        self.parts = tuple(parts)
        self.id = SEPARATOR.join(p.id for p in parts)
        self.identity = SEPARATOR.join(p.identity for p in parts)
        self.dimension = sum(int(p.dimension) for p in parts)
        self.batch_size = min(int(p.batch_size) for p in parts)
        # Chunks are sized for the narrowest window, so every part that embeds a chunk reads all of it.
        self.max_input_tokens = min(int(p.max_input_tokens) for p in parts)
        self.languages = tuple(dict.fromkeys(lang for p in parts for lang in p.languages))
        self._scale = 1.0 / math.sqrt(len(parts))
        self._offsets = [0]
        for part in parts:
            self._offsets.append(self._offsets[-1] + int(part.dimension))

    @property
    def part_languages(self) -> list[tuple[str, ...]]:
        return [tuple(p.languages) for p in self.parts]

    def validate(self) -> None:
        for part in self.parts:
            part.validate()

    def available_offline(self) -> bool:
        return all(part.available_offline() for part in self.parts)

    def load(self) -> None:
        for part in self.parts:
            part.load()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Counted by the part with the narrowest window: its count is the one a chunk must fit.

        Japanese chunks are sized for minilm's window too, although only USE embeds them: sized
        for USE's (512), js-primer fell from .758 to .698 nDCG@10 (hybrid; every leg lost) for 1 %
        less index CPU, since USE costs little per chunk (docs/models.md, issue 26).
        """
        narrowest = min(self.parts, key=lambda p: int(p.max_input_tokens))
        return narrowest.count_tokens(texts)

    def probe_before_reset(self) -> None:
        for part in self.parts:
            part.probe_before_reset()

    def parallel_factory(self) -> Callable[[], Embedder] | None:
        """Worker processes build every part there; a part without a factory keeps the whole
        composite in the indexing process."""
        factories = tuple(f for f in (part.parallel_factory() for part in self.parts) if f is not None)
        if len(factories) < len(self.parts):
            return None
        return functools.partial(_built_composite, factories)

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Each text embedded once by each part that reads it (``document_parts``); an absent
        part's slot holds the first reading part's vector projected into it (``filler``)."""
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        readers = [document_parts(self.part_languages, t) for t in texts]
        for i, part in enumerate(self.parts):
            chosen = [n for n, parts in enumerate(readers) if i in parts]
            if not chosen:
                continue
            rows = np.asarray(part.embed_documents([texts[n] for n in chosen]), dtype=np.float32)
            self._check(part, rows, (len(chosen), int(part.dimension)))
            out[chosen, self._offsets[i] : self._offsets[i + 1]] = rows * self._scale
        for i, part in enumerate(self.parts):
            absent = [n for n, parts in enumerate(readers) if i not in parts]
            if not absent:
                continue
            by_first: dict[int, list[int]] = {}
            for n in absent:
                by_first.setdefault(readers[n][0], []).append(n)
            for first, rows_at in by_first.items():
                lo, hi = self._offsets[first], self._offsets[first + 1]
                source = out[rows_at, lo:hi] / self._scale
                out[rows_at, self._offsets[i] : self._offsets[i + 1]] = (
                    filler(source, int(part.dimension)) * self._scale
                )
        return out

    def embed_query(self, text: str) -> FloatArray:
        """Routed as over an index whose language mix is not recorded (English to the specialists)."""
        return self.embed_query_over(text, None)

    def embed_query_over(self, text: str, english_share: float | None) -> FloatArray:
        """Embedded by the parts ``query_parts`` chooses for ``text`` over an index of that mix."""
        import numpy as np

        out = np.zeros(self.dimension, dtype=np.float32)
        chosen = query_parts(self.part_languages, text, english_share)
        scale = 1.0 / math.sqrt(len(chosen))
        for i in chosen:
            part = self.parts[i]
            vector = np.asarray(part.embed_query(text), dtype=np.float32)
            self._check(part, vector, (int(part.dimension),))
            out[self._offsets[i] : self._offsets[i + 1]] = vector * scale
        return out

    def routed(self, query_vector: FloatArray) -> tuple[int, ...]:
        """The parts a query vector was embedded by: those whose slot is not all zero."""
        return tuple(
            i for i in range(len(self.parts)) if query_vector[self._offsets[i] : self._offsets[i + 1]].any()
        )

    def slot(self, vector: FloatArray, part: int) -> FloatArray:
        """``vector`` with every slot but ``part``'s zeroed, scaled back to unit length."""
        import numpy as np

        out = np.zeros_like(vector)
        lo, hi = self._offsets[part], self._offsets[part + 1]
        piece = vector[lo:hi]
        out[lo:hi] = piece / max(float(np.linalg.norm(piece)), 1e-12)
        return out

    def present(self, row: FloatArray) -> tuple[int, ...]:
        """The parts that embedded a stored row: a part whose slot is another part's vector through
        ``filler`` did not."""
        import numpy as np

        scale = self._scale
        slots = [row[self._offsets[i] : self._offsets[i + 1]] / scale for i in range(len(self.parts))]
        absent = set()
        for i, part in enumerate(self.parts):
            for j, other in enumerate(slots):
                if j != i and j not in absent:
                    projected = filler(other[None, :], int(part.dimension))[0]
                    if np.allclose(slots[i], projected, atol=1e-3):
                        absent.add(i)
                        break
        return tuple(i for i in range(len(self.parts)) if i not in absent)

    def mean_cosine(self, query_vector: FloatArray, row: FloatArray) -> float:
        """The mean cosine, over the parts the query was routed to that embedded ``row``, of the
        query's and the row's vectors in that part (0 when none did)."""
        import numpy as np

        chosen = [i for i in self.routed(query_vector) if i in self.present(row)]
        if not chosen:
            return 0.0
        total = 0.0
        for i in chosen:
            lo, hi = self._offsets[i], self._offsets[i + 1]
            q, r = query_vector[lo:hi], row[lo:hi]
            total += float(np.dot(q, r) / max(float(np.linalg.norm(q) * np.linalg.norm(r)), 1e-12))
        return total / len(chosen)

    def _check(self, part: Embedder, array: FloatArray, shape: tuple[int, ...]) -> None:
        if array.shape != shape:
            raise ModelError(
                f"embedding model {part.id!r} (part of {self.id!r}) returned an array of shape "
                f"{array.shape}, expected {shape}; this is a bug in the plugin that provides it"
            )


def _built_composite(factories: tuple[Callable[[], Embedder], ...]) -> CompositeEmbedder:
    return CompositeEmbedder([factory() for factory in factories])
