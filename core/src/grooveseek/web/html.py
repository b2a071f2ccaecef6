"""The HTML helpers of the search page: escaping, URLs and the page frame (issue 25).

Pages are plain strings put together on the server. Everything that comes from a note, a path,
the query or the config passes through ``esc`` (``html.escape`` with quotes, after dropping the
characters HTML cannot carry), so a note holding ``<script>`` shows as text. The frame links the
package's one stylesheet and, where a page needs it, its one script; no page has inline script or
style, which the Content-Security-Policy (``routes.py``) forbids anyway.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlencode

from ..mcp.gate import UI_PATH  # one spelling: the gate checks exactly the paths the pages live on

STATIC_PATH = f"{UI_PATH}/static"

# C0 controls other than tab/LF/CR, lone surrogates and non-characters: not allowed in HTML text.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")

Params = Mapping[str, str | int | Iterable[str] | None]


def esc(text: object) -> str:
    """Text for an HTML text node or a quoted attribute value."""
    return html.escape(_UNSAFE.sub("\ufffd", str(text)), quote=True)


def url(path: str, params: Params | None = None, fragment: str = "") -> str:
    """``path?params#fragment``: None and empty values are left out, lists repeat their key."""
    pairs: list[tuple[str, str]] = []
    for key, value in (params or {}).items():
        if value is None or value == "":
            continue
        if isinstance(value, str | int):
            pairs.append((key, str(value)))
        else:
            pairs.extend((key, str(v)) for v in value if v)
    query = urlencode(pairs)
    return path + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")


NAV = (("Search", UI_PATH), ("Status", f"{UI_PATH}/status"))


def page(
    title: str, body: str, *, current: str = "", script: bool = False, kb_name: str = "", wide: bool = False
) -> str:
    """A whole page: head, the navigation bar and ``body`` (already HTML)."""
    here = ' aria-current="page"'
    nav = "".join(
        f'<a href="{esc(href)}"{here if href == current else ""}>{esc(label)}</a>' for label, href in NAV
    )
    scripts = f'<script src="{STATIC_PATH}/ui.js" defer></script>' if script else ""
    main_class = ' class="wide"' if wide else ""
    brand = f"GrooveSeek · {esc(kb_name)}" if kb_name else "GrooveSeek"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · GrooveSeek</title>"
        f'<link rel="icon" href="{STATIC_PATH}/icon.svg" type="image/svg+xml">'
        f'<link rel="stylesheet" href="{STATIC_PATH}/ui.css">'
        f'<link rel="stylesheet" href="{STATIC_PATH}/graph.css">{scripts}</head>'
        f'<body><header class="top"><span class="brand">{brand}</span><nav>{nav}</nav></header>'
        f'<main id="main"{main_class}>{body}</main></body></html>\n'
    )


def error_block(message: str) -> str:
    return f'<p class="error" role="alert">{esc(message)}</p>'
