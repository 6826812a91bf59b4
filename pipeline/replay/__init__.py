"""Replay: games checked event by event against the rules (see engine.py)."""

from pipeline.replay.engine import Replayer, ReplayOutput, audit_items, winner_names
from pipeline.replay.state import TraceStep

__all__ = ["Replayer", "ReplayOutput", "TraceStep", "audit_items", "winner_names"]
