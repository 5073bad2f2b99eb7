"""Signs of change (gya_memory.answer.changes) and the update rule kept off
(gya_memory.lab.writing_levers.by_rule): a sign of change, an earlier session, a shared key."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gya_memory.answer.changes import change_marker
from gya_memory.lab.writing_levers import keys, replaced_by, shared_keys


@pytest.mark.parametrize(("text", "marker"), [
    ("跳槽到上海一家券商做财务", "跳槽"), ("体重降到74公斤", "降到"), ("外婆的寿宴提前到2026-05-09", "提前到"),
    ("又开始喝奶茶了", "又开始"), ("Switched from apixaban to warfarin", "Switched"),
    ("Marrakech trip moved to 2026-08-21", "moved"), ("Cat Salt can no longer eat Pepper's food", "no longer"),
    ("一点辣都吃不了", None), ("开一辆2018年的卡罗拉", None), ("Allergic to sesame", None),
])
def test_signs_of_change_in_both_languages(text: str, marker: str | None) -> None:
    assert change_marker(text) == marker


def test_numbers_and_common_words_are_not_keys() -> None:
    assert shared_keys("涨薪后每月工资一万四", "每月工资一万二") == {"工资", "月工"}
    assert "2026" not in keys("Moving to Osaka in 2026") and "osaka" in keys("Moving to Osaka in 2026")
    assert shared_keys("Interview at Figma on 2026-05-19", "Lives in Lisbon since 2026") == set()


def _hit(text: str, score: float, session: str) -> SimpleNamespace:
    return SimpleNamespace(text=text, score=score, payload={"session_id": session})


def test_the_memory_sharing_most_keys_is_replaced_and_this_session_is_left_alone() -> None:
    close = [_hit("每月房租三千五", 0.95, "s1"), _hit("每月工资一万二", 0.93, "s1"),
             _hit("工资卡是招商银行的", 0.90, "s2")]
    assert replaced_by("涨薪后每月工资一万四", close, session_id="s2").text == "每月工资一万二"
    assert replaced_by("涨薪后每月工资一万四", close[2:], session_id="s2") is None
    assert replaced_by("每月工资一万四", close, session_id="s2") is None  # no sign of change
