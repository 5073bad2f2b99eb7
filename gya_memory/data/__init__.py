"""Data files shipped with the package (read with :mod:`importlib.resources`).

- ``labelled_memories.json``: the labelled bilingual retrieval set behind
  :mod:`gya_memory.lab.calibration` (memories per user, queries with their gold memories).
"""
