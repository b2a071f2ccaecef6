"""Rules a review found with no test (issue 20 item 6): boolean flag values (R8.3), the JSON shape
of results (R6.55), the metric version (R10.10), the vector-dimension mismatch message (R4.28) and
reranking without a re-index (R5.22). Each test fails when its rule is broken."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.cli.options import BOOL, dump_json
from grooveseek.errors import ModelError
from grooveseek.eval.golden import GoldenExpected
from grooveseek.eval.metrics import METRIC_VERSION, first_match_ranks, ndcg_at_k, recall_at_k, reciprocal_rank
from grooveseek.index.guard import check_model, db_path_for
from grooveseek.interfaces import Reranker
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import Store
from grooveseek.testing import FakeEmbedder, make_service, write_kb

# ----------------------------------------------------------------------------------- R8.3


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("true", True),
        ("TRUE", True),
        ("1", True),
        ("Yes", True),
        ("false", False),
        ("0", False),
        (" no ", False),
    ],
)
def test_boolean_flags_accept_the_six_spellings_in_any_case(raw: str, value: bool) -> None:
    assert BOOL.convert(raw, None, None) is value


@pytest.mark.parametrize("raw", ["maybe", "on", "off", "2", "", "t"])
def test_any_other_boolean_value_is_a_usage_error(raw: str) -> None:
    with pytest.raises(click.BadParameter, match="expected true/false/1/0/yes/no"):
        BOOL.convert(raw, None, None)


def test_a_boolean_flag_without_a_value_is_refused_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["search", "x", "--kb-path", str(tmp_path), "--mmr"])
    assert result.exit_code == 2


# ----------------------------------------------------------------------------------- R6.55


def test_json_is_pretty_printed_with_two_spaces_and_non_ascii_unescaped() -> None:
    assert (
        dump_json({"title": "配列", "tags": ["a"]}) == '{\n  "title": "配列",\n  "tags": [\n    "a"\n  ]\n}'
    )


# ----------------------------------------------------------------------------------- R10.10

# The metrics of fixed rankings under the current METRIC_VERSION. A change to a metric's definition
# changes these numbers: bump METRIC_VERSION (so history never compares runs scored differently)
# and record the new values under the new version.
PINNED = {2: {"recall@3": 0.5, "rr": 0.5, "ndcg@3": 0.3868528072345416}}


def test_metric_definitions_are_pinned_to_the_metric_version() -> None:
    hits = [("a.md", "Intro"), ("b.md", "Setup {#setup}"), ("c.md", None), ("d.md", None)]
    expected = [GoldenExpected("b.md", "setup"), GoldenExpected("z.md", None)]
    ranks = first_match_ranks(hits, expected)
    got = {"recall@3": recall_at_k(ranks, 3), "rr": reciprocal_rank(ranks), "ndcg@3": ndcg_at_k(ranks, 3)}
    assert METRIC_VERSION in PINNED, "METRIC_VERSION changed: record this version's values in PINNED"
    assert got == pytest.approx(PINNED[METRIC_VERSION]), "a metric changed: bump METRIC_VERSION"


# ----------------------------------------------------------------------------------- R4.28


def test_a_vector_table_of_another_dimension_names_both_and_the_fix(tmp_path: Path) -> None:
    store = Store.open(tmp_path / ".groove.db")
    try:
        store.ensure_vec_table(8)
        with pytest.raises(ModelError) as caught:
            check_model(store, FakeEmbedder(16), tmp_path)
    finally:
        store.close()
    assert str(caught.value) == (
        "vec_chunks declared float[8] but runtime dim is 16. Run index with --force to rebuild."
    )


# ----------------------------------------------------------------------------------- R5.22


class ReverseReranker(Reranker):
    id = "reverse"

    def score(self, query: str, texts: list[str]) -> list[float]:  # type: ignore[override]
        return [float(len(texts) - i) for i in range(len(texts))][::-1]


def _digest(db: Path) -> object:
    store = Store.open(db, create=False)
    try:
        return store.corpus_digest()
    finally:
        store.close()


def test_reranking_needs_no_reindex(tmp_path: Path) -> None:
    """An index built with no reranker is searched with one, and without it again: no re-index,
    no refusal, the index's rows untouched."""
    kb = write_kb(tmp_path / "kb", {f"n{i}.md": f"# Note {i}\n\nfruit salad note {i}\n" for i in range(4)})
    built = make_service(kb)
    try:
        built.rebuild()
    finally:
        built.close()
    db = db_path_for(kb)
    before = _digest(db)
    served = make_service(kb, rerankers={"reverse": ReverseReranker()})
    try:
        plain = served.search(SearchRequest("fruit salad", limit=4))
        reranked = served.search(SearchRequest("fruit salad", limit=4, rerank=True))
        again = served.search(SearchRequest("fruit salad", limit=4))
    finally:
        served.close()
    assert len(plain.results) == 4
    assert [h.path for h in reranked.results] == [h.path for h in plain.results][::-1]
    assert again == plain
    assert _digest(db) == before


# ----------------------------------------------------------------------------------- R0.16


def test_the_wording_an_index_run_writes_to_stderr_is_ascii(tmp_path: Path) -> None:
    """User data (here the Japanese file names) is printed as it is; everything else is ASCII."""
    names = ["空.md", "壊れ.md", "メモ.md", "移動前.md"]
    kb = write_kb(
        tmp_path / "kb",
        {
            names[0]: "",
            names[1]: b"# Bad\n\n\xff\xfe not utf-8\n",
            names[2]: "---\ntitle: [\n---\n# M\n\nbody text\n",
        },
    )
    (kb / names[3]).write_text("# Moved\n\nmoved text here\n", encoding="utf-8")
    lines: list[str] = []
    service = make_service(kb, log=lines.append)
    try:
        service.rebuild()
        (kb / names[3]).rename(kb / "移動後.md")
        service.rebuild()
    finally:
        service.close()
    text = "\n".join(lines)
    for name in [*names, "移動後.md"]:
        text = text.replace(name, "")
    assert "Skipping" in text and "renamed" in text  # the run did speak
    assert text.isascii(), [line for line in text.splitlines() if not line.isascii()]
