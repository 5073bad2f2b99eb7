"""gya_memory: the helper package behind the gya-memory notebook series.

Each module holds one idea from the series and can be read on its own:

- ``config``       settings read from the environment, in one place
- ``clock``        injectable clocks, so timestamps in notebooks are reproducible
- ``checks``       small input checks shared by the stores
- ``working``      working memory (工作记忆): the messages of the current call
- ``episodic``     episodic memory (情节记忆): structured facts in SQLite
- ``embeddings``   text to vectors: local e5, Ollama, OpenAI-compatible, TF-IDF fallback
- ``semantic``     semantic memory (语义记忆): memories found by meaning, in Qdrant
- ``stores``       the vector store under it: Qdrant Edge in-process, or qdrant-client
- ``sparse``       sparse lexical vectors (BM25 weights, month tokens) for Qdrant
- ``lexical``      the tokenizer for Chinese and English; BM25 and RRF written out
- ``calibration``  the labelled bilingual set, and choosing a threshold per embedder
- ``plots``        score bars, heatmaps, distributions (with a CJK font)
- ``llm``          the chat model: local Qwen2.5-Coder-1.5B, or an OpenAI-compatible server
- ``context``      context assembly: filter, budget, order, placement, fenced memories
- ``agent``        the closed loop, traces, the recall_memory tool, grounding checks
- ``experiments``  the placement experiment
- ``procedural``   procedural memory (程序记忆): recipes you find and call
- ``curated``      Hermes-style bounded MEMORY.md / USER.md with frozen snapshots
- ``sessions``     Hermes-style session search: raw messages in SQLite FTS5 (trigram)
- ``injection``    prompt-injection scanning: normalise, then match paraphrase families
- ``fence``        stored text into a prompt as data: one line, no tags, no forged entries
- ``erasure``      forget_user(): one user's memories out of every store and every byte
- ``faults``       fault injection: kill -9 a writer at random moments, check what survived
- ``failures``     the failure paths, reproducible: fake services, crashes mid-write
- ``examples``     the article's example data, in Chinese and English

Importing the package does no work: no files are opened, no models are loaded.
"""

__version__ = "0.1.0"
