"""Where models are cached: the FASTEMBED_CACHE_DIR / config / OS-default rules (SPEC R0.9, R0.10, R1.12).

The result is always an absolute path. GrooveSeek never loads or downloads a model relative to the
working directory, so every branch that cannot produce an absolute directory raises ``ConfigError``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath

from grooveseek.errors import ConfigError

ENV_VAR = "FASTEMBED_CACHE_DIR"
_FIX = f"set {ENV_VAR} to an absolute directory"


def _is_abs(value: str, platform: str) -> bool:
    # Judge by the target platform's rules, not the host's, so the function is testable anywhere.
    pure = PureWindowsPath(value) if platform == "win32" else PurePosixPath(value)
    return pure.is_absolute()


def resolve_cache_dir(
    config_value: str | None, env: Mapping[str, str], *, platform: str = sys.platform
) -> Path:
    """Return the model cache directory (not created here).

    Precedence: a non-empty ``FASTEMBED_CACHE_DIR`` (must be absolute, R0.9) beats the trusted
    config's ``fastembed_cache_dir`` (R1.12), which beats ``<OS cache dir>/fastembed`` (R0.10).
    An empty environment value counts as unset.
    """
    env_value = env.get(ENV_VAR, "")
    if env_value:
        if not _is_abs(env_value, platform):
            raise ConfigError(f'{ENV_VAR} must be an absolute path (got "{env_value}")')
        return Path(env_value)
    if config_value:
        # The config loader already made it absolute (R1.3); checked again because a relative
        # path here would silently put a 2 GB model into whatever directory the command ran in.
        if not _is_abs(config_value, platform):
            raise ConfigError(f'fastembed_cache_dir must be an absolute path (got "{config_value}")')
        return Path(config_value)
    return default_cache_root(env, platform=platform) / "fastembed"


def default_cache_root(env: Mapping[str, str], *, platform: str = sys.platform) -> Path:
    """The per-user OS cache directory (R0.10); ConfigError when none is absolute."""
    if platform == "win32":
        local = env.get("LOCALAPPDATA", "")
        if local and _is_abs(local, platform):
            return Path(local)
        raise ConfigError(
            f"cannot determine the model cache directory: %LOCALAPPDATA% is not an absolute path "
            f'(got "{local}"); {_FIX}'
        )
    if platform != "darwin":
        # XDG base-directory spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
        xdg = env.get("XDG_CACHE_HOME", "")
        if xdg and _is_abs(xdg, platform):
            return Path(xdg)
    home = _home(env)
    if not home or not _is_abs(home, platform):
        raise ConfigError(
            "cannot determine the model cache directory: the home directory is not an absolute path "
            f'(got "{home}"); {_FIX}'
        )
    return Path(home) / ("Library/Caches" if platform == "darwin" else ".cache")


def _home(env: Mapping[str, str]) -> str:
    """$HOME, else the password database (as ``os.path.expanduser`` does), else ""."""
    home = env.get("HOME", "")
    if home:
        return home
    try:
        import pwd  # POSIX only; absent on Windows, where LOCALAPPDATA is used instead

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return ""
