"""Hostile config files (issue 9): deep nesting, a BOM, a groove.toml that is no regular file.

Each gets a clear message or warning naming the file instead of a traceback or silence.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from grooveseek.config import load_config
from grooveseek.errors import ConfigError
from tests.unit.config_kit import env_for

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and symlinks")


def test_a_config_nested_a_thousand_levels_deep_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "groove.toml"
    path.write_text("x = " + "[" * 1000 + "]" * 1000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(str(path), cwd=tmp_path, env=env_for(tmp_path))
    message = str(info.value)
    assert str(path) in message and "nested too deeply" in message and "flatten" in message


def test_a_number_too_long_for_python_is_a_config_error(tmp_path: Path) -> None:
    # Found by the fuzzing harness (python3 dev.py fuzz): tomllib raised a bare ValueError.
    path = tmp_path / "groove.toml"
    path.write_text("model = " + "9" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(str(path), cwd=tmp_path, env=env_for(tmp_path))
    assert str(path) in str(info.value) and "too many digits" in str(info.value)


def test_a_utf8_bom_at_the_start_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "groove.toml"
    path.write_bytes(b'\xef\xbb\xbfexclude_headings = ["Draft"]\n')
    loaded = load_config(str(path), cwd=tmp_path, env=env_for(tmp_path))
    assert list(loaded.config.exclude_headings) == ["Draft"]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


def _dangling(path: Path) -> None:
    os.symlink(path.parent / "nowhere.toml", path)


@unix_only
@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (Path.mkdir, "a directory"),
        (_fifo, "a named pipe (FIFO)"),
        (_socket, "a socket"),
        (_dangling, "a dangling symbolic link"),
    ],
)
def test_a_groove_toml_that_is_no_regular_file_is_skipped_with_a_warning(tmp_path: Path, make, kind) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    if len(str(cwd / "groove.toml")) > 100 and make is _socket:
        pytest.skip("AF_UNIX paths are limited to ~104 bytes")
    make(cwd / "groove.toml")
    loaded = load_config(None, cwd=cwd, env=env_for(tmp_path))
    assert loaded.source == "none"
    expected = f"{cwd / 'groove.toml'} is {kind}, not a config file; it is ignored"
    assert any(w.startswith(expected) for w in loaded.warnings), loaded.warnings
