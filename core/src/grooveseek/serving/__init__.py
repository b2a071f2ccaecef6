"""The parts ``KBService`` (``grooveseek/service.py``) is built from, one concern per module.

``gate.py``: the FIFO model gate and the core count; ``loader.py``: the background model load of
``serve``; ``shared.py``: the process-wide embedder and reranker wrappers that pass the gate;
``readpool.py``: pooled read connections; ``errors.py``: the service's own errors.
"""
