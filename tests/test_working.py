"""Working memory: the messages of one call, copies, and trimming to a budget."""

from __future__ import annotations

import pytest

from gya_memory.working import BudgetError, WorkingMemory, approx_tokens


def chat(turns: int) -> WorkingMemory:
    wm = WorkingMemory(system="你是一个贴心的助手。")
    for i in range(turns):
        wm.add("user", f"问题{i} question {i}")
        wm.add("assistant", f"回答{i} answer {i}")
    return wm


def test_snapshot_is_a_copy() -> None:
    wm = chat(1)
    snap = wm.snapshot()
    snap[1]["content"] = "changed"
    snap.append({"role": "user", "content": "extra"})
    assert wm.snapshot()[1]["content"] == "问题0 question 0"
    assert len(wm) == 3


def test_trim_drops_oldest_turns_first_and_keeps_system() -> None:
    wm = chat(4)
    before = wm.snapshot()
    report = wm.trim(max_chars=60)
    after = wm.snapshot()
    assert after[0] == before[0]  # the system message stays
    assert [m["content"] for m in after[1:]] == [m["content"] for m in before[len(before) - len(after) + 1:]]
    assert report.dropped == before[1: 1 + len(report.dropped)]
    assert report.dropped_turns == len(report.dropped) // 2
    assert report.after == wm.size() <= 60 < report.before
    assert "dropped" in str(report) and report.unit == "chars"


def test_trim_within_budget_drops_nothing() -> None:
    wm = chat(2)
    report = wm.trim(max_chars=10_000)
    assert report.dropped == [] and len(wm) == 5


def test_trim_by_tokens_with_custom_counter() -> None:
    wm = chat(3)
    report = wm.trim(max_tokens=3, count_tokens=lambda text: 1)
    assert report.unit == "tokens"
    # system (1) + the latest turn (2) = 3 tokens
    assert [m["role"] for m in wm.snapshot()] == ["system", "user", "assistant"]
    assert wm.snapshot()[1]["content"].startswith("问题2")


def test_trim_never_drops_the_latest_turn_and_changes_nothing_on_error() -> None:
    wm = chat(2)
    before = wm.snapshot()
    with pytest.raises(BudgetError, match="Nothing was dropped"):
        wm.trim(max_chars=5)
    assert wm.snapshot() == before


def test_turn_groups_tool_messages() -> None:
    wm = WorkingMemory()
    wm.add("user", "old question")
    wm.add("assistant", "calling a tool")
    wm.add("tool", "tool result")
    wm.add("user", "new")
    report = wm.trim(max_chars=3)
    assert [m["role"] for m in report.dropped] == ["user", "assistant", "tool"]
    assert wm.snapshot() == [{"role": "user", "content": "new"}]


@pytest.mark.parametrize("kwargs", [{}, {"max_chars": 10, "max_tokens": 10}, {"max_chars": -1}, {"max_chars": 1.5}])
def test_trim_argument_errors(kwargs) -> None:
    with pytest.raises(ValueError):
        chat(1).trim(**kwargs)


def test_message_validation() -> None:
    wm = WorkingMemory(system="s")
    with pytest.raises(ValueError, match="role must be one of"):
        wm.add("robot", "hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="content must be a string"):
        wm.add("user", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="system message must come first"):
        wm.add("system", "again")
    assert wm.system == {"role": "system", "content": "s"}
    assert WorkingMemory().system is None


def test_clear_keeps_only_system() -> None:
    wm = chat(2)
    wm.clear()
    assert wm.snapshot() == [{"role": "system", "content": "你是一个贴心的助手。"}]


def test_approx_tokens_counts_cjk_per_character() -> None:
    assert approx_tokens("戒咖啡") == 3
    assert approx_tokens("cut down on coffee.") == 5
    assert approx_tokens("我在戒 coffee!") == 5


def test_content_with_nul_or_lone_surrogate_is_refused_and_budgets_are_ints() -> None:
    import pytest

    from gya_memory.working import WorkingMemory

    wm = WorkingMemory(system="s")
    for bad in ("a\x00b", "a\ud800"):
        with pytest.raises(ValueError, match="content"):
            wm.add("user", bad)
    wm.add("assistant", "")  # an empty reply is fine
    for budget in (float("nan"), 1.5, True, -1):
        with pytest.raises(ValueError, match="budget"):
            wm.trim(max_chars=budget)  # type: ignore[arg-type]
