"""Solutions to the exercises of notebook 01 (the stateless model)."""


def exercise_01_1():
    def remember(system, facts, question):
        lines = [system] + [f"- {fact}" for fact in facts]
        return [{"role": "system", "content": "\n".join(lines)},
                {"role": "user", "content": question}]
    return remember


def exercise_01_2():
    # Keeping the oldest turn means keeping every turn: the whole conversation fits.
    from gya_memory import WorkingMemory

    from gya_memory.teaching.exercises.nb01 import HISTORY_ZH, QUESTION_ZH, SYSTEM_ZH

    wm = WorkingMemory(system=SYSTEM_ZH)
    for role, text in [*HISTORY_ZH, ("user", QUESTION_ZH)]:
        wm.add(role, text)
    return wm.size()  # every character of every message: 119


def exercise_01_3():
    def assemble(sessions, request):
        history = sessions.get(request["session_id"], [])
        return [*history, {"role": "user", "content": request["input"]}]
    return assemble
