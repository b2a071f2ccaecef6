"""Cutting an input to the model's window before it is tokenized (issue 9, ``Embedder.max_input_tokens``).

The tokenizer truncates to the window anyway, but only after it has tokenized the whole text: a
50 MiB chunk cost gigabytes of token offsets for the 256 tokens the model reads. ``window_text``
keeps a prefix that holds the whole window of any ordinary text, so the vector is the same as
without the cut, and whose length depends on the window, never on the input:

* it ends after the ``max_tokens``-th whitespace-separated word: WordPiece and SentencePiece make
  at least one token of every word, so those words fill the window;
* and it is at most ``max_tokens * MAX_CHARS_PER_TOKEN`` characters, so a text without whitespace
  (a 10 MB single line) is cut too.

The vector is therefore the one the whole text gives unless the window holds fewer than one token
per 100 characters: words of more than 100 characters (WordPiece reads each as one ``[UNK]``) or
whitespace runs that long. Such text is ``[UNK]`` and blanks to the model; its vector reads a
shorter prefix of it. The keyword index always has the whole text.
"""

from __future__ import annotations

import itertools
import re

MAX_CHARS_PER_TOKEN = 100  # WordPiece's max_input_chars_per_word (BERT, MiniLM, bge-small)
_WORD = re.compile(r"\S+")


def window_chars(max_tokens: int) -> int:
    """The most characters ``window_text`` keeps for a window of ``max_tokens`` tokens."""
    return max(1, max_tokens) * MAX_CHARS_PER_TOKEN


def window_text(text: str, max_tokens: int) -> str:
    """``text`` cut after its ``max_tokens``-th word and to ``window_chars(max_tokens)`` characters."""
    head = text[: window_chars(max_tokens)]
    last = next(itertools.islice(_WORD.finditer(head), max(1, max_tokens) - 1, None), None)
    return head if last is None else head[: last.end()]
