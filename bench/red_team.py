"""The hostile-input figures of issue 9: the generated corpus indexed with real notes, counted.

    .venv/bin/python bench/red_team.py

Builds ``tests/hostile_corpus.py``'s corpus beside a copy of the npm-docs notes in
``bench/work/red-team/``, runs ``groove index --model minilm-l6-int8`` on it (a real process), then
reads every hostile file back the way ``get_document`` does, and prints: inputs tried, how many were
indexed, named in a warning, lost (neither), tracebacks printed, the exit code, and read-backs
answered / refused / failed. The same checks, as assertions, are tests/integration/test_hostile_corpus.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grooveseek.config import GrooveConfig  # noqa: E402
from grooveseek.index.guard import db_path_for  # noqa: E402
from grooveseek.mcp.docread import DocumentRefused, read_document  # noqa: E402
from grooveseek.names import shown  # noqa: E402
from grooveseek.plugins import PluginSelection, load_plugins  # noqa: E402
from grooveseek.registry import Registry  # noqa: E402
from grooveseek.store.store import Store  # noqa: E402
from tests.hostile_corpus import build  # noqa: E402

WORK = ROOT / "bench" / "work" / "red-team"
GROOVE = str(Path(sys.executable).with_name("groove"))


def main() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    kb = WORK / "kb"
    shutil.copytree(ROOT / "tests" / "fixtures" / "corpora" / "npm-docs", kb / "real")
    real = {p.relative_to(kb).as_posix() for p in (kb / "real").rglob("*.md")}
    corpus = build(kb)
    config = WORK / "groove.toml"
    config.write_text('[parsers]\nenabled = ["md", "txt", "xlsx", "docx", "pptx"]\n', encoding="utf-8")
    env = {**os.environ, "FASTEMBED_CACHE_DIR": str(WORK / "model-cache")}
    cmd = [GROOVE, "index", "--kb-path", str(kb), "--model", "minilm-l6-int8", "--config", str(config)]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, errors="backslashreplace", env=env, check=False
    )
    seconds = time.perf_counter() - start
    store = Store.open(db_path_for(kb), create=False)
    try:
        stored = set(store.documents())
    finally:
        store.close()
    tried = (*corpus.hostile, *corpus.special)
    indexed = [r for r in tried if r in stored]
    warned = [r for r in tried if r not in stored and shown(r) in proc.stderr]
    lost = [r for r in tried if r not in stored and shown(r) not in proc.stderr]
    registry = Registry.build(
        load_plugins(PluginSelection(parsers=("md", "txt", "xlsx", "docx", "pptx"))), GrooveConfig()
    )
    answered = refused = failed = 0
    for rel in tried:
        try:
            read_document(kb, registry, rel, config=GrooveConfig(kb_path=str(kb)))
            answered += 1
        except DocumentRefused:
            refused += 1
        except Exception:  # counted: this is what must never happen
            failed += 1
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"hostile inputs tried: {len(tried)} ({len(corpus.special)} FIFO/socket/hard links)")
    print(f"  indexed: {len(indexed)}   named in a warning: {len(warned)}   lost: {len(lost)}")
    print(f"  real notes indexed: {len(real & stored)} / {len(real)}")
    print(f"  exit code: {proc.returncode}   tracebacks printed: {proc.stderr.count('Traceback')}")
    print(f"  index run: {seconds:.1f} s")
    print(f"read back like get_document: answered {answered}, refused {refused}, failed {failed}")
    if lost:
        print("lost:", ", ".join(shown(r) for r in lost))


if __name__ == "__main__":
    main()
