"""The notebooks' kits (教学工具): display helpers, the article's example data, the
exercises' self-checks. Not part of the library: nothing in the library imports it
(tests/test_layers.py).

- ``display``     quote, table, wrap, show; the CJK font for plots
- ``examples``    the article's example data, in Chinese and English; its procedural example
- ``episodic_kit`` notebook 03's restart check (a fresh process reads the file) and facts as a table
- ``exercises/``  the notebooks' self-checks (``check.exercise_03_1(answer)``)

Notebook 08 breaks things on purpose with the fault kit (:mod:`gya_memory.faults`, also apart
from the library); the names it uses are listed here too, so the series imports from one
teaching package (each name still lives in the module named beside it).
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names
from gya_memory.faults import FAULT_KIT

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "quote": "gya_memory.base.text",
    "table": "gya_memory.teaching.display",
    "wrap": "gya_memory.teaching.display",
    "show": "gya_memory.teaching.display",
    "shorten": "gya_memory.teaching.display",
    "use_cjk_font": "gya_memory.teaching.display",
    "USER_ZH": "gya_memory.teaching.examples",
    "USER_EN": "gya_memory.teaching.examples",
    "SESSION_A": "gya_memory.teaching.examples",
    "FACTS_ZH": "gya_memory.teaching.examples",
    "FACTS_EN": "gya_memory.teaching.examples",
    "DIET_QUESTION_ZH": "gya_memory.teaching.examples",
    "DIET_QUESTION_EN": "gya_memory.teaching.examples",
    "notebook_clock": "gya_memory.teaching.examples",
    "DIETARY_ADVICE": "gya_memory.teaching.examples",
    "dietary_advice": "gya_memory.teaching.examples",
    "read_in_fresh_process": "gya_memory.teaching.episodic_kit",  # notebook 03's restart check
    "as_dataframe": "gya_memory.teaching.episodic_kit",
    **FAULT_KIT,  # notebook 08's fault kit (gya_memory.faults)
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
