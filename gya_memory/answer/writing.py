"""From conversation to memory (写入记忆): extract, compare with what is stored, decide.

The article writes its memories by hand and leaves extraction out; a real agent writes them
from what the user said. One session becomes memories in three steps, each usable alone:

1. **propose** (:mod:`gya_memory.answer.extraction`): the local chat model
   reads the user's turns of one session (numbered; relative dates already resolved by
   :func:`gya_memory.answer.dates.resolve`) and writes one JSON object per fact: the fact as a
   self-contained note in the user's language, whom it is about, the turn it came from.
   Only the user's turns are shown: what the assistant said is not a fact about the user.
   Small models write broken JSON, so the parser takes what it can read object by object,
   checks every field, and drops (and counts) the rest; a half-read fact is never stored.
2. **compare** (:func:`decide`): each proposal is searched in the semantic store; a
   word-for-word repeat or a restatement is skipped, the rest added. Updating a close memory
   that has changed, by the model ("same / replaces / new") or by a rule (a sign of change, a
   shared key word), was measured and kept off: those ways are in
   ``gya_memory.lab.writing_levers``, passed in as ``how``.
3. **write** (:func:`remember`): *add* a new memory; *update*: the new one is stored and the
   old one moves to the history collection with an end date (never silently lost); *skip*
   a duplicate. Every decision is kept, with the memories it compared, in a
   :class:`WriteReport`.

Mem0 does the same in two LLM calls (extract facts, then ADD/UPDATE/DELETE/NONE against the
closest memories); Graphiti ends a contradicted edge instead of deleting it, which is what
the history collection does here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, Union

from gya_memory.base.payload import CREATED_AT, TEXT, UPDATED_AT, USER_ID
from gya_memory.base.text import language_of
from gya_memory.answer.extraction import Proposal, propose, session_date

Action = Literal["add", "update", "skip"]
HISTORY_SUFFIX = "_history"  # the collection old versions move to
WRITTEN_BY_STORE = (TEXT, USER_ID, CREATED_AT, UPDATED_AT)  # payload keys store() sets itself

@dataclass(frozen=True)
class Decision:
    """What was done with one proposal, and what it was compared with."""

    proposal: Proposal
    action: Action
    reason: str
    compared: tuple[tuple[str, float], ...] = ()  # (stored text, cosine), closest first
    replaced: str | None = None  # the stored text an update moved to history
    p: dict[str, float] = field(default_factory=dict)  # the model's same/replaces/new


@dataclass
class WriteReport:
    """One session written: the proposals, what was dropped while reading them, and the
    decisions."""

    session_id: str
    raw: str  # the model's words
    proposals: list[Proposal]
    dropped: list[tuple[str, str]]  # (what could not be used, why)
    decisions: list[Decision] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {"proposed": len(self.proposals), "dropped": len(self.dropped)}
        for a in ("add", "update", "skip"):
            out[a] = sum(d.action == a for d in self.decisions)
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One row per decision (then one per dropped piece), for a table."""
        rows: list[dict[str, Any]] = []
        for d in self.decisions:
            closest = d.compared[0] if d.compared else None
            rows.append({"action": d.action, "memory": d.proposal.text, "about": d.proposal.about,
                         "turn": d.proposal.turn,
                         "closest stored": f"{closest[1]:.3f} {closest[0]}" if closest else "",
                         "why": d.reason + (f"; replaces: {d.replaced}" if d.replaced else "")})
        for what, why in self.dropped:
            rows.append({"action": "dropped", "memory": what[:60], "about": "", "turn": "",
                         "closest stored": "", "why": why})
        return rows

    def to_text(self) -> str:
        lines = [f"session {self.session_id}: " + ", ".join(f"{k} {v}" for k, v in self.counts().items())]
        for d in self.decisions:
            lines.append(f"  {d.action:6} {d.proposal.text}  (about {d.proposal.about}, turn "
                         f"{d.proposal.turn}; {d.reason})")
            if d.replaced:
                lines.append(f"         replaces: {d.replaced}")
        for what, why in self.dropped:
            lines.append(f"  dropped {what[:60]!r}: {why}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


# -- 2. decide -------------------------------------------------------------------------------
# A stored memory must be at least this close (e5 cosine, the proposal as the query) to be
# compared at all; an exact repeat of a stored text is a duplicate without asking. e5's
# cosines sit higher for Chinese than for English (notebook 04), so the floor is per
# language. The first tuning run used 0.88 and compared almost nothing: e5 puts an update
# ("又开始喝奶茶了" vs "戒了奶茶") near 0.85.
COMPARE_MIN = {"zh": 0.84, "en": 0.84}
POOL = 3  # at most this many close memories (of the same person) are shown to the model
# A way to decide (``gya_memory.lab.writing_levers``): the proposal, the chat model, the close
# memories about the same person, what was compared, and the session being written.
ModelDecision = Callable[[Proposal, Any, Sequence[Any], tuple[tuple[str, float], ...], Union[str, None]], Decision]
How = Union[Literal["off"], ModelDecision]
HOWS: tuple[str, ...] = ("off",)
# Whether the model may replace a stored memory. Off by default: with the 1.5B model every
# way of asking replaced the wrong memory far more often than the right one (issue 18,
# ``./run.sh bench writing``: on the tuning split ``first`` made 49 updates, ``pick`` 44,
# ``yesno`` 13, none of them right; on the test split ``first`` made 63, 2 right). Most
# chained one fact of a session onto the previous one (血脂有点高 "replaced" 自己倒是什么都能吃),
# moving a true fact out of the store. With updates off a new fact is added beside the old
# one, a word-for-word repeat is still skipped, and the answer step places both with their
# dates (``Policy(conflicts="newest_wins")`` keeps only the newer, ``gate.screen``).
# ``how=by_model("first")`` (or another way, ``gya_memory.lab.writing_levers``) turns the
# model's decision on, to measure it or with a stronger model. ``how=by_rule()`` (no model: a
# sign of change, an earlier session, a shared key word) was precise on the labelled facts
# but, after the model's real extraction, replaced the wrong fact in 4 of its 5 tuning
# updates (docs/writing.md), so it is kept off too.
HOW: How = "off"
# A proposal with no sign of change and no number the stored memory lacks, whose latent
# terms (e5's sparse head, the cosine of the two term vectors) are at least this close to an
# earlier session's memory about the same person, says that memory again: it is skipped as a
# restatement (e5's dense cosine could not tell restatements, 0.85-0.93, from new facts, up
# to 0.91). Chosen on the tuning split (issue 18, docs/writing.md "Restatements by latent terms"):
# 0.45 skipped a labelled new fact and an update, 0.5 neither. None: off.
RESTATE_MIN: float | None = 0.5


def _check_how(how: Any) -> None:
    if not callable(how) and how not in HOWS:  # a model's way: gya_memory.lab.writing_levers
        raise ValueError(f"how must be one of {', '.join(HOWS)} or a model's way, got {how!r}")


def _person(about: str, text: str) -> str:
    """The key of whom a memory is about: ``user`` or a relation (``女儿``, ``cat``)."""
    from gya_memory.answer.about import about_of

    return about_of(text) if about == "user" else about_of(about) if about_of(about) != "user" else about


def earlier_says(proposal: Proposal, close: Sequence[Any], session_id: str | None) -> list[Any]:
    """The memories of ``close`` that ``proposal`` may only say again: about the same person,
    from an earlier session, with every number it states; none if it shows a sign of change."""
    from gya_memory.answer.changes import change_marker, numbers
    from gya_memory.answer.gate import about_of_hit

    if change_marker(proposal.text):
        return []
    mine, said = _person(proposal.about, proposal.text), numbers(proposal.text)  # a new number: a change
    return [h for h in close if _person(about_of_hit(h), h.text) == mine and said <= numbers(h.text)
            and (session_id is None or h.payload.get("session_id") != session_id)]


def _restates(proposal: Proposal, memory: Any, close: Sequence[Any], session_id: str | None,
              floor: float | None) -> tuple[Any, float] | None:
    """The earlier session's memory about the same person that ``proposal`` says again, with
    the latent-term cosine, or None (see :data:`RESTATE_MIN`)."""
    from gya_memory.answer.terms import overlap

    if floor is None or not hasattr(memory.embedder, "terms"):
        return None
    if not (earlier := earlier_says(proposal, close, session_id)):
        return None
    q, *docs = memory.embedder.terms([proposal.text, *(h.text for h in earlier)])
    scored = [(h, overlap(q, d) / max((overlap(q, q) * overlap(d, d)) ** 0.5, 1e-12)) for h, d in zip(earlier, docs)]
    best = max(scored, key=lambda x: x[1])
    return best if best[1] >= floor else None


def decide(proposal: Proposal, memory: Any, llm: Any, *, compare_min: float | Mapping[str, float] = COMPARE_MIN,
           pool: int = POOL, how: How = HOW, session_id: str | None = None,
           restate_min: float | None = None) -> Decision:
    """Add, update or skip ``proposal`` against ``memory``'s closest memories.

    A word-for-word repeat of a stored memory is skipped, and so is a restatement: no sign of
    change, no new number, and latent terms at least ``restate_min`` (default
    :data:`RESTATE_MIN`; above 1 turns it off) close to an earlier session's memory about the
    same person. ``how="off"`` (the default, see
    :data:`HOW`) stops there: everything else is added, and the model is not asked. ``how``
    may also be a way to decide (``gya_memory.lab.writing_levers``: ``by_model`` asks the
    model, ``by_rule`` reads signs of change; both measured and kept off): it gets the
    proposal, ``llm``, the close memories (cosine at least ``compare_min``, about the same
    person, at most ``pool``), what was compared and ``session_id``, and returns the decision."""
    from gya_memory.answer.gate import about_of_hit

    _check_how(how)
    floor = compare_min if isinstance(compare_min, float) else compare_min[language_of(proposal.text)]
    close = memory.candidates(proposal.text, top_k=max(pool, 3) + 2)
    compared = tuple((h.text, round(float(h.score), 4)) for h in close)
    for h in close:
        if " ".join(h.text.split()) == proposal.text:
            return Decision(proposal, "skip", "already stored word for word", compared)
    restated = _restates(proposal, memory, close, session_id, RESTATE_MIN if restate_min is None else restate_min)
    if restated is not None:
        return Decision(proposal, "skip", f"says again what a stored memory says (latent terms "
                        f"{restated[1]:.2f})", compared)
    if how == "off":
        return Decision(proposal, "add", "added beside the close memories (updates are off)"
                        if close and float(close[0].score) >= floor else "nothing stored says this",
                        compared)
    mine = _person(proposal.about, proposal.text)
    eligible = [h for h in close if float(h.score) >= floor
                and _person(about_of_hit(h), h.text) == mine][:pool]
    if not eligible:
        return Decision(proposal, "add", "nothing stored says this" if not close or float(close[0].score) < floor
                        else "the close memories say something else", compared)
    return how(proposal, llm, eligible, compared, session_id)  # type: ignore[operator]


# -- 3. write --------------------------------------------------------------------------------
def history_of(memory: Any) -> Any:
    """The history collection of ``memory``: where updated memories go, with an end date."""
    from gya_memory.semantic.memory import SemanticMemory

    return SemanticMemory(store=memory.backend, user_id=memory.user_id,
                          collection=memory.collection + HISTORY_SUFFIX, embedder=memory.embedder)


def write(memory: Any, llm: Any, proposals: Sequence[Proposal], *, session_id: str,
          when: date | datetime | str, history: Any = None, how: How = HOW) -> list[Decision]:
    """Decide each proposal against ``memory`` (:func:`decide`, with ``how``) and carry the
    decision out.

    For an update the old memory is copied to ``history`` (default :func:`history_of`) with
    ``valid_until`` (this session's date) and ``superseded_by`` before it is deleted from
    ``memory``: a crash in between leaves it in both places, never in neither."""
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
    _check_how(how)
    today = session_date(when)
    decisions = []
    for proposal in proposals:
        decision = decide(proposal, memory, llm, how=how, session_id=session_id)
        decisions.append(decision)
        meta = {"about": proposal.about, "session_id": session_id, "turn": proposal.turn,
                "said_on": today.isoformat()}
        if decision.action == "add":
            memory.store(proposal.text, **meta)
        elif decision.action == "update" and decision.replaced is not None:
            old = next((m for m in memory.all() if m.text == decision.replaced), None)
            if old is not None:  # (gone meanwhile: the new memory is simply added)
                history = history if history is not None else history_of(memory)
                kept = {k: v for k, v in old.payload.items() if k not in WRITTEN_BY_STORE}
                history.store(old.text, allow_instructions=True, **kept,
                              valid_until=today.isoformat(), superseded_by=proposal.text)
            memory.store(proposal.text, **meta)
            if old is not None:
                memory.forget(text=old.text)
    return decisions


def remember(memory: Any, llm: Any, messages: Sequence[Mapping[str, Any]], *, session_id: str,
             when: date | datetime | str, history: Any = None, how: How = HOW) -> WriteReport:
    """Write one session's memories into ``memory`` and return every decision:
    :func:`propose`, then :func:`write` (``how``: whether and how the model may replace a
    stored memory, :data:`HOW`)."""
    import time

    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
    _check_how(how)
    today = session_date(when)
    t0 = time.perf_counter()
    raw, proposals, dropped = propose(llm, messages, today)
    report = WriteReport(session_id, raw, proposals, dropped)
    t1 = time.perf_counter()
    report.decisions = write(memory, llm, proposals, session_id=session_id, when=today,
                             history=history, how=how)
    report.seconds = {"propose": round(t1 - t0, 2), "decide": round(time.perf_counter() - t1, 2)}
    return report
