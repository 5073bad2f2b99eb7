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
2. **compare** (:func:`decide`): each proposal is searched in the semantic store; the model
   compares it with the closest stored memory ("same / replaces / new").
3. **write** (:func:`remember`): *add* a new memory; *update*: the new one is stored and the
   old one moves to the history collection with an end date (never silently lost); *skip*
   a duplicate. Every decision is kept, with the memories it compared, in a
   :class:`WriteReport`.

Mem0 does the same in two LLM calls (extract facts, then ADD/UPDATE/DELETE/NONE against the
closest memories); Graphiti ends a contradicted edge instead of deleting it, which is what
the history collection does here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from gya_memory.base.payload import CREATED_AT, TEXT, UPDATED_AT, USER_ID
from gya_memory.base.text import language_of
from gya_memory.answer.extraction import Proposal, propose, screen, session_date

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


# -- 2. compare ------------------------------------------------------------------------------
COMPARE_SYSTEM = (
    "Two notes about the same user: an old one already stored and a new one from today's "
    "conversation. Reply with one word.\n"
    "same: the new note says what the old one says (maybe in other words).\n"
    "replaces: the new note makes the old one no longer true (moved, quit, started again, "
    "changed, a plan moved to another date).\n"
    "new: both can be true at once; the new note adds something else.\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> replaces\n"
    "Old: Allergic to penicillin. New: Can't take penicillin -> same\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> new\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> replaces\n"
    "Old: 每周三练瑜伽. New: 周三晚上上瑜伽课 -> same"
)


def compare_messages(old: str, new: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": COMPARE_SYSTEM},
            {"role": "user", "content": f"Old: {' '.join(old.split())} New: {' '.join(new.split())} ->"}]


def compare(llm: Any, old: str, new: str) -> dict[str, float]:
    """P(same), P(replaces), P(new) from the first token (normalised over the three)."""
    probs = llm.next_token_probs(compare_messages(old, new), top=20)
    p = {"same": 0.0, "replaces": 0.0, "new": 0.0}
    for token, value in probs.items():
        t = token.strip().lower()
        for word in p:
            if len(t) >= 2 and word.startswith(t):
                p[word] += value
                break
    total = sum(p.values())
    return {k: round(v / total, 4) for k, v in p.items()} if total > 0 else {"same": 0.0, "replaces": 0.0, "new": 1.0}


# Two yes/no questions a small model answers more evenly than the three-way comparison (which
# said "replaces" for most pairs, related or not): is the new note the same as the old one,
# and can both be true of the user now?
SAME_SYSTEM = (
    "Two notes about a user. Do they say the same thing, maybe in other words? Reply yes or no.\n"
    "Old: Allergic to penicillin. New: Can't take penicillin -> yes\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> no\n"
    "Old: 每周三练瑜伽. New: 周三晚上上瑜伽课 -> yes\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> no\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> no\n"
    "Old: 女儿在读小学. New: 女儿朵朵上二年级 -> yes"
)
BOTH_SYSTEM = (
    "Two notes about a user: an old one and a new one. Can both be true of the user now? "
    "Reply yes or no.\n"
    "no: the new note changes the old one (moved, quit, started again, changed job or plan, a "
    "date moved, a number went up or down).\n"
    "yes: the notes are about different things, or the new one adds a detail.\n"
    "Old: Drinks three coffees a day. New: Quitting coffee -> no\n"
    "Old: Has a cat named Mochi. New: Allergic to peanuts -> yes\n"
    "Old: 住在杭州. New: 上个月搬到了上海 -> no\n"
    "Old: 每周三练瑜伽. New: 喜欢吃辣 -> yes\n"
    "Old: Trip to Rome on 2026-06-01. New: Rome trip moved to 2026-06-08 -> no\n"
    "Old: 体重80公斤. New: 在准备半马 -> yes\n"
    "Old: Works as a nurse. New: Works night shifts -> yes"
)
SAME_MIN = 0.5  # P(yes, the same) to skip a proposal as a duplicate
CONFLICT_MIN = 0.5  # P(no, not both true) to update


def _yes(llm: Any, system: str, old: str, new: str) -> float:
    probs = llm.next_token_probs([{"role": "system", "content": system},
                                  {"role": "user", "content": f"Old: {' '.join(old.split())} "
                                                              f"New: {' '.join(new.split())} ->"}])
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return round(yes / (yes + no), 4) if yes + no > 0 else 0.5


def same_as(llm: Any, old: str, new: str) -> float:
    """P that ``new`` says what ``old`` says."""
    return _yes(llm, SAME_SYSTEM, old, new)


def conflicts(llm: Any, old: str, new: str) -> float:
    """P that ``old`` and ``new`` cannot both be true of the user now."""
    return round(1 - _yes(llm, BOTH_SYSTEM, old, new), 4)


PICK_SYSTEM = (
    "You keep short notes about a user. A new note arrives. Is one of the stored notes about "
    "the same thing as the new note: the same habit, diet, job, home, plan, trip, pet, health "
    "matter or possession, so that the new note repeats it or changes it? Reply with its "
    "letter. If none is about the same thing, reply N.\n"
    "New: Quitting coffee\nA. Works as a nurse\nB. Drinks three coffees a day\n-> B\n"
    "New: Allergic to peanuts\nA. Has a cat named Mochi\nB. Lives in Leeds\n-> N\n"
    "New: 上个月搬到了上海\nA. 每周三练瑜伽\nB. 对青霉素过敏\nC. 住在杭州\n-> C\n"
    "New: 周三晚上上瑜伽课\nA. 每周三练瑜伽\nB. 在杭州做会计\n-> A"
)
LETTERS = "ABCDEFGH"


def pick_messages(new: str, stored: Sequence[str]) -> list[dict[str, str]]:
    """The listwise prompt: the new note, then the stored ones lettered A, B, C…"""
    if not 1 <= len(stored) <= len(LETTERS):
        raise ValueError(f"stored must hold 1 to {len(LETTERS)} notes, got {len(stored)}")
    lines = [f"New: {' '.join(new.split())}"]
    lines += [f"{LETTERS[i]}. {' '.join(text.split())}" for i, text in enumerate(stored)]
    return [{"role": "system", "content": PICK_SYSTEM},
            {"role": "user", "content": "\n".join(lines) + "\n->"}]


def pick(llm: Any, new: str, stored: Sequence[str]) -> dict[str, float]:
    """P of each stored note (by its letter) and of ``"none"`` being the one ``new`` is
    about, from the first token, normalised over the letters shown and N."""
    probs = llm.next_token_probs(pick_messages(new, stored), top=20)
    letters = [c.lower() for c in LETTERS[:len(stored)]]
    p = {c: probs.get(c, 0.0) for c in letters}
    p["none"] = probs.get("n", 0.0)
    total = sum(p.values())
    return {k: round(v / total, 4) for k, v in p.items()} if total > 0 else {**{c: 0.0 for c in letters}, "none": 1.0}


# A stored memory must be at least this close (e5 cosine, the proposal as the query) to be
# compared at all; an exact repeat of a stored text is a duplicate without asking. e5's
# cosines sit higher for Chinese than for English (notebook 04), so the floor is per
# language. The first tuning run used 0.88 and compared almost nothing: e5 puts an update
# ("又开始喝奶茶了" vs "戒了奶茶") near 0.85.
COMPARE_MIN = {"zh": 0.84, "en": 0.84}
POOL = 3  # at most this many close memories (of the same person) are shown to the model
How = Literal["off", "rule", "first", "best", "pick", "yesno"]
HOWS: tuple[str, ...] = ("off", "rule", "first", "best", "pick", "yesno")
# Whether the model may replace a stored memory. Off by default: with the 1.5B model every
# way of asking replaced the wrong memory far more often than the right one (issue 18,
# ``./run.sh bench writing``: on the tuning split ``first`` made 49 updates, ``pick`` 44,
# ``yesno`` 13, none of them right; on the test split ``first`` made 63, 2 right). Most
# chained one fact of a session onto the previous one (血脂有点高 "replaced" 自己倒是什么都能吃),
# moving a true fact out of the store. With updates off a new fact is added beside the old
# one, a word-for-word repeat is still skipped, and the answer step lets the newer of two
# conflicting memories win (``gate.newest_wins``). ``how="first"`` (or another) turns the
# model's decision on, to measure it or with a stronger model. ``how="rule"`` (no model:
# a sign of change, an earlier session, a shared key word) was precise on the labelled facts
# but, after the model's real extraction, replaced the wrong fact in 3-4 of its 4 tuning
# updates (README), so it is not the default either.
HOW: How = "off"


def _check_how(how: str) -> None:
    if how not in HOWS:
        raise ValueError(f"how must be one of {', '.join(HOWS)}, got {how!r}")


def _person(about: str, text: str) -> str:
    """The key of whom a memory is about: ``user`` or a relation (``女儿``, ``cat``)."""
    from gya_memory.answer.about import about_of

    return about_of(text) if about == "user" else about_of(about) if about_of(about) != "user" else about


def decide(proposal: Proposal, memory: Any, llm: Any, *, compare_min: float | Mapping[str, float] = COMPARE_MIN,
           pool: int = POOL, how: How = HOW, same_min: float = SAME_MIN,
           conflict_min: float = CONFLICT_MIN, session_id: str | None = None) -> Decision:
    """Add, update or skip ``proposal`` against ``memory``'s closest memories.

    A word-for-word repeat of a stored memory is skipped. ``how="off"`` (the default, see
    :data:`HOW`) stops there: everything else is added, and the model is not asked. Otherwise
    the close memories (cosine at least ``compare_min``, about the same person, at most
    ``pool``) go to the model. ``how``: ``first`` compares them one by one, closest first,
    and takes the first that is the same or replaced; ``best`` compares each and takes the
    one most likely the same or replaced; ``pick`` asks once which of them (lettered) the
    new note is about, then compares that one. ``rule`` asks no model: a close memory about
    the same person, from an earlier session than ``session_id``, is replaced when the new
    fact shows a sign of change and names the same thing (:mod:`gya_memory.answer.changes`)."""
    from gya_memory.answer.gate import about_of_hit

    _check_how(how)
    floor = compare_min if isinstance(compare_min, float) else compare_min[language_of(proposal.text)]
    close = memory.candidates(proposal.text, top_k=max(pool, 3) + 2)
    compared = tuple((h.text, round(float(h.score), 4)) for h in close)
    for h in close:
        if " ".join(h.text.split()) == proposal.text:
            return Decision(proposal, "skip", "already stored word for word", compared)
    if how == "off":
        return Decision(proposal, "add", "added beside the close memories (updates are off)"
                        if close and float(close[0].score) >= floor else "nothing stored says this",
                        compared)
    mine = _person(proposal.about, proposal.text)
    if how == "rule":
        from gya_memory.answer.changes import change_marker, replaced_by, shared_keys

        marker = change_marker(proposal.text)
        if marker is None:
            return Decision(proposal, "add", "no sign of change", compared)
        same = [h for h in close if _person(about_of_hit(h), h.text) == mine]
        old = replaced_by(proposal.text, same, session_id=session_id)
        if old is None:
            return Decision(proposal, "add", "no earlier memory names the same thing", compared)
        both = ", ".join(sorted(shared_keys(proposal.text, old.text)))
        return Decision(proposal, "update", f"changes a stored memory ({marker!r}; both name {both})",
                        compared, replaced=old.text)
    eligible = [h for h in close if float(h.score) >= floor
                and _person(about_of_hit(h), h.text) == mine][:pool]
    if not eligible or llm is None:
        return Decision(proposal, "add", "nothing stored says this" if not close or float(close[0].score) < floor
                        else "the close memories say something else", compared)
    if how == "yesno":
        same = [(same_as(llm, h.text, proposal.text), h) for h in eligible]
        p_same, h = max(same, key=lambda x: x[0])
        if p_same >= same_min:
            return Decision(proposal, "skip", f"the same as a stored memory (P {p_same:.2f})",
                            compared, p={"same": p_same})
        clash = [(conflicts(llm, h.text, proposal.text), h) for h in eligible]
        p_clash, h = max(clash, key=lambda x: x[0])
        if p_clash >= conflict_min:
            return Decision(proposal, "update", f"replaces a stored memory (P {p_clash:.2f})",
                            compared, replaced=h.text, p={"same": p_same, "conflict": p_clash})
        return Decision(proposal, "add", "the close memories say something else", compared,
                        p={"same": p_same, "conflict": p_clash})
    if how == "pick":
        chosen = pick(llm, proposal.text, [h.text for h in eligible])
        best = max(chosen, key=lambda k: chosen[k])
        if best == "none":
            return Decision(proposal, "add", f"about none of the close memories (P {chosen['none']:.2f})",
                            compared, p=chosen)
        order = [eligible[LETTERS.lower().index(best)]]
    else:
        order = eligible
    judged = []
    for h in order:
        p = compare(llm, h.text, proposal.text)
        verdict = max(p, key=lambda k: p[k])
        if how != "best" and verdict != "new":
            judged = [(h, p, verdict)]
            break
        if verdict != "new":
            judged.append((h, p, verdict))
    if judged:
        h, p, verdict = max(judged, key=lambda j: j[1]["same"] + j[1]["replaces"])
        if verdict == "same":
            return Decision(proposal, "skip", f"the same as a stored memory (P {p['same']:.2f})", compared, p=p)
        return Decision(proposal, "update", f"replaces a stored memory (P {p['replaces']:.2f})",
                        compared, replaced=h.text, p=p)
    return Decision(proposal, "add", "the close memories say something else", compared)


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
    proposals, unworthy = screen(llm, proposals)
    report = WriteReport(session_id, raw, proposals, dropped + unworthy)
    t1 = time.perf_counter()
    report.decisions = write(memory, llm, proposals, session_id=session_id, when=today,
                             history=history, how=how)
    report.seconds = {"propose": round(t1 - t0, 2), "decide": round(time.perf_counter() - t1, 2)}
    return report
