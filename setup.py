"""Packaging that pyproject.toml cannot say: the top-level `sql/` ships as package `pipeline.sql`.

`sql/` is the stats layer of the design and stays at the top of the repository; mapping it to
a subpackage puts the models inside the wheel, where `importlib.resources` reads them.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["pipeline", "pipeline.*"]) + ["pipeline.sql"],
    package_dir={"pipeline.sql": "sql"},
)
