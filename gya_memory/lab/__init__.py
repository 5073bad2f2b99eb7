"""Measuring (测量): the labelled sets, thresholds, evaluation, and plots. Not part of the
library: nothing in the library imports it (tests/test_layers.py).

- ``labelled``            the labelled bilingual set (memories, queries, gold answers)
- ``scoring``             acceptance and rejection at a threshold; choosing a threshold
- ``calibration``         choosing a threshold per embedder (``python -m gya_memory.lab.calibration``)
- ``calibration_report``  what a calibration run reports
- ``scenarios``           the evaluation and acceptance sets
- ``evaluation``          the evaluation on unseen scenarios (``python -m gya_memory.lab.evaluation``)
- ``acceptance``          the article's acceptance check, five conditions (``python -m gya_memory.lab.acceptance``)
- ``gate_features``       scores tried for the gate
- ``experiments``         the placement experiment
- ``plots``               score bars, heatmaps, distributions (with a CJK font)
- ``agent_levers``        the answer path's levers, measured and kept off: a draft answer
                          ranks the candidates, a direct wording, the reader ranks advice,
                          "changed since" in the gate
- ``writing_levers``      the write path's: the model or a rule decides updates, a second look
- ``fusion``              the min-max blend for hybrid search (not the default fusion)
"""

from __future__ import annotations

from gya_memory.base.lazy import lazy_names

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "calibrate": "gya_memory.lab.calibration",
    "load_labelled": "gya_memory.lab.labelled",
    "rates_at": "gya_memory.lab.scoring",
    "score_bars": "gya_memory.lab.plots",
    "score_heatmap": "gya_memory.lab.plots",
    "score_distributions": "gya_memory.lab.plots",
    "Scenario": "gya_memory.lab.scenarios",
    "ScenarioMemory": "gya_memory.lab.scenarios",
    "load_scenarios": "gya_memory.lab.scenarios",
    "store_scenarios": "gya_memory.lab.scenarios",
    "load_acceptance": "gya_memory.lab.scenarios",
    "retrieval_rows": "gya_memory.lab.evaluation",
    "retrieval_table": "gya_memory.lab.evaluation",
    "key_terms": "gya_memory.lab.experiments",
    "placement_trials": "gya_memory.lab.experiments",
    "used_memory": "gya_memory.lab.experiments",
    "outcome": "gya_memory.lab.acceptance",
    "question_for": "gya_memory.lab.acceptance",
    "wanted": "gya_memory.lab.acceptance",
    "LabAgent": "gya_memory.lab.agent_levers",
    "ReaderGate": "gya_memory.lab.agent_levers",
    "ChangedGate": "gya_memory.lab.agent_levers",
    "by_model": "gya_memory.lab.writing_levers",
    "by_rule": "gya_memory.lab.writing_levers",
    "replaced_by": "gya_memory.lab.writing_levers",
    "shared_keys": "gya_memory.lab.writing_levers",
    "compare": "gya_memory.lab.writing_levers",
    "pick": "gya_memory.lab.writing_levers",
    "MinMaxFusion": "gya_memory.lab.fusion",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
