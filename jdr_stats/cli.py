"""Command line: ``python -m jdr_stats demo`` and ``python -m jdr_stats fit``.

``fit FILE.csv --y COL --a COLS --b COLS --rank R|auto [--sparsity S1,S2]
[--rank-method robust|wald|chi2|general|permutation|ladle] [--chunksize ROWS]`` fits the joint
estimator to a CSV file and prints the summary (with the rank tests when
``--rank auto``).  A ``.parquet`` file (or a folder of them) is streamed in
record batches, and ``--chunksize`` streams a CSV file in chunks: the fit
then uses exact merged moments and never holds the file in memory.  Bad arguments print a
one-line error and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .datasets import load_ais
from .model import JointDimReduction

__all__ = ["main", "demo_model"]

EXIT_USAGE = 2


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit code 2
        raise _UsageError(message)


def _columns(text: str) -> list[str]:
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise argparse.ArgumentTypeError(f"expected comma-separated column names; got {text!r}")
    return cols


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def _rank(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'rank must be an integer or "auto"; got {text!r}') from None


def _sparsity(text: str) -> tuple[int, int]:
    parts = text.split(",")
    try:
        s1, s2 = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"sparsity must be two integers S1,S2; got {text!r}"
        ) from None
    return s1, s2


def _build_parser() -> _Parser:
    parser = _Parser(prog="python -m jdr_stats", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("demo", help="fit the joint estimator to the bundled ais data")
    fit = sub.add_parser("fit", help="fit the joint estimator to a CSV file")
    fit.add_argument("file", help="CSV file with a header row")
    fit.add_argument("--y", required=True, help="response column")
    fit.add_argument("--a", required=True, type=_columns, help="block a columns, comma-separated")
    fit.add_argument("--b", required=True, type=_columns, help="block b columns, comma-separated")
    fit.add_argument("--rank", required=True, type=_rank, help='rank r, or "auto"')
    fit.add_argument("--sparsity", type=_sparsity, default=None, help="S1,S2 for a sparse fit")
    fit.add_argument("--no-standardize", action="store_true", help="centre only, do not whiten")
    fit.add_argument("--missing", choices=("none", "drop", "raise"), default="none")
    fit.add_argument("--rank-method", choices=("robust", "wald", "chi2", "general", "permutation", "ladle"),
                     default="robust",
                     help="how --rank auto chooses the rank: sequential tests of this method "
                          "or the ladle (default robust)")
    fit.add_argument("--seed", type=int, default=None,
                     help="seed of the permutation test or the ladle")
    fit.add_argument("--chunksize", type=_positive, default=None,
                     help="stream the file in chunks of this many rows (exact moments; "
                     "a .parquet file is always streamed)")
    return parser


def demo_model() -> JointDimReduction:
    """The demo model: LBM on logged blood and body-build blocks of ``ais``."""

    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    return JointDimReduction(ais["LBM"], blood, body)


def _streamed_model(args: argparse.Namespace):
    """A model streamed from a Parquet file/folder, or a CSV file in chunks."""
    from pathlib import Path

    from ._sources import CSVSource
    from .model import JointDimReduction

    overlap = set(args.a) & set(args.b)
    if overlap:
        raise ValueError(f"columns {sorted(overlap)} are in both --a and --b")
    if args.missing == "drop":
        raise ValueError('--missing drop needs the rows in memory; streamed input (Parquet, '
                         '--chunksize) refuses NaN')
    path = Path(args.file)
    if path.suffix == ".parquet" or path.is_dir():
        try:
            return JointDimReduction.from_parquet(path, y=args.y, a=args.a, b=args.b,
                                                  batch_rows=args.chunksize)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    if not path.is_file():
        raise ValueError(f"file not found: {args.file}")
    src = CSVSource(path, y=args.y, a=args.a, b=args.b, batch_rows=args.chunksize)
    return JointDimReduction._from_source(src, origin=f"the CSV file {args.file!r} (chunked)")


def _run_fit(args: argparse.Namespace) -> str:

    from pathlib import Path

    if args.chunksize is not None or args.file.endswith(".parquet") or Path(args.file).is_dir():
        model = _streamed_model(args)
        res = model.fit(args.rank, standardize=not args.no_standardize, sparsity=args.sparsity,
                        rank_method=args.rank_method, seed=args.seed)
        return str(res.summary())
    try:
        data = pd.read_csv(args.file)
    except FileNotFoundError:
        raise ValueError(f"file not found: {args.file}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {args.file} as CSV: {exc}") from None
    wanted = [args.y, *args.a, *args.b]
    missing_cols = [c for c in wanted if c not in data.columns]
    if missing_cols:
        raise ValueError(f"{args.file} has no column(s) {missing_cols}; it has {list(data.columns)}")
    overlap = set(args.a) & set(args.b)
    if overlap:
        raise ValueError(f"columns {sorted(overlap)} are in both --a and --b")
    model = JointDimReduction(
        data[args.y], data[args.a], data[args.b], missing=args.missing
    )
    res = model.fit(
        args.rank,
        standardize=not args.no_standardize,
        sparsity=args.sparsity,
        rank_method=args.rank_method,
        seed=args.seed,
    )
    return str(res.summary())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "demo":
            res = demo_model().fit(2)
            print("LBM of 202 athletes on log blood (a) and log body-build (b) measurements\n")
            print(res.summary())
        else:
            print(_run_fit(args))
    except _UsageError as exc:
        print(f"jdr_stats: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError) as exc:
        print(f"jdr_stats: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0
