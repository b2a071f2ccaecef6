"""The search page's URL: every search is ``/ui?q=...`` plus the filters the CLI has (issue 25).

``SearchForm.from_query`` reads a request's query string with the CLI's names (``category``,
``topic``, ``tag_any``, ``tag_all``, ``path_glob``, ``date_from``, ``date_to``; the list ones
repeat or take commas, as the flags do) and ``search_args`` turns it into the keyword arguments of
the MCP ``search`` tool, so the page runs exactly the search an agent would. Bounds (query size,
list lengths) are the tool's own and come back as its error message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .html import Params

PAGE_SIZE = 10
#: Hits fetched per search; pages slice this one ranking, so page 2 continues page 1 exactly.
RESULT_WINDOW = 50
MAX_PAGE = RESULT_WINDOW // PAGE_SIZE
MAX_FIELD_CHARS = 1024


def _one(query: Any, key: str) -> str:
    value = query.get(key) or ""
    return value.strip()[: MAX_FIELD_CHARS * 4]


def _many(query: Any, key: str) -> tuple[str, ...]:
    return tuple(part.strip() for value in query.getlist(key) for part in value.split(",") if part.strip())


def _whole(text: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(text)))
    except ValueError:
        return default


@attrs.frozen
class SearchForm:
    q: str = ""
    category: str = ""
    topic: str = ""
    tag_any: tuple[str, ...] = ()
    tag_all: tuple[str, ...] = ()
    path_glob: tuple[str, ...] = ()
    date_from: str = ""
    date_to: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, query: Any) -> SearchForm:
        """The form as the URL gives it; unknown keys are ignored, a bad page number is page 1."""
        path_globs = tuple(g.strip() for g in query.getlist("path_glob") if g.strip())
        return cls(
            q=_one(query, "q"),
            category=_one(query, "category"),
            topic=_one(query, "topic"),
            tag_any=_many(query, "tag_any"),
            tag_all=_many(query, "tag_all"),
            path_glob=path_globs,
            date_from=_one(query, "date_from"),
            date_to=_one(query, "date_to"),
            page=_whole(_one(query, "page"), 1, 1, MAX_PAGE),
        )

    @property
    def has_filters(self) -> bool:
        return any(
            (
                self.category,
                self.topic,
                self.tag_any,
                self.tag_all,
                self.path_glob,
                self.date_from,
                self.date_to,
            )
        )

    def search_args(self) -> dict[str, Any]:
        """Keyword arguments of ``mcp.tools.search`` (after the query) for this form."""
        args: dict[str, Any] = {"limit": RESULT_WINDOW}
        optional: Mapping[str, str | Sequence[str]] = {
            "category": self.category,
            "topic": self.topic,
            "tags_any": list(self.tag_any),
            "tags_all": list(self.tag_all),
            "path_globs": list(self.path_glob),
            "date_from": self.date_from,
            "date_to": self.date_to,
        }
        args.update({key: value for key, value in optional.items() if value})
        return args

    def params(self, **changes: Any) -> Params:
        """The URL parameters of this form (``changes`` applied), for links and the pager."""
        form = attrs.evolve(self, **changes)
        return {
            "q": form.q,
            "category": form.category,
            "topic": form.topic,
            "tag_any": ",".join(form.tag_any),
            "tag_all": ",".join(form.tag_all),
            "path_glob": form.path_glob,
            "date_from": form.date_from,
            "date_to": form.date_to,
            "page": form.page if form.page > 1 else None,
        }
