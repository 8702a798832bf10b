"""The retrieval study's report: the shared sections only (results with Wilson intervals, paired contrasts,
per class); recognising its output directories."""

from __future__ import annotations

from rankhouse.report.sections import Folder


def recognise(folder: Folder) -> bool:
    """An output directory of the retrieval writer (one written before provenance.json named its writer): its
    duplicate counts, without the named-features writer's extractor."""
    return "duplicates" in folder.results and "extractor" not in folder.results
