"""The shared base (共用的基础): facts every other part of the package uses, and nothing else.

Nothing here imports another part of the package, so any layer may import from here.

- ``errors``   ``GyaMemoryError``, the root of every error and warning, in one block
- ``text``     Chinese (Han) characters, the chat roles, the one stop-word list
- ``checks``   small input checks shared by the stores (``DEFAULT_USER``, ``MAX_ID_CHARS``)
- ``clock``    injectable clocks, so timestamps in notebooks are reproducible
- ``files``    atomic file writes and the cross-process file lock
- ``config``   settings read from the environment, in one place; the data folder
- ``payload``  the payload keys of a semantic memory, as named constants
- ``fence``    stored text into a prompt as data: one line, no tags, no forged entries
- ``lazy``     a package's public names, each imported on first use
"""
