"""gya_memory: the helper package behind the gya-memory notebook series.

Each module holds one idea from the series and can be read on its own:

- ``config``     settings read from the environment, in one place
- ``clock``      injectable clocks, so timestamps in notebooks are reproducible
- ``working``    working memory (工作记忆): the messages of the current call
- ``episodic``   episodic memory (情节记忆): structured facts in SQLite
- ``procedural`` procedural memory (程序记忆): recipes you can call

Importing the package does no work: no files are opened, no models are loaded.
"""

__version__ = "0.1.0"
