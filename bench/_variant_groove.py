#!/usr/bin/env python3
"""``groove`` with plugin settings changed for one bench run (``bench/index_cost.py --options``).

    GROOVE_BENCH_VARIANT='{"minilm_threads": 1, "use_threads": 1, "minilm_batch": 16}' \\
        .venv/bin/python bench/_variant_groove.py --config ... index ...

Sets, in this process only, the ONNX intra-op threads of the in-process minilm session
(``minilm_threads``), the BLAS threads of the in-process USE model (``use_threads``) and the texts
per minilm call (``minilm_batch``, which worker processes inherit through the model spec), then
runs the GrooveSeek CLI unchanged. A bench tool: the shipped defaults live in the plugins.
"""

from __future__ import annotations

import functools
import json
import os
import sys


def apply(knobs: dict[str, int]) -> None:
    import attrs
    import groove_fastembed.embedder as fe
    import groove_use.embedder as ue
    from groove_fastembed.models import MODELS

    if "use_threads" in knobs:
        ue.BLAS_THREADS = int(knobs["use_threads"])
    if "minilm_batch" in knobs:
        spec = MODELS["minilm-l6-int8"]
        MODELS["minilm-l6-int8"] = attrs.evolve(spec, batch_size=int(knobs["minilm_batch"]))
    if "minilm_threads" in knobs:
        original = fe.load_text_embedding
        threads = int(knobs["minilm_threads"])

        @functools.wraps(original)
        def with_threads(spec, cache_dir, given, *args, **kwargs):  # type: ignore[no-untyped-def]
            return original(spec, cache_dir, threads if given is None else given, *args, **kwargs)

        fe.load_text_embedding = with_threads


def main() -> int:
    apply(json.loads(os.environ.get("GROOVE_BENCH_VARIANT", "{}")))
    from grooveseek.cli import main as cli_main

    sys.argv[0] = "groove"
    cli_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
