"""The output formats and defaults of `rankhouse eval` and `rankhouse compare` (evaluation.py and
comparison.py, which import them from here): in a module of their own, which imports nothing, so that the
commands' options are declared without importing the evaluation (the command line's start stays light).

    >>> EVAL_FORMATS[0], COMPARE_FORMATS[0], MAX_PLACES
    ('text', 'text', 17)
"""

EVAL_FORMATS = ("text", "json", "jsonl", "csv", "markdown", "latex")  # `rankhouse eval --format`
MAX_PLACES = 17  # `rankhouse eval --places`: a double's digits, and then some
COMPARE_FORMATS = ("text", "markdown", "latex", "json", "csv")  # `rankhouse compare --format`
DEFAULT_SEED = 20261014  # `rankhouse compare --seed`: the seed of its bootstrap plan
