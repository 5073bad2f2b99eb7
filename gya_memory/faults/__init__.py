"""Breaking things on purpose (故障注入): fakes, crashes, dead services, attacks. Not part of
the library: nothing in the library imports it (tests/test_layers.py).

- ``fakes``           the fakes (a hash embedder, a fake Ollama) and the crash injector
- ``failures``        notebook 08's failure paths, reproducible
- ``trials``          kill -9 a writer at random moments (``python -m gya_memory.faults.trials``)
- ``checks``          what a restart finds after each kill
- ``planted``         planted injections: what reaches the model when a memory is an attack
- ``injection_sets``  the injection corpora: how well the scanner does, measured
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names

# public name -> the module that defines it (imported on first use); notebook 08 reads these
# names through gya_memory.teaching, which lists this table too
FAULT_KIT: dict[str, str] = {
    "FakeOllama": "gya_memory.faults.fakes",
    "HashEmbedder": "gya_memory.faults.fakes",
    "closed_port_url": "gya_memory.faults.fakes",
    "hide_port": "gya_memory.faults.fakes",
    "crash_mid_transaction": "gya_memory.faults.fakes",
    "HeldFolder": "gya_memory.faults.failures",
    "collections_table": "gya_memory.faults.failures",
    "store_in_new_process": "gya_memory.faults.failures",
    "load_planted": "gya_memory.faults.planted",
    "evaluate_corpus": "gya_memory.faults.injection_sets",
}

_EXPORTS = dict(FAULT_KIT)
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
