"""Procedural memory (程序记忆, layer 4): recipes you find and call, per user.

- ``memory``   :class:`~gya_memory.procedural.memory.ProceduralMemory` and :class:`~gya_memory.procedural.memory.Procedure`
- ``records``  the procedures file: its lock, its records, its damage checks

The article's example procedure lives with the notebooks (:mod:`gya_memory.teaching.examples`).
"""
