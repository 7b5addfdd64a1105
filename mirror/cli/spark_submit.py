"""Entry file for ``spark-submit``: the ``mm2`` command line, run as a Spark application.

    spark-submit --master spark://host:7077 "$(python -m mirror.cli.spark_submit --path)" \
        backfill mm2.properties --source A --target B

Without ``--master`` among mm2's own arguments the job uses the master spark-submit was given.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    if argv == ["--path"]:
        print(Path(__file__).resolve())
        return
    from mirror.cli.app import main as mm2_main

    mm2_main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
