"""Solutions to the exercises of notebook 03 (episodic memory in SQLite)."""


def exercise_03_1():
    return """
        SELECT session_id, COUNT(*) AS facts
        FROM facts
        GROUP BY session_id
        ORDER BY MIN(id)
    """


def exercise_03_2():
    def escape_like(keyword):
        # the escape character itself first, then the two wildcards
        return keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escape_like


def exercise_03_3():
    return "最近"
