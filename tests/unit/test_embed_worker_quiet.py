"""An embedding worker whose pipe breaks ends quietly (issue 21): multiprocessing printed the
child's traceback raw on the run's stderr, naming no file, when the indexing process had already
stopped the pool or died. A real spawned worker, the fake embedder."""

from __future__ import annotations

import functools
import multiprocessing

from grooveseek.index import workers
from grooveseek.testing import FakeEmbedder


def test_a_worker_whose_results_pipe_is_gone_exits_1_without_a_traceback(capfd) -> None:
    ctx = multiprocessing.get_context("spawn")
    jobs = ctx.Queue()
    reader, writer = ctx.Pipe(duplex=False)
    reader.close()  # nobody will read: the worker's first send ("ready") breaks the pipe
    proc = ctx.Process(target=workers._work, args=(functools.partial(FakeEmbedder, 8), jobs, writer))
    proc.start()
    writer.close()
    proc.join(timeout=120)
    assert proc.exitcode == 1
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
