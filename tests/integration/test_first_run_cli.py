"""A new user's first commands (issue 8), with the real packaged model: no ``--model`` anywhere, the
model follows the index, a named model that differs is refused with the right advice, a failed
first run leaves nothing behind, and an index serves the one folder it was built for. A second
folder in the same parent just works (issue 24): each folder gets its own index under the data
home, nothing is written inside or beside either folder, and an old ``.groove.db`` beside a folder
is still used while it belongs to it."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.config import NEW_INDEX_MODEL
from grooveseek.index.guard import db_path_for

pytestmark = pytest.mark.model

NOTE = "## Setup\n\nInstall the tool with pip and run the indexer over your notes folder.\n"
OTHER = "## Release\n\nThe release checklist: tag, build the wheels, publish the notes.\n"


def groove(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    for name, text in (("notes", NOTE), ("work", OTHER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.md").write_text(text, encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")  # trusted, names nothing
    return tmp_path


def run(home: Path, *args: str):
    return groove("--config", str(home / "empty.toml"), *args)


def index_of(home: Path, kb: str = "notes") -> Path:
    return db_path_for((home / kb).resolve())


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _status(home: Path, kb: str, *extra: str) -> str:
    result = run(home, "status", "--kb-path", str(home / kb), *extra)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_new_index_gets_the_packaged_model_and_every_later_command_follows_it(home: Path):
    first = run(home, "index", "--kb-path", str(home / "notes"), "--quiet")
    assert first.exit_code == 0, first.output
    assert f"Model: {NEW_INDEX_MODEL} (896 dim)" in _status(home, "notes")  # minilm + USE
    found = run(home, "search", "install with pip", "--kb-path", str(home / "notes"))
    assert found.exit_code == 0, found.output
    assert '"path": "a.md"' in found.stdout
    again = run(home, "index", "--kb-path", str(home / "notes"), "--force", "--quiet")
    assert again.exit_code == 0, again.output  # --force keeps the index's own model


def test_a_named_model_that_differs_names_both_and_offers_drop_model_first(home: Path, monkeypatch):
    run(home, "index", "--kb-path", str(home / "notes"), "--quiet")
    cache = home / "cache"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cache))
    refused = run(home, "search", "pip", "--kb-path", str(home / "notes"), "--model", "bge-small-en-v1.5")
    assert refused.exit_code == 1
    err = refused.stderr
    assert f"DB was indexed with: {NEW_INDEX_MODEL} (896 dim)" in err
    assert "Current runtime:     bge-small-en-v1.5 (384 dim), chosen by --model" in err
    assert f"Drop --model to use the index's own model, {NEW_INDEX_MODEL}." in err
    assert str(index_of(home)) in err
    assert "--force" not in err  # bge-small is not in the cache: no advice to throw the index away
    # Once its weights are in the cache, rebuilding with it becomes an offer (after "drop").
    snapshot = cache / "models--Qdrant--bge-small-en-v1.5-onnx-Q" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "model_optimized.onnx").write_bytes(b"weights")
    cached = run(home, "search", "pip", "--kb-path", str(home / "notes"), "--model", "bge-small-en-v1.5")
    assert cached.exit_code == 1
    assert cached.stderr.index("Drop --model") < cached.stderr.index(
        f"groove index --kb-path {home / 'notes'} --force --model bge-small-en-v1.5"
    )


def test_a_config_key_that_differs_is_named_with_its_file(home: Path):
    run(home, "index", "--kb-path", str(home / "notes"), "--quiet")
    config = home / "groove.toml"
    config.write_text('model = "bge-m3"\n', encoding="utf-8")
    refused = groove("--config", str(config), "search", "pip", "--kb-path", str(home / "notes"))
    assert refused.exit_code == 1
    assert f"chosen by model in {config}" in refused.stderr
    assert f"Remove model from {config} to use the index's own model, {NEW_INDEX_MODEL}." in refused.stderr


def test_a_failed_first_run_leaves_no_index_and_a_failed_rebuild_leaves_it_untouched(home: Path, monkeypatch):
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(home / "cache"))  # empty, and HF_HUB_OFFLINE=1
    failed = run(home, "index", "--kb-path", str(home / "notes"), "--model", "bge-small-en-v1.5")
    assert failed.exit_code == 1 and 'could not load embedding model "bge-small-en-v1.5"' in failed.stderr
    assert not index_of(home).exists() and not Path(f"{index_of(home)}-wal").exists()
    assert run(home, "index", "--kb-path", str(home / "notes"), "--quiet").exit_code == 0
    before = _status(home, "notes")
    rebuild = run(home, "index", "--kb-path", str(home / "notes"), "--force", "--model", "bge-small-en-v1.5")
    assert rebuild.exit_code == 1
    assert _status(home, "notes") == before  # same documents, same model
    assert "Documents: 1" in before


def test_a_second_folder_in_the_same_parent_just_works_and_nothing_is_written_beside_either(home: Path):
    notes, work = str(home / "notes"), str(home / "work")
    before = tree(home)
    for kb in (notes, work):
        indexed = run(home, "index", "--kb-path", kb, "--quiet")
        assert indexed.exit_code == 0, indexed.output
    found = run(home, "search", "release checklist", "--kb-path", work, "--format", "text")
    assert found.exit_code == 0 and "release checklist" in found.stdout
    assert "Documents: 1" in _status(home, "notes") and "Documents: 1" in _status(home, "work")
    for kb in (notes, work):
        doctor = run(home, "doctor", "--kb-path", kb)
        assert doctor.exit_code == 0 and "No problems found." in doctor.stdout, doctor.output
    assert index_of(home, "notes") != index_of(home, "work")
    assert index_of(home, "notes").exists() and index_of(home, "work").exists()
    assert tree(home) == before  # the parent and both folders are byte-identical


def test_another_folders_index_named_by_a_flag_is_refused_by_every_command_doctor_too(home: Path):
    notes, work = str(home / "notes"), str(home / "work")
    theirs = str(index_of(home, "notes"))
    assert run(home, "index", "--kb-path", notes, "--quiet").exit_code == 0
    for command in (["index"], ["search", "release"], ["status"], ["doctor"]):
        refused = run(home, *command, "--kb-path", work, "--index-path", theirs)
        assert refused.exit_code in (1, 2), command
        err = " ".join(refused.stderr.split())
        assert f"belongs to the knowledge base folder {notes}, not {work}" in err, command
        assert f"gets its own index ({index_of(home, 'work')})" in err
        assert "Traceback" not in refused.output
    assert "Documents: 1" in _status(home, "notes")  # the first folder's index is intact


def test_an_old_index_beside_the_folder_is_still_used_and_a_sibling_gets_its_own(home: Path):
    old = home / ".groove.db"  # where versions before issue 24 put it
    assert (
        run(home, "index", "--kb-path", str(home / "notes"), "--index-path", str(old), "--quiet").exit_code
        == 0
    )
    assert index_of(home, "notes") == old
    found = run(home, "search", "install with pip", "--kb-path", str(home / "notes"))
    assert found.exit_code == 0 and '"path": "a.md"' in found.stdout
    assert run(home, "index", "--kb-path", str(home / "work"), "--quiet").exit_code == 0
    assert index_of(home, "work") != old and "Documents: 1" in _status(home, "work")
    assert run(home, "doctor", "--kb-path", str(home / "notes")).exit_code == 0


def test_index_path_from_a_trusted_config_resolves_against_the_config_folder(home: Path):
    (home / "cfg").mkdir()
    config = home / "cfg" / "groove.toml"
    config.write_text('kb_path = "../work"\n[index]\npath = "work.groove.db"\n', encoding="utf-8")
    assert groove("--config", str(config), "index", "--quiet").exit_code == 0
    assert (home / "cfg" / "work.groove.db").exists() and not index_of(home, "work").exists()
    status = groove("--config", str(config), "status")
    assert "Documents: 1" in status.stdout


def test_moving_the_folder_and_its_old_index_together_keeps_working(home: Path):
    old = str(home / ".groove.db")
    assert run(home, "index", "--kb-path", str(home / "notes"), "--index-path", old, "--quiet").exit_code == 0
    moved = home / "moved"
    moved.mkdir()
    shutil.move(home / "notes", moved / "notes")
    shutil.move(home / ".groove.db", moved / ".groove.db")
    found = run(home, "search", "pip", "--kb-path", str(moved / "notes"))
    assert found.exit_code == 0, found.output


def test_a_recorded_model_no_plugin_provides_is_named_with_the_rebuild_command(home: Path):
    assert run(home, "index", "--kb-path", str(home / "notes"), "--quiet").exit_code == 0
    conn = apsw.Connection(str(index_of(home)))
    conn.execute("update index_meta set value='acme-embed-v2' where key='embedding_identity'")
    conn.close()
    refused = run(home, "search", "pip", "--kb-path", str(home / "notes"))
    assert refused.exit_code == 1
    err = " ".join(refused.stderr.split())
    assert '"acme-embed-v2", which no installed plugin provides' in err
    assert f"groove index --kb-path {home / 'notes'} --force --model {NEW_INDEX_MODEL}" in err
