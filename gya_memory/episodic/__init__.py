"""Episodic memory (情节记忆, layer 2): structured facts in SQLite.

- ``memory``  :class:`~gya_memory.episodic.memory.EpisodicMemory`: facts per user, durable
- ``sqlite``  the SQLite base it shares with the session store: WAL, secure delete, scrubbing
"""
