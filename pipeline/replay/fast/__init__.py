"""The fast replay path: clean games replayed over integer columns by a compiled kernel.

Most games in real and simulated logs have no finding at all. For those, replay is a small
state machine over integers (whose turn, which phase, running sums, a table lookup per
roll and keep), and that loop can run compiled. Everything unusual is the reference
engine's job (`pipeline.replay.engine.Replayer`): the kernel gives up on a game at its
first would-be finding, and the caller hands that game, whole, to the reference. So the
fast path never has to explain anything, and correctness rests on the reference; tests
hold the two to identical output tables.

Modules, in the order data flows:
- `scoring`: a ruleset's score table as dense integer arrays the kernel can index;
- `state`: the per-game and per-player state arrays, growable, kept across batches;
- `kernel`: the loop itself (numba-compiled; its pure-Python source is the reference);
- `arrow`: an Arrow table of events in, the derived Arrow tables out (ingest's use).

Importing this package does not import numba; `kernel.compiled()` does, on first use.
"""
