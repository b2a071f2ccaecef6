"""A third party adds a language with one pip package and one config line (R3.9, writing-a-grammar.md).

The test does what the guide tells an author to do: copy ``grammars/_template``, fill in Go
(``tree-sitter-go``), build the package with pip, install it, enable ``go`` in a trusted config,
and run the real ``groove`` executable. Nothing of GrooveSeek is edited. The package goes into a
directory of its own on PYTHONPATH, so the shared test environment is left as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "grammars" / "_template"
GROOVE = Path(sys.executable).parent / "groove"

GO_SOURCE = """package retry

import "time"

// Backoff computes how long to wait before retry number attempt:
// it doubles from the base delay and stops growing at the ceiling.
func Backoff(attempt int, base, ceiling time.Duration) time.Duration {
\tdelay := base
\tfor i := 0; i < attempt && delay < ceiling; i++ {
\t\tdelay *= 2
\t}
\tif delay > ceiling {
\t\treturn ceiling
\t}
\treturn delay
}

// Policy says how often an operation is retried.
type Policy struct {
\tAttempts int
\tBase     time.Duration
}
"""


def _fill_template(dest: Path) -> Path:
    """The guide's step 1-2: copy the template and replace mylang/myext."""
    package = dest / "groove-grammar-go"
    shutil.copytree(TEMPLATE, package)
    (package / "src" / "groove_grammar_mylang").rename(package / "src" / "groove_grammar_go")
    (package / "tests" / "sample.myext").write_text(GO_SOURCE, encoding="utf-8")
    (package / "tests" / "sample.myext").rename(package / "tests" / "sample.go")
    for path in package.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("mylang", "go").replace("myext", "go"), encoding="utf-8")
    return package


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_a_go_grammar_package_built_and_installed_here_indexes_go_files(tmp_path):
    package = _fill_template(tmp_path)
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(site), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    # Step 3: build and install it (offline: tree-sitter-go and hatchling are already installed).
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    built = _run([*pip, "--target", str(site), str(package)], env, tmp_path)
    assert built.returncode == 0, built.stderr
    assert (site / "groove_grammar_go" / "grammar.py").exists()

    # The package's own contract test, as its author would run it.
    own = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(package / "tests")], env, package
    )
    assert own.returncode == 0, own.stdout + own.stderr

    # Step 4: one config line.
    kb = tmp_path / "kb"
    (kb / "retry").mkdir(parents=True)
    (kb / "retry" / "backoff.go").write_text(GO_SOURCE, encoding="utf-8")
    (kb / "README.md").write_text("# Retry\n\nNotes about the retry package and its backoff policy.\n")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "go"]\n')

    plugins = _run([str(GROOVE), "--config", str(config), "plugins", "--format", "json"], env, tmp_path)
    assert plugins.returncode == 0, plugins.stderr
    rows = {(r["group"], r["id"]): r for r in json.loads(plugins.stdout)["plugins"]}
    assert rows[("grammars", "go")]["distribution"] == "groove-grammar-go"
    assert rows[("grammars", "go")]["enabled"] is True

    indexed = _run([str(GROOVE), "--config", str(config), "index"], env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert "extensions: [go, md]" in indexed.stderr
    assert "retry/backoff.go" in indexed.stderr

    found = _run(
        [
            str(GROOVE),
            "--config",
            str(config),
            "search",
            "where is the retry backoff computed",
            "--tag-any",
            "code",
        ],
        env,
        tmp_path,
    )
    assert found.returncode == 0, found.stderr
    top = json.loads(found.stdout)["results"][0]
    assert (top["path"], top["heading"], top["symbol_kind"]) == ("retry/backoff.go", "Backoff", "function")
    assert (top["start_line"], top["end_line"]) == (5, 16)  # the doc comment is part of the chunk
    assert top["tags"] == ["code", "lang:go"]

    # Without the package on the path, the same config names the missing id instead of ignoring it.
    bare = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    missing = _run([str(GROOVE), "--config", str(config), "index"], bare, tmp_path)
    assert missing.returncode == 1
    assert 'unknown id "go"' in missing.stderr
