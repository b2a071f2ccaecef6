"""The kit for binary-format parsers: the decompression budget, budgeted zip reads, metadata dates.

Every format that inflates or extracts more than it reads (PDF text, OOXML zips, and whatever a
third-party parser adds) counts those bytes against ``ParseContext.max_decompressed_size``
(R2.28) through a ``DecompressionBudget``, so a refusal always says the same thing and names the
right limit: ``[index].max_decompressed_size`` when indexing, the built-in read-side 50 MiB budget
for ``get_document`` and resources (R2.31, R2.36). ``BudgetedZip`` is the pre-flight of R3.41:
declared sizes checked before a byte is inflated, inflated bytes counted as they are read.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from datetime import date

from .errors import ParseError
from .types import ParseContext

#: The key an index-time refusal names.
INDEX_BUDGET = "[index].max_decompressed_size"
#: What a read-side refusal names (R2.36: the read budget, not a raw-size limit).
READ_BUDGET = "the read-side 50 MiB decompression budget of get_document, which [index] does not change"
_CHUNK = 1 << 16


class BudgetExceeded(ParseError):
    """A file would inflate past the decompression budget; the message names the limit."""


class DecompressionBudget:
    """Counts inflated or extracted bytes for one file against one limit.

    ``name`` is what a refusal names (``INDEX_BUDGET`` or ``READ_BUDGET``); parsers take it from
    ``for_context`` so the wording cannot drift between formats.
    """

    def __init__(self, limit: int, name: str = INDEX_BUDGET) -> None:
        self.limit = limit
        self.name = name
        self.used = 0

    @classmethod
    def for_context(cls, ctx: ParseContext, *, read: bool = False) -> DecompressionBudget:
        """The budget of one parse: ``ctx.max_decompressed_size``; ``read`` for ``parse_for_read``."""
        return cls(ctx.max_decompressed_size, READ_BUDGET if read else INDEX_BUDGET)

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    def refusal(self, what: str, size: int | None = None) -> BudgetExceeded:
        """The R2.28 refusal: names ``what`` inflated past the limit and the limit's key."""
        amount = f"{size} bytes; " if size is not None else ""
        message = (
            f"over the decompression budget: {what} inflates past {self.limit} bytes ({amount}{self.name})"
        )
        if self.name == INDEX_BUDGET:
            message += "; raise [index].max_decompressed_size to index it"
        return BudgetExceeded(message)

    def fits(self, n: int) -> bool:
        """Whether ``n`` more bytes would stay within the budget (nothing is counted)."""
        return self.used + n <= self.limit

    def take(self, n: int, what: str) -> None:
        """Count ``n`` bytes; raise ``BudgetExceeded`` naming ``what`` when the limit is passed."""
        self.used += n
        if self.used > self.limit:
            raise self.refusal(what)


NOT_A_ZIP = (
    "not a readable zip archive (a password-protected Office file is an encrypted container, "
    "not a zip; password-protected files are not supported)"
)


class BudgetedZip:
    """A zip archive whose every inflated byte is counted against a ``DecompressionBudget`` (R3.41).

    Opening it reads only the central directory. ``read`` checks the entry's declared size first,
    then counts the bytes actually inflated, chunk by chunk, so a member that lies about its size
    is stopped as soon as it passes the budget. Nested archives are never opened.
    """

    def __init__(self, data: bytes, budget: DecompressionBudget) -> None:
        self.budget = budget
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(data))
            self.infos = {info.filename: info for info in self.zf.infolist()}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
            raise ParseError(NOT_A_ZIP) from None

    def names(self) -> list[str]:
        return list(self.infos)

    def declared_total(self, keep: Callable[[str], bool] = lambda name: True) -> int:
        """The sum of the declared uncompressed sizes of the entries ``keep`` accepts."""
        return sum(info.file_size for name, info in self.infos.items() if keep(name))

    def check_declared(self, keep: Callable[[str], bool] = lambda name: True) -> None:
        """R3.41: refuse before inflating anything when the declared sizes alone pass the budget."""
        total = self.declared_total(keep)
        if not self.budget.fits(total):
            raise self.budget.refusal("the archive's entries declare that they", total)

    def read(self, name: str) -> bytes | None:
        """Inflate one entry under the budget; None when the archive has no such entry."""
        info = self.infos.get(name)
        if info is None:
            return None
        if not self.budget.fits(info.file_size):
            raise self.budget.refusal(name, info.file_size)
        out = bytearray()
        for piece in self._pieces(info):
            out += piece
        return bytes(out)

    def drain(self, name: str) -> None:
        """Inflate one entry under the budget and discard it (counting entries a library will read)."""
        info = self.infos[name]
        if not self.budget.fits(info.file_size):
            raise self.budget.refusal(name, info.file_size)
        for _ in self._pieces(info):
            pass

    def _pieces(self, info: zipfile.ZipInfo) -> Iterator[bytes]:
        try:
            with self.zf.open(info) as stream:
                while piece := stream.read(_CHUNK):
                    self.budget.take(len(piece), info.filename)
                    yield piece
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError) as exc:
            # A truncated archive, a bad CRC, an unsupported or encrypted member.
            raise ParseError(f"{info.filename} cannot be read from the zip archive: {exc}") from None
        except RuntimeError as exc:  # zipfile's "File ... is encrypted, password required"
            raise ParseError(
                f"{info.filename} is encrypted; password-protected files are not supported"
            ) from (exc)


_DATE = re.compile(r"^(?:D:)?(\d{4})-?(\d{2})?-?(\d{2})?")


def metadata_date(value: object) -> str | None:
    """A PDF or Office metadata date as ``YYYY-MM-DD`` (R3.14), or None when it is not a date.

    Accepts ``datetime``/``date`` values, PDF dates (``D:20260102093000+09'00'``) and W3CDTF
    (``2026-01-02T09:30:00Z``). A year alone becomes January 1st; an impossible date is None.
    """
    if isinstance(value, date):
        return value.strftime("%Y-%m-%d")
    if not isinstance(value, str):
        return None
    match = _DATE.match(value.strip())
    if match is None:
        return None
    year, month, day = (int(g) if g else 1 for g in match.groups())
    try:
        return date(year, month, day).strftime("%Y-%m-%d")
    except ValueError:
        return None
