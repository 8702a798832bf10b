"""The greedy facet-coverage selection of seed 000: the one piece of Python in a selection, as a pure
function of lists, and the SQL function models call it through (evidence_greedy, registered in the
package's __init__.py).

The objective: F(S) = [sum_f max_{d in S} g(f, d) - sum_{{d, e} in S} p(d, e)] / (m + 1), with g the
normalised positive cosine of facet f and document d, p(d, e) = max(0, d.e) / C(5, 2), and max over the
empty set 0 (the SQL models compute the same F with the coverage_objective macro). Greedy: start empty;
for `budget` steps add the unselected member with the largest F(S + d) - F(S); exact ties go to the
smaller doc_id; the selection order is the ranking. Everything the selection reads is computed in SQL
(models/evidence/).

`record_program` stores the SHA-256 of the selection's source in raw.evidence_programs. The model that
calls the function passes that row's hash, which the function checks against its own source; so an
edited program changes the model's fingerprint (through meta.sources) and the freeze, or refuses to run.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankhouse.loaders.sources import LoadResult
    from rankhouse.warehouse import Warehouse

PROGRAM = "evidence_greedy"  # its row in raw.evidence_programs


def objective(gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], members: Sequence[int]) -> float:
    """F(S) of the members (indices into the pool) with `gains[f][i]` per facet f and `penalties[i][j]`.

    Both sums are exactly rounded (math.fsum), so F(S) does not depend on the order of S.

    >>> objective([[1.0, 0.5], [0.0, 1.0]], [[0.0, 0.1], [0.1, 0.0]], [0, 1])
    0.95
    """
    covered = [max((row[i] for i in members), default=0.0) for row in gains]
    pairs = [penalties[i][j] for k, i in enumerate(members) for j in members[k + 1 :]]
    return (math.fsum(covered) - math.fsum(pairs)) / len(gains)


def greedy_steps(
    doc_ids: Sequence[str], gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], budget: int
) -> list[tuple[str, float]]:
    """The greedy selection with each step's gain F(S + d) - F(S): [(doc_id, gain), ...] in selection order.

    `gains` has one row per facet and `penalties` one row per document, both in the order of `doc_ids`.
    Candidates are tried in ascending doc_id and only a strictly larger gain replaces the best, so an
    exact tie goes to the smaller doc_id. A pool smaller than the budget is selected whole.

    >>> greedy_steps(["b", "a"], [[1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], 5)
    [('a', 1.0), ('b', 0.0)]
    """
    n = len(doc_ids)
    if not gains or any(len(row) != n for row in gains) or len(penalties) != n or any(len(r) != n for r in penalties):
        raise ValueError(f"evidence_greedy: {len(gains)} gain rows and {len(penalties)} penalty rows for {n} documents")
    if len(set(doc_ids)) != n:
        raise ValueError("evidence_greedy: a doc_id is listed twice")
    values = [v for row in (*gains, *penalties) for v in row]
    if not all(v is not None and math.isfinite(v) for v in values):
        raise ValueError("evidence_greedy: a gain or penalty is missing or not finite")
    order = sorted(range(n), key=lambda i: doc_ids[i])
    chosen: list[int] = []
    steps: list[tuple[str, float]] = []
    current = 0.0  # F of the empty set
    for _ in range(min(budget, n)):
        best, best_gain = -1, -math.inf
        for i in order:
            if i in chosen:
                continue
            gain = objective(gains, penalties, [*chosen, i]) - current
            if gain > best_gain:
                best, best_gain = i, gain
        chosen.append(best)
        current = objective(gains, penalties, chosen)
        steps.append((doc_ids[best], best_gain))
    return steps


def greedy_select(
    doc_ids: Sequence[str], gains: Sequence[Sequence[float]], penalties: Sequence[Sequence[float]], budget: int
) -> list[str]:
    """The selected doc_ids in selection order (see greedy_steps)."""
    return [doc_id for doc_id, _ in greedy_steps(doc_ids, gains, penalties, budget)]


@functools.cache
def program_sha256() -> str:
    """SHA-256 of the selection's source: objective, greedy_steps and greedy_select (read once, at import)."""
    source = "\n".join(inspect.getsource(f) for f in (objective, greedy_steps, greedy_select))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


program_sha256()  # the source as imported, not as a later edit of the file would read


def greedy_udf(doc_ids: list, gains: list, penalties: list, budget: int, program: str | None) -> list[str]:
    """The SQL function evidence_greedy(doc_ids, gains, penalties, budget, program): greedy_select, refusing
    a program other than the one recorded."""
    if program is None:
        raise ValueError(
            "evidence_greedy: no program recorded in raw.evidence_programs (the study's evidence_vectors step "
            "records it; or call rankhouse.studies.evidence.select.record_program)"
        )
    if program != program_sha256():
        raise ValueError(
            f"evidence_greedy: the selection program changed since it was recorded (recorded {program[:16]}..., "
            f"now {program_sha256()[:16]}...): prepare the study again"
        )
    if doc_ids is None or gains is None or penalties is None or budget is None:
        raise ValueError("evidence_greedy: a task without documents, gains or penalties")
    return greedy_select(doc_ids, gains, penalties, budget)


def record_program(wh: Warehouse) -> LoadResult:
    """The selection program's SHA-256 into raw.evidence_programs (a no-op when unchanged)."""
    from rankhouse.loaders.sources import LoadResult, loaded_sha, record_source

    sha = program_sha256()
    table, source = "raw.evidence_programs", "rankhouse/studies/evidence/select.py"
    if loaded_sha(wh, "meta.sources", table, PROGRAM) == sha:
        return LoadResult(table, PROGRAM, source, sha, 0, "unchanged")
    with wh.transaction():
        wh.sql(f"DELETE FROM {table} WHERE program = ?", [PROGRAM])
        wh.sql(f"INSERT INTO {table} VALUES (?, ?)", [PROGRAM, sha])
        record_source(wh, "meta.sources", table, PROGRAM, source, sha, 1, "evidence.program")
    return LoadResult(table, PROGRAM, source, sha, 1, "loaded")
