"""``groove doctor``'s checks: what each finds, its severity and the remedy it names (SPEC §11).

``diagnose`` runs every check over an open index and returns a ``Diagnosis``; it never loads a
model and never writes. The SQL lives in ``store.health``; this module decides what the counts
mean. Check ids are stable (scripts key on them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .fieldschema import FieldSchema
from .names import is_addressable
from .store.health import Affected, IndexHealth
from .store.records import AWAITING_REPARSE

__all__ = ["CHECK_IDS", "Diagnosis", "DoctorInputs", "Finding", "diagnose"]

MIB = 1_048_576
TEXT_READ_CAP = MIB  # R2.31, as in mcp/docread.py
BINARY_READ_CAP = 50 * MIB
DECOMPRESSION_BUDGET = 50 * MIB
CODE_TAG = "code"
LINE_CHUNKED_TAGS = ("parse:too-deep", "parse:too-many-chunks")

CHECK_IDS = (
    "vector-table-missing",
    "missing-embedding",
    "orphan-embedding",
    "missing-fts-row",
    "orphan-fts-row",
    "chunk-without-document",
    "document-without-chunks",
    "extension-not-registered",
    "larger-than-a-read-returns",
    "binary-uris-withheld",
    "size-not-recorded",
    "chunked-without-definitions",
    "blank-code-chunks",
    "declared-fields-pending",
    "declared-fields-stale",
    "parse-policy-pending",
    "name-not-spellable-on-windows",
    "files-skipped",
)


@attrs.frozen
class Finding:
    """One check that found something (R11.2)."""

    check: str
    severity: str  # "error" | "warning"
    summary: str
    count: int
    samples: tuple[str, ...]
    remedy: str

    def as_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "summary": self.summary,
            "count": self.count,
            "samples": list(self.samples),
            "remedy": self.remedy,
        }


@attrs.frozen
class Diagnosis:
    documents: int
    chunks: int
    findings: tuple[Finding, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "findings": [f.as_json() for f in self.findings],
        }


@attrs.frozen
class DoctorInputs:
    """What the checks need besides the index: the active parsers, the config caps and the schema.

    ``parsers`` maps each active parser id to ``(kind, policy_version)``; ``windows`` chooses the
    platform rules for the Windows name check (None: the running platform).
    """

    parsers: Mapping[str, tuple[str, str]]
    max_decompressed_size: int
    schema: FieldSchema
    recorded_fields: tuple[str, ...] | None
    windows: bool | None = None


def _found(check: str, severity: str, affected: Affected, summary: str, remedy: str) -> list[Finding]:
    if affected.count == 0:
        return []
    return [
        Finding(check, severity, summary.format(n=affected.count), affected.count, affected.samples, remedy)
    ]


def _table_checks(h: IndexHealth) -> list[Finding]:
    force = "groove index --force"
    out: list[Finding] = []
    if not h.has_vector_table():
        if h.chunk_count():
            out.append(
                Finding(
                    "vector-table-missing",
                    "error",
                    f"the index has {h.chunk_count()} chunk(s) but no vector table: no vector hits at all",
                    h.chunk_count(),
                    (),
                    force,
                )
            )
    else:
        out += _found(  # issue 26: chunks written lexically wait for their vector; a run fills them
            "missing-embedding",
            "warning",
            h.missing_embeddings(),
            "{n} chunk(s) have no vector yet (found by keyword only until an index run fills them)",
            "groove index",
        )
        out += _found(
            "orphan-embedding", "error", h.orphan_embeddings(), "{n} vector(s) belong to no chunk", force
        )
    missing = h.missing_fts_rows()
    cjk_missing = h.missing_cjk_rows()
    fts_missing = Affected(missing.count + cjk_missing.count, missing.samples or cjk_missing.samples)
    out += _found(
        "missing-fts-row",
        "error",
        fts_missing,
        "{n} chunk row(s) lack a full-text row (never keyword hits)",
        "groove index",
    )
    orphans, cjk_orphans = h.orphan_fts_rows(), h.orphan_cjk_rows()
    fts_orphans = Affected(orphans.count + cjk_orphans.count, orphans.samples or cjk_orphans.samples)
    out += _found("orphan-fts-row", "error", fts_orphans, "{n} full-text row(s) belong to no chunk", force)
    out += _found(
        "chunk-without-document",
        "error",
        h.chunks_without_document(),
        "{n} chunk(s) belong to no document",
        force,
    )
    out += _found(
        "document-without-chunks",
        "error",
        h.documents_without_chunks(),
        "{n} document(s) have no chunks",
        force,
    )
    return out


def _collect(
    rows: list[tuple[str, str, int | None, str]], keep: Callable[[str, str, int | None], bool]
) -> Affected:
    paths = [p for p, pid, size, _ in rows if keep(p, pid, size)]
    return Affected(len(paths), tuple(paths[:5]))


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""


def _document_checks(h: IndexHealth, inputs: DoctorInputs) -> list[Finding]:
    rows = h.documents_by_parser()
    active = {pid.lower() for pid in inputs.parsers}
    kinds = {pid: kind for pid, (kind, _) in inputs.parsers.items()}

    def unregistered(path: str, pid: str, size: int | None) -> bool:
        return pid not in inputs.parsers and _extension(path) not in active

    def too_large(path: str, pid: str, size: int | None) -> bool:
        if size is None or pid not in kinds:
            return False
        return size > (BINARY_READ_CAP if kinds[pid] == "binary" else TEXT_READ_CAP)

    out = _found(
        "extension-not-registered",
        "warning",
        _collect(rows, unregistered),
        "{n} document(s) have an extension no active parser covers: searchable, but not servable",
        # Most often the run that indexed them passed --config enabling the parser and this one did
        # not: a bare `groove index` would delete them, so that is offered last and named as such.
        "run groove with the config that enabled their parser (groove --config <groove.toml> doctor), or "
        "add it to [parsers].enabled; only to drop them on purpose, run groove index without it",
    )
    out += _found(
        "larger-than-a-read-returns",
        "warning",
        _collect(rows, too_large),
        "{n} document(s) are larger than a read returns (text 1 MiB, binary 50 MiB): searchable, no uri",
        "split each document into parts under the read cap",
    )
    if inputs.max_decompressed_size > DECOMPRESSION_BUDGET:
        binary = _collect(rows, lambda p, pid, s: kinds.get(pid) == "binary")
        out += _found(
            "binary-uris-withheld",
            "warning",
            binary,
            "{n} binary document(s) are not offered because [index].max_decompressed_size is above 50 MiB",
            "lower [index].max_decompressed_size to 50 MiB or less to offer them",
        )
    out += _found(
        "size-not-recorded",
        "warning",
        _collect(rows, lambda p, pid, s: s is None or s < 0),
        "{n} document(s) have no recorded size",
        "groove index (no re-embedding)",
    )
    out += _windows_check(rows, inputs)
    return out


def _windows_check(rows: list[tuple[str, str, int | None, str]], inputs: DoctorInputs) -> list[Finding]:
    windows = os.name == "nt" if inputs.windows is None else inputs.windows
    if not windows:
        return []  # R11.20: a Windows-only check
    return _found(
        "name-not-spellable-on-windows",
        "warning",
        _collect(rows, lambda p, pid, s: not is_addressable(p, windows=True)),
        "{n} document(s) have names this platform cannot open",
        "groove index (the sweep removes them)",
    )


def _code_checks(h: IndexHealth) -> list[Finding]:
    out = _found(
        "chunked-without-definitions",
        "warning",
        h.tagged_documents(LINE_CHUNKED_TAGS),
        "{n} source file(s) were chunked by lines: whole and searchable, but without symbol kinds, "
        "headings or scopes",
        "change the file (flatten the nesting or split it); an index run makes the same choice",
    )
    out += _found(
        "blank-code-chunks",
        "warning",
        h.blank_code_chunks(CODE_TAG),
        "{n} source file(s) have blank code chunks",
        "groove index --force",
    )
    return out


def _state_checks(h: IndexHealth, inputs: DoctorInputs) -> list[Finding]:
    out: list[Finding] = []
    if inputs.recorded_fields is None:
        out.append(
            Finding(
                "declared-fields-pending",
                "warning",
                "no declared-field set is recorded yet: fields searches are refused",
                1,
                (),
                "groove index",
            )
        )
    elif inputs.recorded_fields != inputs.schema.declared:
        shown = ", ".join(inputs.schema.declared) or "none"
        was = ", ".join(inputs.recorded_fields) or "none"
        out.append(
            Finding(
                "declared-fields-stale",
                "warning",
                f"the recorded declared fields ({was}) differ from groove-schema.toml ({shown})",
                1,
                (),
                "groove index (no re-embedding)",
            )
        )
    recorded = h.recorded_policies()
    stale = sorted(pid for pid, (_, v) in inputs.parsers.items() if pid in recorded and recorded[pid] != v)
    awaiting = h.awaiting_reparse(AWAITING_REPARSE)
    if stale or awaiting.count:
        parts = [f"parser(s) {', '.join(stale)} changed policy"] if stale else []
        if awaiting.count:
            parts.append(f"{awaiting.count} document(s) await a re-read")
        out.append(
            Finding(
                "parse-policy-pending",
                "warning",
                "; ".join(parts),
                len(stale) + awaiting.count,
                awaiting.samples,
                "groove index",
            )
        )
    return out


def _skip_check(h: IndexHealth) -> list[Finding]:
    """(design) The files the last ``groove index`` run skipped, with the first one's reason."""
    count, skips = h.last_run_skips()
    if count == 0:
        return []
    first = f"{skips[0][0]}: {skips[0][1]}" if skips else ""
    return [
        Finding(
            "files-skipped",
            "warning",
            f"the last groove index run skipped {count} file(s), so they are not searchable (first: {first})",
            count,
            tuple(path for path, _ in skips[:5]),
            "groove index prints each file's reason as 'Skipping <path>: <reason>': fix or remove the "
            "file, or raise the [index] key a reason names",
        )
    ]


def diagnose(health: IndexHealth, inputs: DoctorInputs) -> Diagnosis:
    """Run every check (R11.4–R11.20, then the design check ``files-skipped``) in a stable order."""
    findings = [
        *_table_checks(health),
        *_document_checks(health, inputs),
        *_code_checks(health),
        *_state_checks(health, inputs),
        *_skip_check(health),
    ]
    order = {c: i for i, c in enumerate(CHECK_IDS)}
    findings.sort(key=lambda f: order[f.check])
    return Diagnosis(health.document_count(), health.chunk_count(), tuple(findings))
