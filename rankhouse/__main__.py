"""`python -m rankhouse` is the `rankhouse` command."""

from rankhouse.cli import main

main()
