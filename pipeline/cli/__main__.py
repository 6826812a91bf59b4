"""`python -m pipeline.cli ...` runs the console script (handy without the venv's bin/ on PATH)."""

from pipeline.cli.entry import main

main()
