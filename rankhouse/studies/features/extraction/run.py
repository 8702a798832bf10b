"""The generators `feature_extraction` and `requirement_interpretation` (rankhouse/generators.py), and
what `rankhouse features extract` runs.

    [generate.features]
    kind = "feature_extraction"          # every train and test message of the corpus
    corpus = "banking77"
    schema = "banking77_features"        # the name the schema input was loaded under
    provider = "minilm"                  # or "http"

    [generate.requirements]
    kind = "requirement_interpretation"  # every phrase of raw.group_paraphrases of the corpus
    corpus = "banking77"
    schema = "banking77_features"
    provider = "minilm"

Each extracts what the store lacks for (corpus, schema SHA-256, extractor) and nothing else, so a
restart continues where a run stopped. The smoke batch first (seed 004's operational plan: "Start with a
train-only smoke batch to check response types and cost"): with the http provider, a full extraction
(values or E3 readings) does not start until the store holds a completed training row of this schema and
extractor, which only a smoke batch (`rankhouse features extract PROTOCOL --smoke N`) or a run that was told
to go without one writes first; `--no-smoke REASON` (on `features extract` and `study prepare`, or
RANKHOUSE_EXTRACT_NO_SMOKE=REASON) says why not, and the reason is recorded (meta.sources `extraction.no_smoke`).
If rows are still missing at the end (the run stopped on errors or at the cost ceiling), the generator
raises an error that says how many and how to resume: an incomplete extraction never reaches a freeze
(models/features/staging/feature_coverage.sql refuses it too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rankhouse.endpoint import Settings
from rankhouse.errors import RankhouseError, did_you_mean
from rankhouse.loaders.sources import writes_inputs
from rankhouse.progress import SILENT, Meter
from rankhouse.studies.features.extraction import minilm, store
from rankhouse.studies.features.extraction.store import REQUIREMENTS, VALUES, Job
from rankhouse.warehouse import Warehouse

PROVIDERS = ("minilm", "http")
KINDS = {"feature_extraction": VALUES, "requirement_interpretation": REQUIREMENTS}


@dataclass(frozen=True)
class Extraction:
    """What one generator run left: the job, rows in the store of all, and the error if rows are missing."""

    job: Job
    complete: int
    total: int
    missing: str | None


def _option(options: dict, name: str) -> str:
    value = options.get(name)
    if not isinstance(value, str) or not value:
        raise RankhouseError(f"the extraction option {name} must be a non-empty string, not {value!r}")
    return value


@writes_inputs
def extract(wh: Warehouse, kind: str, options: dict, settings: Settings, say: Callable[[str], None],
            encoder: Callable[[], object], smoke: int | None = None,
            meter: Callable[..., Meter] = SILENT.meter, no_smoke: str | None = None) -> Extraction:  # fmt: skip
    """Extract what the store lacks for a generator's options (`smoke`: only the first N training rows);
    `meter` makes the progress of the http provider's rows (a sink's, rankhouse/progress.py); `no_smoke`:
    why a full http extraction may start without a smoke batch (see the module's docstring)."""
    corpus, provider = _option(options, "corpus"), _option(options, "provider")
    if provider not in PROVIDERS:
        raise RankhouseError(f"unknown extraction provider {provider!r}{did_you_mean(provider, PROVIDERS)}; "
                             f"known: {', '.join(PROVIDERS)}")  # fmt: skip
    schema = store.load_schema(wh, _option(options, "schema"))
    if provider == "http":
        from rankhouse.studies.features.extraction.http import Endpoint

        endpoint = Endpoint.from_env()
        extractor = endpoint.extractor
    else:
        extractor = minilm.extractor_id(encoder())
    job = Job(corpus, schema, extractor, provider, KINDS[kind])
    store.check_texts(wh, job)
    if job.kind == VALUES:
        tasks = store.message_tasks(wh, corpus, "train") + store.message_tasks(wh, corpus, "test")
    else:
        tasks = store.requirement_tasks(wh, corpus)
    if not tasks:
        what = "messages (raw.documents, raw.queries)" if job.kind == VALUES else "phrases (raw.group_paraphrases)"
        raise RankhouseError(f"corpus {corpus!r} has no {what} to extract; load them first")
    done = store.completed(wh, job)
    pending = [t for t in tasks if not store.is_done(t, done)]
    if smoke is not None:
        first = {t.row_index for t in tasks if t.split == "train"}
        first = set(sorted(first)[:smoke])
        pending = [t for t in pending if t.split == "train" and t.row_index in first]
    if provider == "http" and smoke is None and pending:
        smoke_first(wh, job, no_smoke)
    batch = f"a smoke batch of the first {smoke:,} training rows: " if smoke is not None else ""
    say(f"{job.describe()}: {len(tasks) - len(tasks_missing(tasks, done)):,} of {len(tasks):,} rows in the store; "
        f"{batch}{len(pending):,} to extract")  # fmt: skip
    stopped = None
    if pending or store.needs_digest(wh, job):
        store.mark_writing(wh, job)
        try:
            shown = (len(pending), 0) if smoke is not None else (len(tasks), len(tasks) - len(pending))
            stopped = _run(wh, job, pending, settings, say, encoder, smoke, shown, meter)
        finally:
            store.record_digests(wh, job)
    done = store.completed(wh, job)
    missing = store.missing_message(job, tasks, done, stopped)
    return Extraction(job, len(tasks) - len(tasks_missing(tasks, done)), len(tasks), missing)


NO_SMOKE = "extraction.no_smoke"  # meta.sources: why a full extraction started without a smoke batch


def smoke_first(wh: Warehouse, job: Job, no_smoke: str | None) -> None:
    """Refuse to start a full http extraction before a smoke batch (the store holds no completed training
    row of the schema and extractor), unless `no_smoke` says why; a reason is recorded, once per job."""
    values = Job(job.corpus, job.schema, job.extractor, job.provider, VALUES)
    if any(split == "train" for split, _ in store.completed(wh, values)):
        return
    reason = (no_smoke or "").strip()
    if not reason:
        raise RankhouseError(
            f"{job.describe()}: no smoke batch has completed for this schema and extractor; seed 004 starts with "
            "a train-only smoke batch to check response types and cost: run `rankhouse features extract PROTOCOL "
            "--smoke 20` first, or say why not with --no-smoke REASON (on `features extract` or `study prepare`; "
            "or RANKHOUSE_EXTRACT_NO_SMOKE=REASON)"
        )
    from rankhouse.loaders.sources import record_source, sha256_bytes

    with wh.transaction():
        record_source(wh, "meta.sources", NO_SMOKE, values.key, reason, sha256_bytes(reason.encode()), 0, NO_SMOKE)


def tasks_missing(tasks: list[store.Task], done: set) -> list[store.Task]:
    return [t for t in tasks if not store.is_done(t, done)]


def _run(wh: Warehouse, job: Job, pending: list[store.Task], settings: Settings, say: Callable[[str], None],
         encoder: Callable[[], object], smoke: int | None, shown: tuple[int, int],
         meter: Callable[..., Meter]) -> str | None:  # fmt: skip
    """Extract `pending` with the job's provider; why it stopped early (None: it did not). `shown`: the
    progress's (total, done) rows."""
    if not pending:
        return None
    if job.provider == "minilm":
        stand_in = minilm.StandIn(wh, job.corpus, job.schema.questions, encoder(), say)
        write = minilm.extract_values if job.kind == VALUES else minilm.interpret
        say(f"{job.describe()}: {write(wh, job, stand_in, pending):,} rows written (the minilm stand-in rule)")
        return None
    from rankhouse.studies.features.extraction.http import Endpoint
    from rankhouse.studies.features.extraction.scheduler import run_http

    endpoint = Endpoint.from_env()
    say(f"http provider: {endpoint.describe()}; {settings.describe()}")
    label = "smoke batch" if smoke is not None else ("extracting" if job.kind == VALUES else "interpreting")
    progress = meter(label, *shown, store.spent(wh, job))
    report = run_http(wh, job, pending, endpoint, settings, progress)
    progress.finish()
    say(f"{job.describe()}: {report.completed:,} rows completed in {report.attempts:,} attempts, "
        f"USD {report.cost:.4f} estimated this run")  # fmt: skip
    return report.stopped


def extraction_slice(job: Job) -> list[tuple[str, dict, str]]:
    """The rows of the store a job's study reads: (table, key columns, meta.sources name), for the study's
    slice of the inputs (generators.Context.produced)."""
    key = {"corpus": job.corpus, "extractor": job.extractor, "schema_sha256": job.schema.sha256}
    return [(table, key, job.key) for table in store.TABLES[job.kind]]


def _generate(context, key: str, options: dict, kind: str) -> None:  # noqa: ANN001 - generators.Context
    import os

    done = extract(
        context.wh,
        kind,
        options,
        Settings.from_env(),
        context.say,
        lambda: context.encoder,
        meter=context.meter,
        no_smoke=context.no_smoke or os.environ.get("RANKHOUSE_EXTRACT_NO_SMOKE"),
    )
    for table, columns, source in extraction_slice(done.job):
        context.produced(table, columns, source)
    if done.missing:
        raise RankhouseError(f"[generate.{key}]: {done.missing}")


def generate_features(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `feature_extraction` generator: every train and test message of `options["corpus"]`."""
    _generate(context, key, options, "feature_extraction")


def generate_requirements(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The `requirement_interpretation` generator: every E3 phrase of `options["corpus"]`."""
    _generate(context, key, options, "requirement_interpretation")
