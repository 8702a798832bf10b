# The types of rankhouse/__init__.py, whose names are imported on first use (lazily, for a light start).
from rankhouse import errors as errors
from rankhouse.api import ComparisonResult as ComparisonResult
from rankhouse.api import Connection as Connection
from rankhouse.api import EvaluationResult as EvaluationResult
from rankhouse.api import Frozen as Frozen
from rankhouse.api import FusionResult as FusionResult
from rankhouse.api import Study as Study
from rankhouse.api import StudyEvaluation as StudyEvaluation
from rankhouse.api import StudyStatus as StudyStatus
from rankhouse.api import Table as Table
from rankhouse.api import compare as compare
from rankhouse.api import connect as connect
from rankhouse.api import evaluate as evaluate
from rankhouse.api import fuse as fuse

__version__: str
__all__: list[str]
