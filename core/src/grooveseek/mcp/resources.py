"""The ``kb://`` resources: topic groups listed, documents behind a template (SPEC R7.27-R7.34).

One predicate (``ServableRules.servable``) decides what is offered: it fills the listing, gives search
hits their ``uri`` and gates ``resources/read``, so the three never disagree (R7.27). Reads are
narrower than ``get_document``: only an indexed, servable document, never one the KB's current
``.grooveignore`` excludes, and then through the same checks (``docread.read_document``, R7.32).
Every refusal is the same "resource not found", so a client cannot tell whether a file exists there
(R7.33).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path

import attrs

from ..app import App
from ..names import is_addressable
from ..registry import Registry
from ..service import KBService
from ..store.serving import ServingRow
from ..walker import GROOVEIGNORE_NAME, IgnoreRules, load_grooveignore
from .docread import BINARY_READ_CAP, DECOMPRESSION_BUDGET, TEXT_READ_CAP, DocumentRefused, read_document

log = logging.getLogger("grooveseek.mcp")

DOC_SCHEME = "kb://doc/"
TOPIC_SCHEME = "kb://topic/"
# R7.29's spelling. A client expanding it by RFC 6570 simple expansion sends "/" as "%2F"; reads
# percent-decode before any check (R7.30), so that and a literal "/" name the same document.
DOC_TEMPLATE = "kb://doc/{path}"
TOPIC_MIME = "text/markdown"
TRUNCATION_NOTICE = (
    "\n\n---\n\n*[groove] Truncated: the extracted text exceeded 1 MiB. Search covers the indexed text; "
    "open the original file for the rest.*"
)

# R7.30: every UTF-8 byte except the unreserved characters and "/" is percent-encoded.
_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


class ResourceNotFound(Exception):
    """Any refusal of ``resources/read``; the server answers MCP "resource not found" (-32002)."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"Resource not found: {uri}")
        self.uri = uri
        self.reason = reason  # logged at debug level only: it may say what exists on disk


@attrs.frozen
class ResourceText:
    """A read resource: its text and media type."""

    uri: str
    text: str
    mime_type: str


@attrs.frozen
class TopicGroup:
    """One listed resource: a topic-group prefix and how many servable documents it holds."""

    prefix: str
    documents: int

    @property
    def uri(self) -> str:
        return topic_uri(self.prefix)


def encode_path(path: str) -> str:
    """R7.30: percent-encode every UTF-8 byte except ``A-Z a-z 0-9 - . _ ~`` and ``/``."""
    raw = path.encode("utf-8", errors="surrogatepass")
    return "".join(chr(b) if b in _KEEP else f"%{b:02X}" for b in raw)


def doc_uri(path: str) -> str:
    return DOC_SCHEME + encode_path(path)


def topic_uri(prefix: str) -> str:
    return TOPIC_SCHEME + encode_path(prefix)


def decode_uri_path(encoded: str) -> str | None:
    """Percent-decode the part after the scheme prefix; None when malformed (R7.30, R7.33).

    Decoding happens before any check, so ``%2e%2e%2f`` is seen as ``../``. A ``%`` not followed by
    two hex digits, or bytes that are not UTF-8, make the URI malformed.
    """
    raw = encoded.encode("utf-8", errors="surrogatepass")
    if raw.count(b"%") != len(_PERCENT.findall(raw)):
        return None
    decoded = _PERCENT.sub(lambda m: bytes([int(m.group(1), 16)]), raw)
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def group_prefix(path: str) -> str:
    """R7.28: the first one or two path segments by the category/topic derivation; "" at the root."""
    segments = path.split("/")
    if len(segments) == 1:
        return ""
    return segments[0] if len(segments) == 2 else f"{segments[0]}/{segments[1]}"


_FileKey = tuple[int, int, int]  # (st_mtime_ns, st_size, st_ino)


class _IgnoreCache:
    """The KB's current ``.grooveignore`` rules, re-read only when the file's stat key changes.

    The index keeps a newly ignored document until the next index run, so the servable predicate
    asks the file itself (R7.32); every listing, search and read builds the predicate, and the key
    keeps that to one ``lstat`` instead of a read and a parse.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[_FileKey, IgnoreRules | None]] = {}

    def rules(self, kb: Path) -> IgnoreRules | None:
        try:
            st = os.lstat(kb / GROOVEIGNORE_NAME)
        except OSError:  # no file, no rules (R2.12)
            with self._lock:
                self._entries.pop(kb, None)
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            cached = self._entries.get(kb)
        if cached is not None and cached[0] == key:
            return cached[1]
        # Keyed by the stat taken before the read: a write racing the read changes the key, so the
        # next call reads again rather than keeping stale rules.
        rules = load_grooveignore(kb, lambda message: log.info("resources: %s", message))
        with self._lock:
            self._entries[kb] = (key, rules)
        return rules


_IGNORE_CACHE = _IgnoreCache()


def _ignored(rules: IgnoreRules, rel: str) -> bool:
    # As in the walk: an ignored directory hides everything beneath it (R2.16), so every ancestor
    # is asked as a directory before the file itself.
    segments = rel.split("/")
    ancestors = ("/".join(segments[: i + 1]) for i in range(len(segments) - 1))
    return any(rules.ignores(d, True) for d in ancestors) or rules.ignores(rel, False)


@attrs.frozen
class ServableRules:
    """R7.27: the one predicate for "this document is offered"."""

    registry: Registry
    binary_offered: bool
    ignore: IgnoreRules | None = None

    @classmethod
    def for_app(cls, app: App) -> ServableRules:
        # Above the built-in budget, the recorded raw size cannot tell which binary documents a read
        # (which always uses the built-in budget) would accept, so none is offered.
        binary_offered = app.config.index.max_decompressed_size <= DECOMPRESSION_BUDGET
        return cls(app.registry, binary_offered, _IGNORE_CACHE.rules(app.kb))

    def servable(self, row: ServingRow) -> bool:
        if not is_addressable(row.path):
            return False
        if self.ignore is not None and _ignored(self.ignore, row.path):
            return False  # R7.32: ignored since the last index run; get_document still reads it
        parser = self.registry.parser_for(row.path)
        if parser is None:
            return False
        if parser.kind == "binary":
            if not self.binary_offered:
                return False
            cap = BINARY_READ_CAP  # extracted text over 1 MiB is cut on read, not refused
        else:
            cap = TEXT_READ_CAP
        return row.size_bytes is None or row.size_bytes <= cap


def list_topic_groups(service: KBService) -> list[TopicGroup]:
    """R7.28: one group per prefix holding at least one servable document, sorted by prefix."""
    rules = ServableRules.for_app(service.app)
    with service.reader() as store:
        rows = store.serving_rows()
    counts: dict[str, int] = {}
    for row in rows:
        if rules.servable(row):
            prefix = group_prefix(row.path)
            counts[prefix] = counts.get(prefix, 0) + 1
    return [TopicGroup(prefix, count) for prefix, count in sorted(counts.items())]


def _one_line(text: str) -> str:
    # A title or path could hold newlines or brackets; keep each listing entry one valid Markdown link.
    flat = " ".join(text.split())
    return flat.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _read_topic(service: KBService, uri: str, prefix: str) -> ResourceText:
    segments = prefix.split("/") if prefix else []
    if len(segments) > 2 or (prefix and not is_addressable(prefix)):
        raise ResourceNotFound(uri, "not a topic-group prefix")
    rules = ServableRules.for_app(service.app)
    with service.reader() as store:
        rows = store.serving_rows_in_category(segments[0] if segments else None)
    members = [row for row in rows if group_prefix(row.path) == prefix and rules.servable(row)]
    if not members:
        raise ResourceNotFound(uri, "no servable document in this group")
    lines = [f"# {_one_line(prefix) if prefix else '(root)'}", ""]
    lines += [f"- [{_one_line(row.title or row.path)}]({doc_uri(row.path)})" for row in members]
    return ResourceText(uri, "\n".join(lines) + "\n", TOPIC_MIME)


def _read_doc(service: KBService, uri: str, rel: str) -> ResourceText:
    if not is_addressable(rel):  # lexical check before the index or the disk is consulted
        raise ResourceNotFound(uri, "not an addressable path")
    app = service.app
    with service.reader() as store:
        row = store.serving_row(rel)
    if row is None or not ServableRules.for_app(app).servable(row):
        raise ResourceNotFound(uri, "not indexed or not offered")
    try:
        read = read_document(app.kb, app.registry, rel, config=app.config)
    except DocumentRefused as exc:
        raise ResourceNotFound(uri, str(exc)) from None
    text = read.text + TRUNCATION_NOTICE if read.truncated else read.text
    return ResourceText(uri, text, read.parser.media_type)


def read_resource(service: KBService, uri: str) -> ResourceText:
    """R7.31-R7.33: read ``kb://topic/<prefix>`` or ``kb://doc/<path>``.

    Raises:
        ResourceNotFound: for anything malformed, not offered, or refused by a check.
    """
    for scheme, reader in ((DOC_SCHEME, _read_doc), (TOPIC_SCHEME, _read_topic)):
        if uri.startswith(scheme):
            decoded = decode_uri_path(uri[len(scheme) :])
            if decoded is None:
                raise ResourceNotFound(uri, "malformed percent-encoding")
            return reader(service, uri, decoded)
    raise ResourceNotFound(uri, "not a kb://doc/ or kb://topic/ URI")
