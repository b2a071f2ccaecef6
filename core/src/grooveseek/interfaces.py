"""The plugin interfaces: what a parser, chunker, embedder, reranker or grammar object must provide.

These are the only ABCs in GrooveSeek (house style). Plugins subclass them and hand instances to
the ``register`` callback of a ``register_*`` hook (see ``hookspecs``). Every object carries an
``id`` equal to its entry-point name and an ``api_version`` equal to ``PLUGIN_API_VERSION``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeAlias

import attrs

if TYPE_CHECKING:  # annotations only: importing the interfaces must not import numpy (issue 16)
    import numpy as np
    import numpy.typing as npt

from .types import Chunk, ChunkSettings, ParseContext, ParsedDocument

PLUGIN_API_VERSION = 1

#: What an embedder returns: float32 rows (or one row for a query), unit length.
FloatArray: TypeAlias = "npt.NDArray[np.float32]"


class Parser(ABC):
    """Turns one file's bytes into a ``ParsedDocument`` (SPEC R3.5).

    ``parse`` raises ``grooveseek.errors.ParseError`` (or anything else: the indexer catches it and
    skips the file, R3.7); it never returns None.
    """

    id: ClassVar[str]
    api_version: ClassVar[int] = PLUGIN_API_VERSION
    kind: ClassVar[str] = "text"  # "text" | "binary": picks the size cap (R2.26)
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "sections"
    policy_version: ClassVar[str] = "1"
    #: A byte limit the parser itself imposes whatever ``[index]`` says (the code parser's 1 MiB,
    #: R2.27), or None. A larger file is skipped with ``size_limit_message`` before it is read.
    size_limit: ClassVar[int | None] = None

    @abstractmethod
    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse ``data`` (the whole file) stored at ``rel_path``."""

    def size_limit_message(self, size: int) -> str:
        """The skip reason for a file over ``size_limit``; it must name the parser's own limit."""
        return f"file too large ({size} bytes > {self.size_limit} byte limit of the {self.id} parser)"

    def parse_for_read(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse under the read-side limits for ``get_document`` (R2.31); same as ``parse`` by default."""
        return self.parse(data, rel_path, ctx)


class Chunker(ABC):
    """Turns a parsed document into ordered chunks (SPEC R3.3)."""

    id: ClassVar[str]
    api_version: ClassVar[int] = PLUGIN_API_VERSION

    @abstractmethod
    def chunk(self, doc: ParsedDocument, settings: ChunkSettings) -> list[Chunk]:
        """Return the chunks in ``chunk_index`` order; ``quality_score`` is filled in by the core."""


class Embedder(ABC):
    """Produces unit-length float32 vectors (SPEC R5.1).

    ``id``, ``identity`` and ``dimension`` must be known without loading the model, because the
    model guard (R4.28) compares them before anything is loaded. Loading happens lazily on the
    first ``embed_*`` call (or ``load()``).
    """

    id: str
    identity: str
    dimension: int
    batch_size: int = 32
    api_version: int = PLUGIN_API_VERSION
    #: The most tokens the model reads from one input; text past it is invisible to the vector leg.
    #: Chunkers size chunks to it and the embedder cuts longer input before tokenizing. Known without
    #: loading the model. 512 (BERT-style models) unless the plugin says otherwise.
    max_input_tokens: int = 512
    #: The languages the model embeds well: ISO 639-1 codes such as ``("en",)``, or
    #: ``("multilingual",)`` for a model that covers CJK too. Fusion weighs the vector leg by it.
    languages: tuple[str, ...] = ("en",)

    def validate(self) -> None:
        """Check settings that need no model: raise ConfigError/ModelError with an actionable message.

        Called by the core before any command opens or creates the index (R1.6), so a setting
        that would only fail at load (a relative cache directory, say) leaves no database behind.
        It must be cheap and must not load, download or import the model. Optional: the default
        accepts everything, so plugins written before this hook keep working unchanged.
        """

    def available_offline(self) -> bool:
        """True when ``load()`` needs no download: the model is packaged, already cached, or remote.

        The model guard offers "rebuild the index with this model" only when this is True, so a
        user is never told to throw away a working index for a model they do not have. Cheap: it
        must not load or download anything. Optional: the default says True.
        """
        return True

    def load(self) -> None:
        """Load the model now (so start-up pays the cost and reports failures early)."""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model reads from each text, special tokens ([CLS], [SEP]) excluded.

        Chunkers size pieces with it (``ChunkSettings.count_tokens``). Optional: the default is
        ``grooveseek.chunking.estimate_tokens`` (one token per 4 ASCII characters plus one per other
        character), for embedders without a local tokenizer such as remote APIs. A plugin that has
        its tokenizer overrides it; it may load the tokenizer, but must not download anything.
        """
        from .chunking import estimate_tokens

        return estimate_tokens(texts)

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Return an array of shape ``(len(texts), dimension)``, one row per text, in order."""

    @abstractmethod
    def embed_query(self, text: str) -> FloatArray:
        """Return one vector of shape ``(dimension,)`` for a search query."""

    def embed_query_over(self, text: str, english_share: float | None) -> FloatArray:
        """``embed_query`` for a search over an index whose share of chunks that are not CJK text is
        ``english_share`` (None: not recorded). The search passes the index's recorded language mix
        here rather than setting it on the shared model, so concurrent searches over different
        indexes never see each other's. Optional: a model whose query vector does not depend on the
        notes' languages (every single model) keeps this default; the composite routes by it.
        """
        return self.embed_query(text)

    def probe_before_reset(self) -> None:
        """Check a remote endpoint before ``--force`` resets the index (R5.18); local models do nothing."""

    def parallel_factory(self) -> Callable[[], Embedder] | None:
        """A picklable zero-argument callable that builds this embedder in a worker process, or None.

        An index run with ``[index].embed_workers`` above 1 calls it once and hands the result to
        that many spawned worker processes; each builds one embedder with it, loads it, and embeds
        batches of document texts. The built embedder must give the same vectors as this one and
        use one core (one ONNX or BLAS thread): the workers are the parallelism. Return a
        module-level function or class, or a ``functools.partial`` of one, so it pickles. Optional:
        the default None keeps embedding in the indexing process (right for a remote endpoint,
        which is not CPU-bound here). Queries never go through workers.
        """
        return None


class Reranker(ABC):
    """Scores (query, passage) pairs with a cross-encoder (SPEC R5.21)."""

    id: str
    api_version: int = PLUGIN_API_VERSION
    licence_note: str | None = None

    def validate(self) -> None:
        """Check settings that need no model: raise ConfigError/ModelError with an actionable message.

        The same optional pre-flight check as ``Embedder.validate``: run before the index is
        opened, never loads the model, accepts everything by default.
        """

    def load(self) -> None:
        """Load the model now."""

    @abstractmethod
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One raw score per text, in input order."""


@attrs.frozen
class Grammar:
    """A tree-sitter language for the built-in code parser (SPEC R3.8)."""

    id: str
    language_name: str
    language: Callable[[], object]
    tags_query: str
    api_version: int = PLUGIN_API_VERSION
