"""Solutions to notebook 06's exercises (see README.md in this folder)."""

from __future__ import annotations


def exercise_06_1():
    def reach_judge(scores, floor, top_k=3):
        ranked = sorted(scores, key=scores.get, reverse=True)
        return [m for m in ranked if scores[m] >= floor][:top_k]  # the floor, then the pool
    return reach_judge


def exercise_06_2():
    def classify(answer, placed, facts):
        text = answer.lower()
        found = [m for m, terms in facts.items() if any(t.lower() in text for t in terms)]
        if any(m not in placed for m in found):
            return "invented"
        if found:
            return "used"
        if "不知道" in answer or "don't know" in text:
            return "admits"
        return "no user facts"
    return classify


def exercise_06_3():
    # In the notebook:
    #   hits = store[USER_ZH].candidates(drinks, top_k=1)
    #   assemble(drinks, hits, Policy(language="zh", placement="system")).placed[0].message_index
    return 0


def exercise_06_4():
    # agent = MemoryAgent(store["user-zh-new"], llm, Policy(language="zh", no_hit="omit"))
    # t = agent.ask("我的车停在哪个车位来着？")
    # t.messages == agent.ask("我的车停在哪个车位来着？", trigger="none").messages  -> True: no note
    # t.replaced is None  -> the guard only runs with no_hit="say_so"
    return "neither"
