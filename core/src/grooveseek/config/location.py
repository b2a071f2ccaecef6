"""Where a knowledge base's index goes when no ``--index-path`` or ``[index].path`` names one
(docs/index-location.md, issue 24; replaces SPEC R0.6's "beside kb_path").

The default is one file per knowledge base under the user's data directory, keyed by the folder's
resolved path: two folders in one parent get two indexes, and nothing is ever written inside or
beside a knowledge-base folder. An index made by an older version beside the folder
(``<parent>/.groove.db``) is still used while it belongs to this folder, so upgrading changes
nothing for an existing user.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

LEGACY_NAME = ".groove.db"  # the old default, beside kb_path (R0.6 before issue 24)
KB_META = "kb_path"  # index_meta key: the KB folder, relative to the index file's folder
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SLUG_MAX = 40  # keeps <index>.sock within the 104/108-byte Unix socket limit under a usual home


def data_home(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """The folder holding default indexes: ``$GROOVE_DATA_HOME`` when absolute, else the platform
    data directory's ``groove`` folder (``$XDG_DATA_HOME/groove`` or ``~/.local/share/groove``;
    ``~/Library/Application Support/groove`` on macOS, ``%LOCALAPPDATA%\\groove`` on Windows)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    override = env.get("GROOVE_DATA_HOME", "")
    if os.path.isabs(override):
        return Path(override)
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "groove"
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA", "")
        return (Path(local) if os.path.isabs(local) else home / "AppData" / "Local") / "groove"
    xdg = env.get("XDG_DATA_HOME", "")  # XDG: a relative value is invalid and ignored
    return (Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share") / "groove"


def own_index_path(kb: Path, env: Mapping[str, str] | None = None) -> Path:
    """``<data home>/indexes/<folder name>-<12 hex of sha256(resolved kb path)>.db``.

    The readable name helps a person find the file; the hash keeps ``~/a/notes`` and
    ``~/b/notes`` apart. ``kb`` must already be resolved (``resolve_kb_path``)."""
    digest = hashlib.sha256(os.fsencode(str(kb))).hexdigest()[:12]
    slug = _UNSAFE.sub("_", kb.name).strip("._")[:_SLUG_MAX] or "kb"
    return data_home(env) / "indexes" / f"{slug}-{digest}.db"


def legacy_index_path(kb: Path) -> Path:
    """Where versions before issue 24 put the index: ``.groove.db`` in the folder's parent."""
    return kb.parent / LEGACY_NAME


def legacy_belongs(db: Path, kb: Path) -> bool:
    """Whether the old-style index ``db`` was built for ``kb``: it records that folder, or it is a
    readable index from before folders were recorded (the old rule used it for any folder)."""
    from ..store.store import peek_meta  # only when an old index exists: keeps start-up light

    relative = peek_meta(db, KB_META)
    if relative is None:
        return peek_meta(db, "embedding_identity") is not None
    return Path(os.path.realpath(os.path.join(db.parent, relative))) == kb


def default_index_path(kb: Path, env: Mapping[str, str] | None = None) -> Path:
    """The index for ``kb`` when nothing names one: the own index when it exists, else an old
    beside-the-folder index that belongs to ``kb``, else the own index (made on first write)."""
    own = own_index_path(kb, env)
    if os.path.lexists(own):
        return own
    legacy = legacy_index_path(kb)
    if os.path.lexists(legacy) and legacy_belongs(legacy, kb):
        return legacy
    return own
