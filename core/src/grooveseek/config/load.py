"""Finding and loading groove.toml: discovery order (R1.7, R1.8), the load log line (R1.9), and
turning the chosen file into the effective config (shape, values, trust, warnings).

This is the entry point the CLI calls once per process, before anything opens the index (R1.6).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from .model import GrooveConfig, LoadedConfig
from .parse import parse_file
from .trust import TrustContext, config_home, home_dir, is_under, restrict
from .validate import check_values, expand_user, size_warning

CONFIG_NAME = "groove.toml"
GIT_WALK_LIMIT = 20  # the working directory and 19 ancestors (R1.7)
_LAUNCHER_NAMES = ("groove", "groove.exe")


def _explicit_path(explicit: str, cwd: Path, home: Path) -> Path:
    if not explicit:
        # An empty value joins to the working directory; say what is wrong instead.
        raise ConfigError(
            "--config is empty; name a groove.toml file, or leave --config out to use discovery"
        )
    joined = Path(os.path.join(cwd, expand_user(explicit, home)))
    # Resolve the directory part as the OS does (symlinks first, then ".."), never as text; the
    # file name itself is kept, so a symlinked groove.toml still counts as living where it was named.
    if joined.name in ("", ".."):
        path = Path(os.path.realpath(joined))
    else:
        path = Path(os.path.realpath(joined.parent)) / joined.name
    if not path.exists():
        # R1.8: never fall back to discovery, or a typo would silently load another file.
        raise ConfigError(f"--config path not found: {path}")
    if not path.is_file():
        raise ConfigError(f"--config path is not a file: {path}; name a groove.toml file")
    return path


def _git_root(cwd: Path) -> Path | None:
    directory = cwd
    for _ in range(GIT_WALK_LIMIT):
        # .git is a file in worktrees and submodules, so existence is the test, not is_dir().
        if os.path.lexists(directory / ".git"):
            return directory
        if directory.parent == directory:
            return None
        directory = directory.parent
    return None


def discover(
    explicit: str | None, cwd: Path, launcher_dir: Path | None, home: Path
) -> tuple[str, Path | None]:
    """Pick the one config file to use (R1.7); files are never merged.

    Returns:
        The source label (``explicit``, ``cwd``, ``git-root``, ``alongside-binary`` or ``none``) and
        the absolute path of the file, or None for ``none``.

    Raises:
        ConfigError: ``--config`` names a path that does not exist.
    """
    if explicit is not None:
        return "explicit", _explicit_path(explicit, cwd, home)
    here = cwd / CONFIG_NAME
    if here.is_file():
        return "cwd", here
    root = _git_root(cwd)
    if root is not None and (root / CONFIG_NAME).is_file():
        return "git-root", root / CONFIG_NAME
    if launcher_dir is not None and (launcher_dir / CONFIG_NAME).is_file():
        return "alongside-binary", launcher_dir / CONFIG_NAME
    return "none", None


def _kind_of(path: Path) -> str | None:
    """What is at ``path`` when it is there but is not a readable regular file; None otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        if path.is_file():
            return None  # a link to a regular file is used like one
        return "a dangling symbolic link" if not path.exists() else "a symbolic link to something not a file"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or other special file"


def not_a_file_warnings(cwd: Path, launcher_dir: Path | None) -> list[str]:
    """A ``groove.toml`` that discovery skips because it is no regular file deserves a word (R1.7):
    the user put something by that name there and expects it to count."""
    candidates = [cwd / CONFIG_NAME]
    root = _git_root(cwd)
    if root is not None:
        candidates.append(root / CONFIG_NAME)
    if launcher_dir is not None:
        candidates.append(launcher_dir / CONFIG_NAME)
    warnings = []
    for candidate in dict.fromkeys(candidates):
        kind = _kind_of(candidate)
        if kind is not None:
            warnings.append(
                f"{candidate} is {kind}, not a config file; it is ignored. Replace it with a "
                "regular file or remove it"
            )
    return warnings


def load_config(
    explicit: str | None = None,
    *,
    cwd: Path | None = None,
    launcher_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Discover, parse, validate and trust-restrict the configuration.

    Args:
        explicit: The ``--config`` value, if given (``~`` expands; relative to ``cwd``).
        cwd: The working directory; defaults to the process's.
        launcher_dir: The directory of the ``groove`` launcher (``launcher_dir_from_argv``), or
            None to skip priority 4 (as under ``python -m grooveseek``).
        env: The environment; defaults to ``os.environ``. Read for ``HOME``,
            ``GROOVE_CONFIG_HOME`` and the platform config directory variables.

    Returns:
        The effective config, where it came from, its trust, and every warning to print.

    Raises:
        ConfigError: a missing ``--config`` file, unreadable or invalid TOML, or an invalid value.
    """
    env = os.environ if env is None else env
    cwd = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
    home = home_dir(env)
    root, warnings = config_home(env, home)
    source, path = discover(explicit, cwd, launcher_dir, home)
    if explicit is None:
        warnings.extend(not_a_file_warnings(cwd, launcher_dir))
    if path is None:
        return LoadedConfig(
            config=GrooveConfig(), source=source, path=None, trusted=True, warnings=tuple(warnings)
        )
    parsed = parse_file(path)
    config, value_warnings = check_values(parsed, home)
    warnings.extend(value_warnings)
    trusted = source not in ("cwd", "git-root") or is_under(path, root)
    if not trusted:
        config, trust_warnings = restrict(config, parsed.raw, TrustContext(path, source, home, root))
        warnings.extend(trust_warnings)
    big = size_warning(config)
    if big is not None:
        warnings.append(big)
    return LoadedConfig(
        config=config, source=source, path=str(path), trusted=trusted, warnings=tuple(warnings)
    )


def describe(loaded: LoadedConfig) -> str:
    """The R1.9 line, logged once at DEBUG on stderr by the caller (shown by ``-v``)."""
    trust = "trusted" if loaded.trusted else "untrusted"
    return f"grooveseek.config: loaded config source={loaded.source} path={loaded.path or '-'} trust={trust}"


def launcher_dir_from_argv(argv0: str) -> Path | None:
    """The resolved directory of the ``groove`` console script, for discovery priority 4.

    Args:
        argv0: ``sys.argv[0]`` as the process received it.

    Returns:
        The directory holding the launcher (symlinks resolved), or None when ``argv0`` is not a
        ``groove`` launcher (``python -m grooveseek`` gives ``.../__main__.py``) or cannot be found.
    """
    if not argv0 or Path(argv0).name.lower() not in _LAUNCHER_NAMES:
        return None
    # A bare name means the shell found it on PATH; look it up the same way.
    located = argv0 if os.sep in argv0 or (os.altsep and os.altsep in argv0) else shutil.which(argv0)
    if located is None or not os.path.exists(located):
        return None
    return Path(os.path.realpath(located)).parent


def load_checked_config(config_path: str | None) -> LoadedConfig:
    """Discover and load groove.toml, log the choice (R1.9, at DEBUG since issue 24: ``-v`` or
    ``GROOVE_LOG=debug`` shows it) and print its warnings once (warnings always show)."""
    import logging
    import sys

    from ..console import echo_err

    loaded = load_config(config_path, launcher_dir=launcher_dir_from_argv(sys.argv[0]))
    logging.getLogger("grooveseek.config").debug(describe(loaded).removeprefix("grooveseek.config: "))
    for warning in loaded.warnings:
        echo_err(f"warning: {warning}")
    return loaded
