"""Settings for the whole suite.

Hypothesis's per-example deadline is off everywhere: tests assert behaviour, never speed
(speed is measured by bench/), and a loaded machine made a correct test fail on time alone.
"""

from hypothesis import settings

settings.register_profile("farkle-logs", deadline=None)
settings.load_profile("farkle-logs")
