"""``[index].database_url`` and ``GROOVE_DATABASE_URL`` (issue 22): validation, the trust rule, the
backend chosen by scheme, and a password that is never shown."""

from __future__ import annotations

import textwrap

import pytest

from grooveseek.app import bind_store
from grooveseek.config import load_config
from grooveseek.errors import ConfigError, PluginLoadError
from grooveseek.store.backend import StoreTarget, bind, bound, redact_url, scrub
from tests.unit.config_kit import config_error as _error
from tests.unit.config_kit import load_text as _load

SECRET = "s3cr3t-pw"


def test_a_trusted_value_is_kept_and_not_in_the_config_repr(tmp_path):
    url = f"postgresql://groove:{SECRET}@db.example:5432/groove"
    loaded = _load(tmp_path, f'[index]\ndatabase_url = "{url}"\n')
    assert loaded.config.index.database_url == url
    assert SECRET not in repr(loaded.config)
    assert _load(tmp_path, "[index]\n").config.index.database_url is None


@pytest.mark.parametrize("value", ["", "   ", f"groove:{SECRET}@db.example"])
def test_a_value_that_is_not_a_url_is_refused_without_its_password(tmp_path, value):
    message = _error(tmp_path, f'[index]\ndatabase_url = "{value}"\n')
    assert "[index].database_url must" in message and "remove the key" in message
    assert SECRET not in message


def test_a_non_string_is_an_error_naming_the_key(tmp_path):
    assert "[index].database_url: expected a string" in _error(tmp_path, "[index]\ndatabase_url = 5\n")


def test_an_untrusted_file_cannot_send_the_index_to_a_server(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "proj"
    (project / "kb").mkdir(parents=True)
    (project / "groove.toml").write_text(
        textwrap.dedent('kb_path = "kb"\n[index]\ndatabase_url = "postgresql://evil.example/x"\n'),
        encoding="utf-8",
    )
    env = {"HOME": str(home), "GROOVE_CONFIG_HOME": str(tmp_path / "cfghome")}
    loaded = load_config(cwd=project, env=env)
    assert loaded.trusted is False and loaded.config.index.database_url is None
    [warning] = [w for w in loaded.warnings if "[index].database_url" in w]
    assert "stays in the local file" in warning


def test_redaction_drops_every_password():
    url = f"postgresql://ann:{SECRET}@db.example:6543/kb?sslmode=require&password={SECRET}"
    shown = redact_url(url)
    assert SECRET not in shown
    assert shown == "postgresql://ann@db.example:6543/kb?sslmode=require"
    assert SECRET not in repr(StoreTarget(url, tmp := __import__("pathlib").Path("/k"), tmp))
    assert scrub(f"failed for {url}: password {SECRET} rejected", url).count(SECRET) == 0


def test_the_environment_binds_and_an_unknown_scheme_names_the_fix(tmp_path, monkeypatch):
    loaded = _load(tmp_path, "[index]\n")
    db = tmp_path / ".groove.db"
    monkeypatch.setenv("GROOVE_DATABASE_URL", f"mysql://root:{SECRET}@localhost/x")
    with pytest.raises(PluginLoadError) as err:
        bind_store(loaded, tmp_path / "kb", db)
    assert "GROOVE_DATABASE_URL" in str(err.value) and "mysql://" in str(err.value)
    assert SECRET not in str(err.value)
    monkeypatch.setenv("GROOVE_DATABASE_URL", "not a url")
    with pytest.raises(ConfigError, match="GROOVE_DATABASE_URL must be a URL"):
        bind_store(loaded, tmp_path / "kb", db)
    monkeypatch.setenv("GROOVE_DATABASE_URL", f"postgresql://ann:{SECRET}@127.0.0.1:1/x")
    bind_store(loaded, tmp_path / "kb", db)
    try:
        backend, target = bound(db)  # type: ignore[misc]
        assert "postgresql" in backend.schemes and target.kb == (tmp_path / "kb").resolve()
    finally:
        bind(db, None)
    monkeypatch.delenv("GROOVE_DATABASE_URL")
    bind_store(loaded, tmp_path / "kb", db)
    assert bound(db) is None
