"""The payload keys of a semantic memory: the contract between ``semantic``, ``stores``,
``context`` and ``erasure``, written once.

A memory's payload is a JSON object stored next to its vector. The package sets the
reserved keys; everything else is the caller's ``metadata`` (``subject`` and
``session_id`` are the two that context assembly reads).

>>> sorted(RESERVED_KEYS)
['created_at', 'degraded_write', 'text', 'updated_at', 'user_id']
"""

from __future__ import annotations

TEXT = "text"
"""The memory itself, as stored."""
USER_ID = "user_id"
"""Whose memory it is: every query filters on it (a tenant index in Qdrant)."""
CREATED_AT = "created_at"
"""ISO 8601 time of the first write, with its time zone (kept when the text is stored again)."""
UPDATED_AT = "updated_at"
"""ISO 8601 time of the latest write."""
DEGRADED_WRITE = "degraded_write"
"""True while the memory has only a TF-IDF vector (written during an embedding outage)."""

SUBJECT = "subject"
"""Metadata: what the memory is about; two memories of one subject conflict (newest wins)."""
SESSION_ID = "session_id"
"""Metadata: the conversation the memory came from."""

RESERVED_KEYS = frozenset({TEXT, USER_ID, CREATED_AT, UPDATED_AT, DEGRADED_WRITE})
"""Keys the package writes; ``metadata`` may not set them."""
