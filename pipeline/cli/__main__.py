"""`python -m pipeline.cli ...` runs the console script (handy without the venv's bin/ on PATH)."""
from pipeline.cli.main import app

app(prog_name="farkle-logs")
