"""``[index].embed_workers`` (issue 16): its validation, its trust rule, and what unset means."""

from __future__ import annotations

import textwrap

import pytest

from grooveseek.config import load_config
from grooveseek.index import workers
from tests.unit.config_kit import config_error as _error
from tests.unit.config_kit import load_text as _load


def test_a_trusted_value_is_kept(tmp_path):
    assert _load(tmp_path, "[index]\nembed_workers = 3\n").config.index.embed_workers == 3
    assert _load(tmp_path, "[index]\n").config.index.embed_workers is None


@pytest.mark.parametrize("value", ["0", "-2", "65"])
def test_out_of_range_is_an_error_naming_the_key_and_the_fix(tmp_path, value):
    message = _error(tmp_path, f"[index]\nembed_workers = {value}\n")
    assert f"[index].embed_workers must be in 1..=64, got {value}" in message
    assert "use 1 to embed in the indexing process" in message


@pytest.mark.parametrize(
    ("value", "kind"), [("true", "boolean true"), ('"2"', 'string "2"'), ("2.5", "float 2.5")]
)
def test_a_non_integer_is_an_error(tmp_path, value, kind):
    assert f"[index].embed_workers: expected an integer, got {kind}" in _error(
        tmp_path, f"[index]\nembed_workers = {value}\n"
    )


def test_an_untrusted_file_cannot_choose_the_worker_count(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "proj"
    (project / "kb").mkdir(parents=True)
    (project / "groove.toml").write_text(
        textwrap.dedent('kb_path = "kb"\n[index]\nembed_workers = 64\n'), encoding="utf-8"
    )
    env = {"HOME": str(home), "GROOVE_CONFIG_HOME": str(tmp_path / "cfghome")}
    loaded = load_config(cwd=project, env=env)
    assert loaded.trusted is False and loaded.config.index.embed_workers is None
    [warning] = [w for w in loaded.warnings if "[index].embed_workers" in w]
    assert "the indexing process embeds" in warning


def test_unset_means_the_indexing_process_whatever_the_cores(monkeypatch):
    # issue 26: a worker costs a copy of the model; the default must keep the tree's peak RSS at
    # most 1.5x the in-process path's, so unset is no worker at all.
    assert workers.worker_count(1) == 1 and workers.worker_count(7) == 7
    for cores in (1, 2, 32):
        monkeypatch.setattr(workers, "usable_cores", lambda cores=cores: cores)
        assert workers.worker_count(None) == 1
