"""The injection corpora (注入测试集): how well the scanner does, measured.

``injection_attacks.json`` / ``injection_benign.json`` (the first corpus, with
its own tune/test split, :func:`evaluate`), ``injection_tune.json`` (what the current rules
were tuned on) and ``injection_heldout.json``, written before that tuning and not looked at
while tuning (:func:`evaluate_corpus` reports detection and false positives per language).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gya_memory.hermes.injection import prompt_findings, scan


# -- the corpora --------------------------------------------------------------------------------
def load_corpus(name: str) -> list[dict[str, Any]]:
    """``"attacks"`` or ``"benign"``: the entries of ``gya_memory/data/injection_<name>.json``,
    each with ``text``, ``lang`` (en, zh-Hans, zh-Hant), ``split`` (tune, test)."""
    if name not in ("attacks", "benign"):
        raise ValueError(f"name must be 'attacks' or 'benign', got {name!r}")
    raw = resources.files("gya_memory.data").joinpath(f"injection_{name}.json").read_text("utf-8")
    return list(json.loads(raw)["entries"])


@dataclass(frozen=True)
class Rates:
    """Detection on attacks and refusals on benign entries, for one split."""

    split: str
    attacks: int
    detected: int
    benign: int
    refused: int
    missed: tuple[str, ...] = ()
    false_positives: tuple[str, ...] = ()

    @property
    def detection_rate(self) -> float:
        return self.detected / self.attacks if self.attacks else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.refused / self.benign if self.benign else 0.0

    def __str__(self) -> str:
        return (f"{self.split:>5}: detected {self.detected}/{self.attacks} "
                f"({self.detection_rate:.1%}), benign refused {self.refused}/{self.benign} "
                f"({self.false_positive_rate:.1%})")


def evaluate(split: str) -> Rates:
    """Scan the ``split`` part (``tune`` or ``test``) of both corpora."""
    attacks = [e["text"] for e in load_corpus("attacks") if e["split"] == split]
    benign = [e["text"] for e in load_corpus("benign") if e["split"] == split]
    missed = tuple(t for t in attacks if not scan(t))
    refused = tuple(t for t in benign if scan(t))
    return Rates(split, len(attacks), len(attacks) - len(missed), len(benign), len(refused),
                 missed, refused)


def load_entries(name: str) -> list[dict[str, Any]]:
    """``"heldout"`` or ``"tune"``: the entries of ``gya_memory/data/injection_<name>.json``,
    each with ``kind`` (attack, benign), ``lang``, ``family`` and ``text`` (or ``parts``: one
    instruction split across entries)."""
    if name not in ("heldout", "tune"):
        raise ValueError(f"name must be 'heldout' or 'tune', got {name!r}")
    raw = resources.files("gya_memory.data").joinpath(f"injection_{name}.json").read_text("utf-8")
    return list(json.loads(raw)["entries"])


def evaluate_corpus(name: str) -> dict[str, Rates]:
    """Detection and benign refusals of the write-time scan on ``injection_<name>.json``, per
    language (``"en"``, ``"zh"``: simplified and traditional). An instruction split across
    entries counts as detected when any part is refused, as a write-time scan sees each part
    alone."""
    out: dict[str, Rates] = {}
    entries = load_entries(name)
    for lang in ("en", "zh"):
        mine = [e for e in entries if (e["lang"] == "en") == (lang == "en")]
        attacks = [e for e in mine if e["kind"] == "attack"]
        benign = [e for e in mine if e["kind"] == "benign"]
        missed = tuple(" | ".join(e.get("parts") or [e["text"]]) for e in attacks
                       if not any(prompt_findings(p) for p in e.get("parts") or [e["text"]]))
        refused = tuple(e["text"] for e in benign if prompt_findings(e["text"]))
        out[lang] = Rates(f"{name}/{lang}", len(attacks), len(attacks) - len(missed), len(benign),
                          len(refused), missed, refused)
    return out
