"""An analyst's own measure, its input rows and its oracle: the first_relevant_rank model of the project
tests (tests/package/test_project.py, and from the installed wheel, tests/package/test_wheel.py)."""

from __future__ import annotations

FIRST_RELEVANT = """\
-- name: first_relevant_rank
-- version: 1
-- stage: evaluate
-- grain: study, system, query
-- audits: not_null(study, system, query, first_relevant); unique_grain; accepted_range(first_relevant, 1, )
-- description: The rank of each query's first relevant document in each system's ranking (a query whose
--   ranking holds no relevant document has no row); RR is its reciprocal.
-- columns: first_relevant = "The rank (from 1) of the first relevant document of the ranking"
SELECT study, system, query, min(rank) AS first_relevant
FROM models.judged_ranking
WHERE relevant
GROUP BY study, system, query
"""
# (study, system, query, rank, grade, relevant): a's q1 finds its relevant document at rank 3, b's q2 none
JUDGED = [("s", "a", "q1", 1, 0, False), ("s", "a", "q1", 3, 2, True), ("s", "a", "q1", 4, 1, True),
          ("s", "a", "q2", 2, 1, True), ("s", "b", "q1", 1, 1, True), ("s", "b", "q2", 4, 0, False),
          ("s", "b", "q2", 5, -1, False)]  # fmt: skip


def first_relevant(rows: list[tuple]) -> list[list[str]]:
    """The oracle: per (study, system, query), the least rank of a relevant row, as the expected file holds it."""
    found: dict[tuple, int] = {}
    for study, system, query, rank, _, relevant in rows:
        if relevant:
            found[(study, system, query)] = min(rank, found.get((study, system, query), rank))
    return [[*key, str(rank)] for key, rank in sorted(found.items())]


def judged_csv(rows: list[tuple]) -> str:
    lines = ["study,system,query,rank,grade,relevant"]
    return "\n".join(lines + [",".join(str(v).lower() for v in row) for row in rows]) + "\n"
