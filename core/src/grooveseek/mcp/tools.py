"""The six MCP tools as plain functions over a ``KBService`` (SPEC R7.6-R7.26).

Each function takes already type-checked keyword arguments (``schemas.ToolSpec.check_arguments``)
and returns the JSON value the tool answers with. Expected failures never raise: they come back
in-band as ``{"error": "<message>"}`` with the SPEC's wording (R7.3), so the server layer only
serialises. Tool bodies block (SQLite, the model, the disk); the server runs them in worker threads.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ..errors import GrooveError, IndexMissing, ModelError, RerankError, SearchError
from ..names import is_addressable
from ..search.filters import quality_threshold, validate_filters
from ..search.request import resolve_request
from ..search.snippet import compact_hit
from ..service import KBService, RebuildRunning
from ..store.interface import IndexStore
from ..store.serving import ServingRow
from ..text import category_topic, effective_tags, filename_title
from ..types import SearchFilters, SearchResponse, round_score
from .docread import DocumentRefused, read_document
from .resources import ServableRules, doc_uri
from .schemas import CONTENT_MODES

log = logging.getLogger("grooveseek.mcp")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

Json = dict[str, Any]

# A default graph call stays under 16 KB (bench/response_size.py): 30 nodes of ~100-character snippets.
# The CLI keeps R6.64's 100 nodes and R6.63's 200 characters, for people who read the tree.
MCP_GRAPH_MAX_NODES = 30
MCP_GRAPH_SNIPPET_CHARS = 100

BEST_PRACTICE_NOT_CONFIGURED = (
    "get_best_practice is not configured. Add [best_practice].path_templates to groove.toml (for example: "
    'path_templates = ["best-practices/{target}/PERFECT.md"]) to enable this tool.'
)


def _error(message: str) -> Json:
    return {"error": message}


def agent_cause(exc: BaseException) -> str:
    """An error's text for an MCP client: a missing index points at ``rebuild_index`` (the tool the
    client has) rather than at the ``groove index`` command line."""
    if isinstance(exc, IndexMissing):
        return f"No index found at {exc.db}. Try running rebuild_index first."
    return str(exc)


def _search_failed(cause: str) -> Json:
    """R7.7: ``Search failed: <cause>. Try running rebuild_index first.`` as one sentence pair
    (a cause's own final full stop would double up before the hint)."""
    return _error(f"Search failed: {cause.rstrip().removesuffix('.')}. Try running rebuild_index first.")


# -- search ------------------------------------------------------------------------------------------
def _threshold(service: KBService, min_quality: float | None, include_low_quality: bool | None) -> float:
    """R6.25 (``quality_threshold``); a non-finite ``min_quality`` is logged, not refused."""
    threshold = quality_threshold(service.app.config, min_quality, include_low_quality)
    if not include_low_quality and min_quality is not None and not math.isfinite(min_quality):
        log.info(
            "search: min_quality %r is not finite; using the server threshold %s", min_quality, threshold
        )
    return threshold


def _ratio(min_confidence_ratio: float | None) -> float | None:
    """R7.6: non-finite -> the server value (logged); negative -> 0."""
    if min_confidence_ratio is None:
        return None
    if not math.isfinite(min_confidence_ratio):
        log.info(
            "search: min_confidence_ratio %r is not finite; using the server value", min_confidence_ratio
        )
        return None
    return max(0.0, min_confidence_ratio)


@attrs.frozen
class SearchArgs:
    """The optional ``search`` parameters of R7.6 as they arrived (None: not given)."""

    limit: int | None = None
    category: str | None = None
    topic: str | None = None
    rerank: bool | None = None
    min_quality: float | None = None
    include_low_quality: bool | None = None
    path_globs: Sequence[str] | None = None
    tags_any: Sequence[str] | None = None
    tags_all: Sequence[str] | None = None
    date_from: str | None = None
    date_to: str | None = None
    fields: Mapping[str, Sequence[str]] | None = None
    fields_not: Mapping[str, Sequence[str]] | None = None
    min_confidence_ratio: float | None = None
    mmr: bool | None = None
    mmr_lambda: float | None = None
    mmr_same_doc_penalty: float | None = None
    parent_retriever: bool | None = None


def _filters(service: KBService, a: SearchArgs) -> SearchFilters:
    """The call's filters, checked at the boundary (R6.26, R6.30) with the pipeline's own rules."""
    filters = SearchFilters(
        category=a.category,
        topic=a.topic,
        min_quality=_threshold(service, a.min_quality, a.include_low_quality),
        path_globs=tuple(a.path_globs) if a.path_globs is not None else None,
        tags_any=tuple(a.tags_any or ()),
        tags_all=tuple(a.tags_all or ()),
        date_from=a.date_from,
        date_to=a.date_to,
        fields={key: tuple(values) for key, values in (a.fields or {}).items()},
        fields_not={key: tuple(values) for key, values in (a.fields_not or {}).items()},
    )
    validate_filters(filters)
    return filters


def uri_step(service: KBService) -> Callable[[IndexStore, SearchResponse], SearchResponse]:
    """The search's last step: servable hits get their ``kb://doc/`` URI (R6.53, R7.8) by the same
    predicate as the listing, read on the search's own snapshot (``KBService.search``)."""
    rules = ServableRules.for_app(service.app)

    def step(store: IndexStore, response: SearchResponse) -> SearchResponse:
        if not response.results:
            return response
        rows = store.serving_rows_for([hit.path for hit in response.results])
        results = tuple(
            attrs.evolve(hit, uri=doc_uri(hit.path))
            if (row := rows.get(hit.path)) is not None and rules.servable(row)
            else hit
            for hit in response.results
        )
        return attrs.evolve(response, results=results)

    return step


def search(service: KBService, query: str, content: str | None = None, **args: Any) -> Json:
    """The ``search`` tool (R7.6-R7.8): every parameter through ``resolve_request``, ``uri`` on hits.

    ``args`` are the optional parameters of ``SearchArgs``; an unknown name is a ``TypeError``.
    ``content`` picks a bounded snippet per hit (default) or the whole chunk (``"full"``).
    """
    app = service.app
    mode = content if content is not None else "snippet"
    if mode not in CONTENT_MODES:
        return _error(f'search: content must be "snippet" or "full", got "{mode}"')
    a = SearchArgs(**args)
    try:
        request = resolve_request(
            app.config,
            query,
            limit=a.limit if a.limit is not None else 5,
            filters=_filters(service, a),
            min_confidence_ratio=_ratio(a.min_confidence_ratio),
            rerank=a.rerank,
            reranker_loaded=app.reranker is not None,
            mmr=a.mmr,
            mmr_lambda=a.mmr_lambda,
            mmr_same_doc_penalty=a.mmr_same_doc_penalty,
            parent_retriever=a.parent_retriever,
            warn=lambda message: log.info("search: %s", message),
        )
        response = service.search(request, finish=uri_step(service))
    except SearchError as exc:  # the request's own bounds (R6.3, R6.7, R6.26, R6.29, R6.30, R6.38)
        return _error(str(exc))
    except RerankError as exc:  # worded by the reranker stage or plugin; no rebuild fixes it (R5.22)
        return _error(str(exc))
    except ModelError as exc:  # every other model failure in a search is the query embedding (R7.7)
        return _error(f"Failed to embed query: {exc}")
    except GrooveError as exc:
        if isinstance(exc, IndexMissing):
            return _search_failed(f"No index found at {exc.db}")
        return _search_failed(str(exc))
    except Exception as exc:  # never a traceback to the client (R7.3)
        log.exception("search failed")
        return _search_failed(f"{type(exc).__name__}: {exc}")
    if mode == "snippet":
        response = attrs.evolve(response, results=tuple(compact_hit(hit) for hit in response.results))
    return response.as_dict()


# -- list_topics -------------------------------------------------------------------------------------
def _children(rows: Sequence[ServingRow]) -> list[Json]:
    """R7.10: one node per directory segment after the second, counting every document beneath it."""
    tree: dict[str, Any] = {}
    for row in rows:
        node = tree
        for segment in row.path.split("/")[2:-1]:
            entry = node.setdefault(segment, {"count": 0, "children": {}})
            entry["count"] += 1
            node = entry["children"]

    def render(level: dict[str, Any]) -> list[Json]:
        return [
            {"segment": name, "file_count": level[name]["count"], "children": render(level[name]["children"])}
            for name in sorted(level)
        ]

    return render(tree)


def topic_groups(rows: Sequence[ServingRow]) -> list[Json]:
    """R7.9: one entry per (category, effective topic), nulls first; ``rows`` come ordered by path."""
    groups: dict[tuple[str | None, str | None], list[ServingRow]] = {}
    for row in rows:
        groups.setdefault((row.category, row.topic), []).append(row)

    def order(key: tuple[str | None, str | None]) -> tuple[bool, str, bool, str]:
        return (key[0] is not None, key[0] or "", key[1] is not None, key[1] or "")

    out = []
    for category, topic in sorted(groups, key=order):
        members = groups[(category, topic)]
        out.append(
            {
                "category": category,
                "topic": topic,
                "file_count": len(members),
                "last_updated": max(row.last_indexed for row in members),
                "titles": [row.title for row in members if row.title is not None],
                # Root and category-only entries carry [] (R7.10).
                "children": _children(members) if category is not None and topic is not None else [],
            }
        )
    return out


def list_topics(service: KBService) -> list[Json] | Json:
    """The ``list_topics`` tool (R7.9-R7.11)."""
    try:
        with service.reader() as store:
            rows = store.serving_rows()
    except Exception as exc:
        log.debug("list_topics failed", exc_info=True)
        return _error(f"Failed to list topics: {agent_cause(exc)}")
    return topic_groups(rows)


# -- get_document ------------------------------------------------------------------------------------
def get_document(
    service: KBService, path: str, from_line: int | None = None, to_line: int | None = None
) -> Json:
    """The ``get_document`` tool (R7.12-R7.16): any file of an active extension under the KB, by its
    one spelling, indexed or not (R7.13, R12.3); metadata from the parser's read-side parse.

    ``from_line`` / ``to_line`` (1-based, inclusive) return only those lines of the text, so an agent
    reads around a search hit's ``location`` instead of the whole file (docs/mcp.md).
    """
    app = service.app
    if (from_line is not None and from_line < 1) or (to_line is not None and to_line < 1):
        return _error("get_document: from_line and to_line count from 1")
    if from_line is not None and to_line is not None and to_line < from_line:
        return _error(f"get_document: to_line ({to_line}) is before from_line ({from_line})")
    try:
        read = read_document(app.kb, app.registry, path, config=app.config)
    except DocumentRefused as exc:
        return _error(str(exc))
    doc = read.doc
    _, path_topic = category_topic(path)
    out = {
        "path": path,
        "title": doc.title or filename_title(path) or None,  # as the indexer records it
        "date": doc.date,
        "topic": doc.topic if doc.topic is not None else path_topic,
        "tags": list(effective_tags(doc.tags, doc.system_tags)),
        "content": read.text,
        "truncated": read.truncated,
    }
    if from_line is None and to_line is None:
        return out
    return {**out, **line_range(read.text, from_line or 1, to_line)}


def line_range(text: str, first: int, last: int | None) -> Json:
    """Lines ``first..last`` of ``text`` (1-based, inclusive, clamped to the text) with their bounds.

    Lines end at LF, CRLF or a lone CR, as the indexer counts them (R3.17), and keep their endings.
    """
    lines = _LINES.findall(text)
    total = len(lines)
    last = total if last is None else min(last, total)
    return {
        "content": "".join(lines[first - 1 : last]),
        "from_line": first,
        "to_line": max(last, first - 1),
        "total_lines": total,
    }


# -- get_best_practice -------------------------------------------------------------------------------
def h2_sections(text: str) -> list[tuple[str, str]]:
    """(heading, section text) for every line starting with ``## ``: from that line up to the next one."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("## "):
            sections.append((line[3:].strip(), [line]))
        elif sections:
            sections[-1][1].append(line)
    return [(heading, "\n".join(lines).rstrip("\n")) for heading, lines in sections]


def get_best_practice(service: KBService, target: str, category: str | None = None) -> Json:
    """The ``get_best_practice`` tool (R7.17-R7.21)."""
    app = service.app
    templates = app.config.best_practice.path_templates
    if not templates:
        return _error(BEST_PRACTICE_NOT_CONFIGURED)
    found = None
    for template in templates:
        rel = template.replace("{target}", target)
        # Probed paths reveal the server's layout: debug log only, never in the answer (R7.21).
        log.debug("get_best_practice: probing %r", rel)
        if not is_addressable(rel):  # can never point inside the KB: skipped without touching the disk
            continue
        try:
            found = read_document(app.kb, app.registry, rel, config=app.config)
            break
        except DocumentRefused as exc:
            # Only "not found" moves on (R7.19). Every other refusal, an extension outside the
            # parser set included, is a misconfigured template or a denied file: skipping it would
            # silently serve a later template instead, so it is answered as get_document would.
            if exc.kind != "not_found":
                return _error(str(exc))
    if found is None:
        return _error(
            f"Best-practices document for target '{target}' not found ({len(templates)} templates tried). "
            "Check [best_practice].path_templates in groove.toml, or run the server with "
            "GROOVE_LOG=grooveseek=debug to see which paths were probed."
        )
    sections = h2_sections(found.text)
    if category is None:
        listing = "".join(f"- {heading}\n" for heading, _ in sections)
        return {"target": target, "content": f"## Sections\n{listing}\n---\n\n{found.text}"}
    wanted = category.lower()
    for heading, section in sections:
        if wanted in heading.lower():
            return {"target": target, "category": category, "content": section}
    available = ", ".join(heading for heading, _ in sections)
    return _error(f"Section '{category}' not found. Available sections: {available}")


# -- rebuild_index -----------------------------------------------------------------------------------
def rebuild_index(service: KBService, force: bool = False) -> Json:
    """The ``rebuild_index`` tool (R7.22-R7.24): single-flight through ``KBService.rebuild``."""
    try:
        summary = service.rebuild(force=force)
    except RebuildRunning as exc:
        return _error(
            f"rebuild_index is already running (started {int(exc.started_seconds_ago)} s ago); "
            "try again when it has finished (search keeps working meanwhile)"
        )
    except GrooveError as exc:  # config, schema, probe or store refusals carry their own wording
        return _error(str(exc))
    except Exception as exc:
        log.exception("rebuild_index failed")
        return _error(f"Rebuild failed: {type(exc).__name__}: {exc}")
    return summary.as_dict()


# -- get_connection_graph ----------------------------------------------------------------------------
def get_connection_graph(service: KBService, start: str, **args: Any) -> Json:
    """The ``get_connection_graph`` tool (R7.25-R7.26): the walk is ``search.graph``, which clamps the
    knobs (R6.64), checks ``seed_strategy`` and the ``exclude_paths`` bounds (R6.30) and reports a start
    document without chunks; every refusal gets the tool's prefix (R7.26)."""
    from ..search.graph import GraphParams, connection_graph

    given = {key: value for key, value in args.items() if value is not None}
    given.setdefault("max_nodes", MCP_GRAPH_MAX_NODES)
    try:
        params = GraphParams(start=start, **given)
        threshold = service.app.config.quality_filter.effective_threshold
        with service.reader() as store:
            result = connection_graph(store, params, min_quality=threshold)
    except GrooveError as exc:
        return _error(f"get_connection_graph failed: {agent_cause(exc)}")
    except Exception as exc:
        log.exception("get_connection_graph failed")
        return _error(f"get_connection_graph failed: {type(exc).__name__}: {exc}")
    return compact_graph(result.as_dict())


def compact_graph(answer: Json) -> Json:
    """The MCP graph answer with scores at 4 significant digits and snippets of
    ``MCP_GRAPH_SNIPPET_CHARS`` (docs/mcp.md, "Answers"): a node is a pointer, its text is one
    ``get_document`` call away."""
    for node in answer["nodes"]:
        node["score"] = round_score(node["score"])
        snippet = node["snippet"].removesuffix("…")
        if len(snippet) > MCP_GRAPH_SNIPPET_CHARS:
            node["snippet"] = snippet[:MCP_GRAPH_SNIPPET_CHARS].rstrip() + "…"
    return answer
