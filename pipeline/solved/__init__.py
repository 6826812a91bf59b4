"""The solved two-player game on disk and in bulk: the tables (`tables`: shipped for the
built-ins, solved once and cached for any other ruleset) and the judge of a dataset's
two-player choices (`judge`, the Python model `int_choices_judged` of the stats SQL).

The solver itself is pure and lives in `pipeline.strategy.race`; this package reads and
writes its tables, so `rules show` and `advise` load a built-in's table without the stats
machinery (DuckDB, pyarrow): the cache helpers of `pipeline.stats.cache` are imported only
for a ruleset that is not shipped.
"""
