"""Solutions to the exercises of notebook 02 (the four memory layers)."""

from gya_memory import ProceduralMemory, Procedure
from gya_memory.teaching import DIETARY_ADVICE, dietary_advice


def exercise_02_1():
    return {"a": "episodic", "b": "semantic", "c": "procedural", "d": "working", "e": "semantic"}


def exercise_02_2():
    procedures = ProceduralMemory()
    procedures.register(DIETARY_ADVICE)  # version 1, as in the notebook

    known = ("咖啡", "糖", "coffee", "sugar", "sweet")

    def dietary_advice_v2(restriction, occasion):
        if not any(word in restriction.lower() for word in known):
            return f"关于「{restriction}」我还没有经验：{occasion}时你最想避开哪些食物？"
        return dietary_advice(restriction, occasion)

    old = procedures.get("dietary_advice")
    procedures.register(Procedure(old.name, old.description, old.steps, version=2,
                                  run=dietary_advice_v2))
    return procedures


def exercise_02_3():
    pref = "The user currently prefers fewer sweet drinks"
    return [
        {"role": "system", "content": f"You are a helpful lifestyle assistant.\nAbout the user: {pref}"},
        {"role": "user", "content": "What should I watch at the team dinner tonight?"},
        {"role": "tool", "content": dietary_advice("fewer sweet drinks", "team dinner")},
    ]
