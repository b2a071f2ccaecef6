"""The size caps of SPEC §2.5 as config values: units, "unlimited", refusals, and the raised-cap warning."""

from __future__ import annotations

import pytest

from tests.unit.config_kit import config_error, load_text

UNLIMITED = 2**63 - 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [('"300 MiB"', 300 * 1_048_576), ('"10 GB"', 10_000_000_000), ("1024", 1024), ('"Unlimited"', UNLIMITED)],
)
def test_size_values(tmp_path, value, expected):
    loaded = load_text(tmp_path, f"[index]\nmax_decompressed_size = {value}\n")
    assert loaded.config.index.max_decompressed_size == expected


def test_raising_a_cap_warns_once_naming_every_raised_key(tmp_path):
    loaded = load_text(
        tmp_path, '[index]\nmax_binary_file_size = "300 MiB"\nmax_decompressed_size = "unlimited"\n'
    )
    raised = [w for w in loaded.warnings if "raised above the 50 MiB default" in w]
    assert len(raised) == 1
    assert "[index].max_binary_file_size, [index].max_decompressed_size" in raised[0]
    assert "PDF extraction still stops after 120 s" in raised[0]


def test_default_or_lowered_caps_do_not_warn(tmp_path):
    loaded = load_text(
        tmp_path, '[index]\nmax_binary_file_size = "50 MiB"\nmax_decompressed_size = "1 MiB"\n'
    )
    assert not [w for w in loaded.warnings if "raised above" in w]


def test_zero_is_refused_with_the_fix(tmp_path):
    message = config_error(tmp_path, "[index]\nmax_binary_file_size = 0\n")
    expected = (
        "[index].max_binary_file_size: 0 is not a size; write a byte count of at least 1, "
        'a size such as "300 MiB", or "unlimited"'
    )
    assert expected in message
