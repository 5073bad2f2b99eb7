"""A reader written for a stored exchange, asked again on a gate probe (issue 17, item 4).

    ./run.sh bench recall --datasets cn,en --judge-every 8 --judge-modes hybrid --gate-probe \
        --json /tmp/probe.json                                   # the probe: ~60 min
    ./run.sh bench exchange_reader /tmp/probe.json --out /tmp/probe_x.json   # ~35 min
    ./run.sh bench exchange_reader /tmp/probe.json --out /tmp/probe_u.json --signals ureader,rreader
    ./run.sh bench gate_sizes /tmp/probe_x.json                  # the replay: seconds

The shipped reader (``gya_memory.answer.judge.READER_SYSTEM``) was written for one-line facts
about the user ("answer from this one fact, or reply unknown"; a fact about another person, a
plan or a missing detail is "unknown"). At real sizes a memory is a chat turn or a whole
exchange, and the reader says "unknown" to exchanges that hold the answer (session 18's replay:
no bar keeps both the false hits down and the evidence recall up). This script asks two prompts
written for an exchange, on the candidates of a ``--gate-probe`` run that are not one-line
statements, and writes the probe again with two more numbers per candidate:

- ``xreader``: 1 - P(unknown) of "here is a piece of an earlier conversation with the user;
  answer from it in a few words, or reply unknown";
- ``xyes``: P(yes) of "does this piece of an earlier conversation say what the question asks?".

Two more (``--signals ureader,rreader``, session 28) keep the shipped reader's prompt and change
only what it reads: ``ureader`` the user's line of the exchange alone (a one-line statement of
what the user said, the form the reader was written for), ``rreader`` the exchange with who
said what written out ("User said: … Assistant replied: …"; the other signals read the raw
``query\nresponse``, with nothing to say which line is whose). ``ereader`` (session 32) is the
shipped reader with the six worked examples of ``bench_reader_examples.py``, on the raw exchange.

``bench_gate_sizes.py`` replays the gate with either of them as the fact questions' signal for
an exchange. The candidates' texts are read again from the data set (``--data``): a turn cut
into pieces (LongMemEval's long replies) is read from its first piece, the one the store's
first point holds; the data set's text stays out of the output.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _shared import print_footer

XREADER_SYSTEM = (
    "Below is a piece of an earlier conversation with the user: what the user said, and "
    "perhaps the assistant's reply. Answer the user's new question from this piece alone, in "
    "a few words. If the piece does not say it, reply exactly: unknown"
)
XREADER_SYSTEM_ZH = (
    "下面是之前和用户聊天的一段记录：用户说的话，可能还有助手的回复。只根据这段记录，用几个字回答用户"
    "现在的问题。如果这段记录里没有说到，只回复：unknown"
)
XYES_SYSTEM = (
    "Below is a piece of an earlier conversation with the user and a new question from the "
    "user. Does this piece say what the question asks (the same event, person or thing, and "
    "the detail asked)? Reply with one word: yes or no."
)
XYES_SYSTEM_ZH = (
    "下面是之前和用户聊天的一段记录，以及用户现在的问题。这段记录有没有说到问题问的内容（同一件事、"
    "同一个人或东西，以及问的那个细节）？只回答一个词：yes 或 no。"
)
FORMS = ("Earlier conversation: {f}\nQuestion: {q}", "之前的聊天：{f}\n问题：{q}")
DEFAULT_SIGNALS = ("xreader", "xyes")  # session 19's two; the other two: session 28
ROLES = ("User said: {u}\nAssistant replied: {r}", "用户说：{u}\n助手回复：{r}")


def parts(text: str) -> tuple[str, str]:
    """A stored MemoryBank exchange (``query\nresponse``) as (the user's line, the reply)."""
    user, _, reply = text.partition("\n")
    return user.strip(), reply.strip()


def ureader(model: Any, question: str, text: str) -> float:
    """The shipped reader (one-line facts) on the user's line of the exchange alone."""
    from gya_memory.answer.judge import reader_relevance
    return reader_relevance(model, question, parts(text)[0] or text)


def rreader(model: Any, question: str, text: str) -> float:
    """The shipped reader on the exchange with who said what written out."""
    from gya_memory.answer.judge import reader_relevance
    from gya_memory.base.text import language_of
    user, reply = parts(text)
    form = ROLES[language_of(question) == "zh"]
    return reader_relevance(model, question, form.format(u=user, r=reply) if reply else text)


def xreader_messages(question: str, text: str) -> list[dict[str, str]]:
    from gya_memory.answer.judge import pair_messages
    return pair_messages(question, text, None, (XREADER_SYSTEM, XREADER_SYSTEM_ZH), FORMS)


def xyes_messages(question: str, text: str) -> list[dict[str, str]]:
    from gya_memory.answer.judge import pair_messages
    return pair_messages(question, text, None, (XYES_SYSTEM, XYES_SYSTEM_ZH), FORMS)


def xreader(model: Any, question: str, text: str) -> float:
    """1 - P(the first token is "unknown"), as the shipped reader reads it."""
    from gya_memory.answer.judge import is_unknown_token
    probs = model.next_token_probs(xreader_messages(question, text), top=20)
    return 1.0 - min(1.0, sum(p for t, p in probs.items() if is_unknown_token(t)))


def xyes(model: Any, question: str, text: str) -> float:
    """P(yes) / (P(yes) + P(no)) of the first token (0.5 if it offers neither)."""
    probs = model.next_token_probs(xyes_messages(question, text))
    yes, no = probs.get("yes", 0.0), probs.get("no", 0.0)
    return yes / (yes + no) if yes + no > 0 else 0.5


def ereader(model: Any, question: str, text: str) -> float:
    """The shipped reader with bench_reader_examples' six worked examples, on the raw exchange."""
    from bench_reader_examples import example_relevance
    return example_relevance(model, question, text)


SIGNAL_FNS = {"xreader": xreader, "xyes": xyes, "ureader": ureader, "rreader": rreader,
              "ereader": ereader}
SIGNALS = tuple(SIGNAL_FNS)


def texts_of(data: Path, datasets: Sequence[str]) -> dict[str, str]:
    """Qualified turn key (``store/key``, as the probe writes it) -> the first piece of the
    turn's text (what the store's first point of it holds)."""
    import bench_recall as br
    from gya_memory.semantic.values import MAX_TEXT_CHARS

    hays: list[Any] = []
    if "lme" in datasets:
        hays += br.load_longmemeval(data / "longmemeval", None, abstention_only=True)
    labels = json.loads(br.LABELS.read_text(encoding="utf-8"))
    extra = json.loads(br.UNANSWERABLE.read_text(encoding="utf-8"))
    for lang in ("cn", "en"):
        if lang in datasets:
            hays += br.load_memorybank(data / "memorybank", lang, labels, None, extra)
    out = {}
    for hay in hays:
        for d in hay.docs:
            pieces = br.chunks(d.text, MAX_TEXT_CHARS)
            out[f"{hay.name}/{d.key}"] = pieces[0] if pieces else ""
    return out


def reprobe(rows: Mapping[str, dict[str, Any]], texts: Mapping[str, str], model: Any,
            signals: Sequence[str] = DEFAULT_SIGNALS) -> int:
    """Add each of ``signals`` (default ``xreader`` and ``xyes``) to every probed candidate that the shipped gate would ask
    about (a reader or judge number is there) and that is not a one-line statement. Returns
    the number of prompts asked."""
    asked = 0
    for row in rows.values():
        cands = [c for c in row["cands"] if not c["statement"] and
                 (c["reader"] is not None or c["judge"] is not None)]
        # one prompt kind at a time, so the prompt cache keeps the question's shared prefix
        for name, fn in ((n, SIGNAL_FNS[n]) for n in signals):
            for c in cands:
                c[name] = round(fn(model, row["question"], texts[c["keys"][0]]), 5)
                asked += 1
    return asked


def main(argv: Sequence[str] | None = None) -> int:
    import bench_recall as br

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probe", type=Path, help="a bench_recall --gate-probe --json file")
    parser.add_argument("--out", type=Path, required=True,
                        help="the probe again, with xreader and xyes per candidate")
    parser.add_argument("--data", type=Path, default=br.DEFAULT_DATA)
    parser.add_argument("--signals", default=",".join(DEFAULT_SIGNALS),
                        help=f"comma-separated, of {', '.join(SIGNALS)}")
    args = parser.parse_args(argv)
    signals = [x for x in args.signals.split(",") if x]
    if not signals or set(signals) - set(SIGNALS):
        print(f"bench_exchange_reader: --signals takes {', '.join(SIGNALS)}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if not args.probe.is_file():
        print(f"bench_exchange_reader: no such file {args.probe}", file=sys.stderr)
        return 2
    doc = json.loads(args.probe.read_text(encoding="utf-8"))
    probed = {ds: res["gate_probe"] for ds, res in doc["results"].items()
              if isinstance(res, dict) and "gate_probe" in res}
    if not probed:
        print("bench_exchange_reader: no gate probe in this file", file=sys.stderr)
        return 2
    try:
        texts = texts_of(args.data, list(probed))
    except br.MissingData as exc:
        print(f"bench_exchange_reader: missing {exc} (give the data folder with --data)",
              file=sys.stderr)
        return 2
    from gya_memory.answer.llm import get_llm
    model = get_llm()
    for ds, rows in probed.items():
        t0 = time.perf_counter()
        n = reprobe(rows, texts, model, signals)
        print(f"{ds}: {len(rows)} probed questions, {n} prompts in "
              f"{time.perf_counter() - t0:.0f} s")
    doc.setdefault("meta", {})["exchange_reader"] = signals
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {args.out.name}")
    print_footer(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
