"""Command line: ``python -m jdr_stats demo`` and ``python -m jdr_stats fit``.

``fit FILE --y COL --a COLS --b COLS --rank R|auto [--rank-method
robust|wald|chi2|general|permutation|ladle]`` (or ``--formula
"y ~ a1 + a2 | b1 + b2"`` instead of ``--y/--a/--b``, or ``--block
NAME=COLS`` once per block: three or more blocks, or a formula with two or
more bars, fit the K-block estimator, ``--rank`` then also
``NAME=R,NAME=R,...``) fits the joint estimator to a CSV or Parquet file
and prints its summary; ``--bootstrap N`` and ``--support`` add the
bootstrap and the support selection, ``--format
text|json|csv|latex|html`` and ``--output FILE`` choose the output (HTML and
LaTeX as complete documents, CSV as one long table), ``--output-dir
DIR`` writes one CSV file per table, ``--features-out FILE`` writes the
reduced features.  Bad arguments print a one-line error in terms of the
flags and exit with code 2; a closed pipe (``| head``) ends the output
quietly.

A CSV file (``--sep`` for another separator) is read into memory; a
Parquet file (or a folder of them) too when its selected columns take at
most ``jdr_stats.config.CLI_IN_MEMORY_BYTES`` as float64, and is streamed
in record batches otherwise.  ``--chunksize`` (or ``--stream``) streams
either: the fit then uses exact merged moments and never holds the file in
memory; ``--bootstrap-method poisson`` bootstraps streamed input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, cast

import numpy as np
import pandas as pd

from . import policy
from ._version import __version__
from .datasets import load_ais
from .estimation._estimate import WhiteningKind
from .exceptions import JDRWarning
from .fitting._model_inputs import check_block_names, stream_model
from .inference.rank_tests import RANK_SELECTORS
from .io import _cli_input as cin
from .model import JointDimReduction
from .report._report import csv_text, html_document, latex_document, write_csv_dir
from .runtime._atomic import write_text
from .runtime._validation import normalize_seed
from .summary import json_safe
from .whitenings import WHITENING_METHODS, WHITENINGS

__all__ = ["demo_model", "main", "results_to_dict"]

EXIT_USAGE = 2
FORMATS = ("text", "json", "csv", "latex", "html")
DESCRIPTION = (
    "Joint dimension reduction of a response on two or more blocks of variables, "
    "from a CSV or Parquet file. 'demo' fits the bundled ais data; 'fit FILE --y COL "
    "--a COLS --b COLS --rank R' fits your file, '--block NAME=COLS' (repeated) "
    "names two or more blocks (python -m jdr_stats fit --help)."
)


class _Refused(Exception):
    """A procedure asked with a flag was refused after the fit succeeded: the
    fit is still written (``text``), the refusals go to standard error."""

    def __init__(self, text: str, refusals: list[str]) -> None:
        super().__init__("; ".join(refusals))
        self.text = text
        self.refusals = refusals


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit code 2
        raise _UsageError(message)


def _columns(text: str) -> list[str]:
    if text.strip().startswith("re:"):  # one regular expression (it may hold commas)
        return [text.strip()]
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


def _whitening(args: argparse.Namespace) -> WhiteningKind:
    """--whitening, with --no-standardize as its older spelling of 'none'."""
    if args.no_standardize and args.whitening not in (None, "none"):
        raise _UsageError(
            f"--no-standardize and --whitening {args.whitening} contradict each other; "
            "pass one of them"
        )
    if args.no_standardize:
        return "none"
    return "auto" if args.whitening is None else cast(WhiteningKind, args.whitening)


def _rank(text: str) -> int | str | dict[str, int]:
    if text == "auto":
        return text
    try:
        if "=" in text:  # one rank per named block: genes=2,lipids=1,...
            pairs = [part.partition("=") for part in text.split(",")]
            if any(not name.strip() or not sep for name, sep, _ in pairs):
                raise ValueError(text)
            return {name.strip(): int(r) for name, _, r in pairs}
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'rank must be an integer, "auto" or NAME=R,NAME=R,... (one rank per --block); '
            f"got {text!r}"
        ) from None


def _sparsity(text: str) -> tuple[int, int] | str:
    if text == "auto":
        return text
    parts = text.split(",")
    try:
        s1, s2 = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'sparsity must be two integers S1,S2 or "auto"; got {text!r}'
        ) from None
    return s1, s2


def _version() -> str:
    return f"jdr_stats {__version__}"


def _add_data_arguments(fit: argparse.ArgumentParser) -> None:
    """The fit's input: the file, the response, the blocks and how to read them."""

    fit.add_argument("file", help="CSV or Parquet file with a header row (or a folder of "
                                  "Parquet files)")
    fit.add_argument("--y", metavar="COL", help="response column (several, comma-separated: "
                                               "a multivariate response)")
    fit.add_argument("--a", type=_columns, metavar="COLS",
                     help="block a columns, comma-separated; each a name, a glob "
                          "('gene_*'), a range (g1:g120) or re:REGEX")
    fit.add_argument("--b", type=_columns, metavar="COLS",
                     help="block b columns, as --a")
    fit.add_argument("--block", action="append", type=_named_block, metavar="NAME=COLS",
                     help="a named block, NAME=COLS with COLS as for --a; repeat it once per "
                          "block, instead of --a and --b: two blocks (the first is block a) "
                          "or three and more (the K-block estimator, theory page 'K blocks')")
    fit.add_argument("--formula", help='"y ~ a-terms | b-terms" instead of --y, --a and --b')
    fit.add_argument("--weights", metavar="COL", help="column of positive case weights")
    fit.add_argument("--covariates", metavar="COLS",
                     help="covariates to adjust for: comma-separated columns (text columns "
                          'are categorical); with --formula, formula terms ("age + C(site)")')
    fit.add_argument("--response", choices=("auto", "numeric", "categorical"), default="auto",
                     help="how to read --y: a text column is categorical (auto); "
                          "'categorical' for numeric class codes")
    fit.add_argument("--sep", type=cin.parse_sep, default=",",
                     help="field separator of a CSV file: one character such as ';', or "
                          "'tab' (default ',')")


def _add_estimator_arguments(fit: argparse.ArgumentParser) -> None:
    """The fit's estimator: rank, sparsity, whitening, rank selection."""

    fit.add_argument("--rank", required=True, type=_rank,
                     help='number r of directions in each block, "auto" (chosen by the '
                          "tests of --rank-method), or one rank per --block: "
                          "NAME=R,NAME=R,...")
    fit.add_argument("--sparsity", type=_sparsity, default=None, metavar="S1,S2",
                     help="sparse fit keeping S1 variables of block a and S2 of block b, "
                          "or 'auto': the variables the coordinate tests select at --fdr")
    fit.add_argument("--whitening", choices=WHITENINGS,
                     default=None,
                     help="how the blocks are whitened: auto (default: the sample covariance "
                          "while the covariance inverted has at most "
                          f"{policy.AUTO_SAMPLE_MAX_RATIO:g} columns per row ((n1 + n2)/m for "
                          "the joint estimator, max(n1, n2)/m per block), OAS shrinkage above) "
                          "or one of " + ", ".join(WHITENING_METHODS)
                          + " (guide page 'Wide blocks': jdr_stats.whitenings)")
    fit.add_argument("--independent-blocks", choices=("yes", "no"), default="no",
                     help="no (default): the joint estimator, each block's residual on the "
                          "other block, whitened across blocks (valid when the blocks "
                          "correlate); yes: the paper's estimator, each block whitened alone, "
                          "which assumes the blocks independent")
    fit.add_argument("--no-standardize", action="store_true",
                     help="centre the blocks only, do not whiten them (= --whitening none)")
    fit.add_argument("--missing", choices=("none", "drop", "raise"), default="none",
                     help="rows with a missing value: 'drop' drops them (with a warning); "
                          "'none' (default) and 'raise' stop with an error naming the columns")
    fit.add_argument("--rank-method",
                     choices=RANK_SELECTORS,
                     default="auto",
                     help="how --rank auto chooses the rank: sequential tests of this method "
                          "or the ladle (default auto: the robust test, or the robust and "
                          "spectral tests combined when q n1 n2 / m >= 5, q the response's "
                          "columns: jdr_stats.policy.rank_method; the same test whether "
                          "the file is read into memory or streamed)")


def _add_inference_arguments(fit: argparse.ArgumentParser) -> None:
    """The fit's inference: seed, bootstrap, support selection."""

    fit.add_argument("--seed", type=int, default=None,
                     help="seed of the permutation and spectral tests, the ladle, the "
                          "bootstrap and the support selection (each draws from its own child "
                          "stream of the seed)")
    fit.add_argument("--bootstrap", type=_positive, default=None, metavar="N",
                     help="bootstrap the fit with N replicates")
    fit.add_argument("--bootstrap-method", choices=("pairs", "poisson"), default="pairs",
                     help="pairs (default: resample rows; needs the rows in memory) or poisson "
                          "(Poisson(1) weights per row, one pass: works on streamed input)")
    fit.add_argument("--n-jobs", type=int, default=None, metavar="J",
                     help="processes for --bootstrap (joblib; -1: all cores); the numbers "
                          "do not depend on it")
    fit.add_argument("--support", action="store_true",
                     help="select the variables (coordinate tests, BH false discovery rate)")
    fit.add_argument("--fdr", type=float, default=0.1,
                     help="target false discovery rate of --support and --sparsity auto (0.1)")


def _add_fit_output_arguments(fit: argparse.ArgumentParser) -> None:
    """The fit's extra outputs and how the file is read in chunks."""

    fit.add_argument("--features-out", metavar="FILE",
                     help="write the reduced features (a_dir*, b_dir*) to a CSV file")
    fit.add_argument("--progress", action="store_true", help="show the bootstrap's progress")
    fit.add_argument("--chunksize", type=_positive, default=None, metavar="ROWS",
                     help="stream the file in chunks of this many rows (exact moments)")
    fit.add_argument("--stream", action="store_true",
                     help="stream the file even when it is small enough to read into memory")


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    """The output format and destination, shared by ``demo`` and ``fit``."""

    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--output", metavar="FILE", help="write the output to FILE, not stdout")
    where.add_argument("--output-dir", metavar="DIR",
                       help="write into DIR (created if needed): with --format csv one "
                            "CSV file per table, else report.txt/.json/.tex/.html; the "
                            "files written are listed on stdout")


def _build_parser() -> _Parser:
    parser = _Parser(prog="python -m jdr_stats", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    demo = sub.add_parser("demo", help="fit the joint estimator to the bundled ais data",
                          description="Fit the joint estimator to the bundled ais data.")
    fit = sub.add_parser("fit", help="fit the joint estimator to a CSV or Parquet file",
                         description="Fit the joint estimator to a CSV or Parquet file.")
    _add_data_arguments(fit)
    _add_estimator_arguments(fit)
    _add_inference_arguments(fit)
    _add_fit_output_arguments(fit)
    for p in (demo, fit):
        _add_output_arguments(p)
    return parser


def demo_model() -> JointDimReduction:
    """The demo model: LBM on logged blood and body-build blocks of ``ais``."""

    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    return JointDimReduction(ais["LBM"], blood, body)


def _run_demo(args: argparse.Namespace) -> str:
    """The demo: the rank the default test chooses, a bootstrap, in plain words.

    The warnings of the fit (no rank rejected, failed premises) are part of
    what the data say: they are printed in the header, not raised.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JDRWarning)
        res = demo_model().fit("auto", seed=0)
        boot = res.bootstrap(199, seed=0) if res.rank else None  # rank 0: nothing to bound
    tests = res.rank_test_table
    assert tests is not None  # a rank="auto" fit keeps its tests
    p0 = float(tests.table["pvalue"].iloc[0])
    est = res.settings.estimator
    lines = [
        "LBM of 202 athletes on log blood (a) and log body-build (b) measurements.",
        f"Estimator: {'joint' if est is not None and est.name == 'joint' else 'per block'} "
        f"({'' if est is None else est.reason}).",
        f"Rank chosen by the default ({tests.method}) rank tests at alpha 0.05: r = {res.rank} "
        f"(test of H0: r = 0: p = {p0:.3g}"
        + ("; not rejected, so the data show no evidence of any direction: rank 0, "
           "no directions)." if p0 >= 0.05 else ")."),
        *((boot.sentence("a"), boot.sentence("b")) if boot is not None else ()),
    ]
    lines += [f"Warning: {w.message}" for w in caught if issubclass(w.category, JDRWarning)]
    header = "\n".join(lines) + "\n\n"
    return _output(args, res, boot, None, header=header)


# -- JSON ---------------------------------------------------------------------
def results_to_dict(res: Any, *, boot: Any = None, support: Any = None) -> dict[str, Any]:
    """The JSON document of a fit and, when given, its bootstrap and support
    selection: ``res.to_dict()`` (see :meth:`jdr_stats.JDRResults.to_dict`)
    with the keys ``bootstrap`` (``boot.to_dict()``) and ``support``
    (``support.to_dict()``) added when they are given."""
    doc = res.to_dict()
    if boot is not None:
        doc["bootstrap"] = boot.to_dict()
    if support is not None:
        doc["support"] = support.to_dict()
    return doc


# -- output -------------------------------------------------------------------
def _render(fmt: str, res: Any, boot: Any, support: Any, header: str = "") -> str:
    if fmt == "json":
        # NaN (a df a test does not have) as null: strict JSON
        return json.dumps(json_safe(results_to_dict(res, boot=boot, support=support)),
                          indent=2, allow_nan=False) + "\n"
    parts = [x.summary() for x in (res, boot, support) if x is not None]
    if fmt == "text":
        return header + "\n\n".join(str(s) for s in parts) + "\n"
    if fmt == "latex":
        return latex_document(parts, preamble=header)
    if fmt == "html":
        return html_document(parts, preamble=header)
    # csv: one long table, columns summary, table, row, then the tables' columns
    return csv_text(parts)


def _output(args: argparse.Namespace, res: Any, boot: Any, support: Any,
            header: str = "") -> str:
    if args.output_dir is not None:
        return _write_dir(args.format, res, boot, support, args.output_dir, header=header)
    return _render(args.format, res, boot, support, header=header)


def _write_dir(fmt: str, res: Any, boot: Any, support: Any, directory: str,
               header: str = "") -> str:
    """--output-dir: one CSV file per table (csv), else report.<ext>; returns
    the list of files written, one a line."""
    try:
        if fmt == "csv":
            parts = [x.summary() for x in (res, boot, support) if x is not None]
            paths = write_csv_dir(parts, directory)
        else:
            ext = {"text": "txt", "json": "json", "latex": "tex", "html": "html"}[fmt]
            Path(directory).mkdir(parents=True, exist_ok=True)
            paths = [Path(directory) / f"report.{ext}"]
            write_text(paths[0], _render(fmt, res, boot, support, header=header))
    except OSError as exc:
        raise ValueError(f"cannot write --output-dir {directory}: {exc.strerror}") from None
    return "".join(f"{p}\n" for p in paths)


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            write_text(output, text)
        except OSError as exc:
            raise ValueError(f"cannot write --output {output}: {exc.strerror}") from None
        return
    sys.stdout.write(text)
    sys.stdout.flush()


# -- fit ----------------------------------------------------------------------
def _check_columns(args: argparse.Namespace) -> None:
    """--y, --a and --b given together, and no column in two roles."""
    if not (args.y and args.a and args.b):
        raise ValueError("give --y, --a and --b (or --formula)")
    flag_a, flag_b = cin.block_flags(args)
    overlap = set(args.a) & set(args.b)
    if overlap:
        raise ValueError(f"columns {sorted(overlap)} are in both {flag_a} and {flag_b}")
    for flag, cols in ((flag_a, args.a), (flag_b, args.b)):
        if set(_columns(args.y)) & set(cols):
            raise ValueError(f"the response --y {args.y} is also in {flag}; "
                             "a column is the response or a predictor, not both")
    if args.weights is not None and args.weights in (args.y, *args.a, *args.b):
        raise ValueError(f"--weights {args.weights} is also the response or in a block")


def _streamed_model(args: argparse.Namespace, how: cin.Input) -> JointDimReduction:
    """A model streamed from a Parquet file/folder, or a CSV file in chunks."""
    from .sources import CSVSource

    refusal = cin.streamed_refusal(args, how)
    if refusal:
        raise ValueError(refusal)
    _check_columns(args)
    ycols = _columns(args.y)
    zcols = None if args.covariates is None else _columns(args.covariates)
    if how.parquet:
        try:
            return JointDimReduction.from_parquet(
                how.path, y=ycols if len(ycols) > 1 else args.y, a=args.a, b=args.b,
                weights=args.weights, batch_rows=args.chunksize, covariates=zcols,
                response=args.response)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    if not how.path.is_file():
        raise ValueError(f"file not found: {args.file}")
    # q responses, a categorical response, covariates: several passes
    return stream_model(JointDimReduction, CSVSource, how.path, ycols if len(ycols) > 1
                        else args.y, args.a, args.b, zcols, weights=args.weights,
                        batch_rows=args.chunksize, response=args.response, sep=args.sep,
                        origin=f"the CSV file {args.file!r} (chunked)")


def _model(args: argparse.Namespace, data: pd.DataFrame) -> JointDimReduction:
    weights = None
    if args.weights is not None:
        if args.weights not in data.columns:
            raise ValueError(f"--weights: {args.file} has no column {args.weights!r}"
                             + cin.sep_hint(data.columns, args.sep))
        weights = data[args.weights]
    if args.formula is not None:
        if args.y or args.a or args.b:
            raise ValueError("give either --formula or --y, --a and --b, not both")
        if args.response != "auto":
            raise ValueError("--response applies to --y; in --formula write C(y) for a "
                             "categorical response")
        return JointDimReduction.from_formula(
            args.formula, data, missing=args.missing, weights=weights,
            covariates=args.covariates,
        )
    _check_columns(args)
    zcols = _columns(args.covariates) if args.covariates is not None else []
    ycols = _columns(args.y)  # several columns: a multivariate response
    wanted = [*ycols, *args.a, *args.b, *zcols]
    missing_cols = [c for c in wanted if c not in data.columns]
    if missing_cols:
        raise ValueError(
            f"{args.file} has no column(s) {missing_cols}; it has {list(data.columns)}"
            + cin.sep_hint(data.columns, args.sep)
        )
    return JointDimReduction(
        data[ycols[0]] if len(ycols) == 1 else data[ycols], data[args.a], data[args.b],
        missing=args.missing, weights=weights, response=args.response,
        covariates=data[zcols] if zcols else None,
    )


def _kblock_model(args: argparse.Namespace, data: pd.DataFrame) -> JointDimReduction:
    """The model of three or more ``--block NAME=COLS`` (rows in memory)."""
    if not args.y:
        raise ValueError("give --y with the --block flags (or --formula)")
    ycols = _columns(args.y)
    seen: dict[str, str] = {}
    for name, cols in args.kblocks:
        for c in cols:
            if c in ycols:
                raise ValueError(f"the response --y {args.y} is also in --block {name}; "
                                 "a column is the response or a predictor, not both")
            if c in seen:
                raise ValueError(f"columns ['{c}'] are in both --block {seen[c]} and "
                                 f"--block {name}")
            seen[c] = name
    if args.weights is not None and args.weights in (*ycols, *seen):
        raise ValueError(f"--weights {args.weights} is also the response or in a block")
    zcols = _columns(args.covariates) if args.covariates is not None else []
    wanted = [*ycols, *seen, *zcols, *([args.weights] if args.weights else [])]
    missing_cols = [c for c in wanted if c not in data.columns]
    if missing_cols:
        raise ValueError(
            f"{args.file} has no column(s) {missing_cols}; it has {list(data.columns)}"
            + cin.sep_hint(data.columns, args.sep))
    return JointDimReduction.from_blocks(
        data[ycols[0]] if len(ycols) == 1 else data[ycols],
        {name: data[cols] for name, cols in args.kblocks},
        covariates=data[zcols] if zcols else None,
        weights=data[args.weights] if args.weights else None,
        missing=args.missing, response=args.response)


def _kblock_refusal(args: argparse.Namespace, how: cin.Input) -> str | None:
    """The flags a fit of three or more blocks does not take, in one line."""
    refused = []
    if how.streamed:
        refused.append(f"streamed input ({how.reason}; the K-block fit reads the rows "
                       "into memory: drop --chunksize/--stream, or raise "
                       "jdr_stats.config.CLI_IN_MEMORY_BYTES for Parquet)")
    if args.no_standardize or args.whitening == "none":
        refused.append("--whitening none (auto, sample or shrinkage)")
    if not refused:
        return None
    return "three or more blocks do not take " + "; ".join(refused)


def _run_kblock_fit(args: argparse.Namespace, how: cin.Input) -> str:
    """``fit`` with three or more ``--block`` flags, or a formula with two or
    more bars: the K-block estimator, its summary, bootstrap and features."""
    refusal = _kblock_refusal(args, how)
    if refusal:
        raise ValueError(refusal)
    data = cin.read_frame(args, how)
    model = (_model(args, data) if args.formula is not None
             else _kblock_model(args, data))
    fit_seed, boot_seed, support_seed = np.random.SeedSequence(_seed(args.seed)).spawn(3)
    res = model.fit(args.rank, whitening=_whitening(args),
                    independent_blocks=args.independent_blocks == "yes",
                    sparsity=args.sparsity, rank_method=args.rank_method,
                    seed=np.random.default_rng(fit_seed))
    _check_finite_fit(args, res)
    boot, refusals = None, []
    if args.bootstrap is not None:
        try:  # rank 0 for every block: nothing to bound, said so
            boot = res.bootstrap(args.bootstrap, seed=np.random.default_rng(boot_seed),
                                 method=args.bootstrap_method, progress=args.progress,
                                 n_jobs=args.n_jobs)
        except ValueError as exc:
            refusals.append(f"--bootstrap was not run: {exc}")
    support = None
    if args.support:  # as model.select_support in Python: the fit's ranks and estimator
        try:
            support = model.select_support(
                rank=res.rank, fdr=args.fdr,
                independent_blocks=args.independent_blocks == "yes",
                seed=np.random.default_rng(support_seed))
        except ValueError as exc:  # a refusal does not hide the fit
            refusals.append(f"--support was not run: {exc}")
    if args.features_out:
        _features_out(res, args.features_out)
    text = _output(args, res, boot, support)
    if refusals:
        raise _Refused(text, refusals)
    return text


def _formula_blocks(formula: str) -> int:
    """How many blocks a formula has (its top-level bars + 1)."""
    from .io._formula import _split_top_level

    rhs = formula.split("~", 1)[1] if "~" in formula else ""
    return len(_split_top_level(rhs, "|"))


def _features_out(res: Any, path: str) -> None:
    feats = res.transform()
    if not isinstance(feats, pd.DataFrame):
        feats = pd.DataFrame(feats)
    try:
        write_text(path, feats.to_csv(index_label="row", lineterminator="\n"))
    except OSError as exc:
        raise ValueError(f"cannot write --features-out {path}: {exc.strerror}") from None


def _blocks_from_flags(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--block NAME=COLS`` (repeated): two as ``--a`` and ``--b``, three or
    more kept in ``args.kblocks``; the blocks' names (None without
    ``--block``)."""
    if not args.block:
        return None
    if args.a or args.b or args.formula:
        raise ValueError("give the blocks by --block NAME=COLS or by --a and --b (or "
                         "--formula), not both")
    names = [name for name, _ in args.block]
    if len(args.block) < 2:
        raise ValueError(f"--block: give two or more blocks; got {len(names)} "
                         f"({', '.join(names)})")
    check_block_names(names, "--block")
    if len(args.block) >= 3:
        args.kblocks = list(args.block)
        return tuple(names)
    args.a, args.b = args.block[0][1], args.block[1][1]
    args.block_names = (names[0], names[1])
    return args.block_names


def _named_block(text: str) -> tuple[str, list[str]]:
    """``NAME=COLS`` of ``--block``."""
    name, sep, cols = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not cols.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME=COLS (a name of letters, digits and _, then the columns as "
            f"for --a); got {text!r}")
    return name, _columns(cols)


def _run_fit(args: argparse.Namespace) -> str:
    block_names = _blocks_from_flags(args)
    cin.expand_patterns(args)  # --a 'gene_*', --a 're:^g\d+$', --a g1:g120
    how = cin.plan_input(args)
    if getattr(args, "kblocks", None) or (args.formula is not None
                                          and _formula_blocks(args.formula) >= 3):
        return _run_kblock_fit(args, how)
    if how.streamed:
        model = _streamed_model(args, how)
    else:
        model = _model(args, cin.read_frame(args, how))
    if block_names is not None:
        model = model.with_block_names(block_names)
    # one child seed per procedure: the fit, the bootstrap, the support selection
    fit_seed, boot_seed, support_seed = np.random.SeedSequence(_seed(args.seed)).spawn(3)
    res = model.fit(
        args.rank,
        whitening=_whitening(args),
        independent_blocks=args.independent_blocks == "yes",
        sparsity=args.sparsity,
        rank_method=args.rank_method,
        fdr=args.fdr,
        seed=np.random.default_rng(fit_seed),
    )
    _check_finite_fit(args, res)
    refusals: list[str] = []  # a refused procedure does not hide the fit
    boot = None
    if args.bootstrap is not None:
        try:
            boot = res.bootstrap(args.bootstrap, seed=np.random.default_rng(boot_seed),
                                 method=args.bootstrap_method, progress=args.progress,
                                 n_jobs=args.n_jobs)
        except ValueError as exc:
            refusals.append(f"--bootstrap was not run: {exc}")
    support = None
    if args.support:
        try:
            support = model.select_support(
                rank=res.rank, fdr=args.fdr,
                independent_blocks=args.independent_blocks == "yes",
                seed=np.random.default_rng(support_seed))
        except ValueError as exc:
            refusals.append(f"--support was not run: {exc}")
    if args.features_out:
        _features_out(res, args.features_out)
    text = _output(args, res, boot, support)
    if refusals:
        raise _Refused(text, refusals)
    return text


def _not_fitted(args: argparse.Namespace | None) -> str:
    """The one line for a fit whose linear algebra failed or whose moments
    are not finite: the file's values, named by the file."""
    file = getattr(args, "file", None)
    where = f"the file {str(file)!r}" if file else "the data"
    return (f"the values read from {where} give moments that are not finite or a "
            "covariance whose factorisation fails (corrupt data pages, or values beyond "
            "float64); check the file (rewrite it with page checksums to have a corrupt "
            "page found when it is read)")


def _check_finite_fit(args: argparse.Namespace, res: Any) -> None:
    """Refuse a fit whose singular values (two blocks) or eigenvalues (K
    blocks) are not finite, naming the file."""
    values = getattr(res, "singular_values", None)
    if values is None:
        values = [np.asarray(v, float) for v in getattr(res, "eigenvalues", {}).values()]
        finite = all(np.isfinite(v).all() for v in values)
    else:
        finite = bool(np.isfinite(np.asarray(values, float)).all())
    if not finite:
        raise ValueError(_not_fitted(args))


def _seed(seed: int | None) -> int | None:
    """``--seed`` checked as the library checks ``seed`` (a nonnegative integer)."""
    normalize_seed(seed, "--seed")
    return seed


def _say(text: str, args: argparse.Namespace | None) -> str:
    """A library message on one line, its keyword arguments said as flags."""
    text = " ".join(str(text).split())
    if args is None or args.command != "fit":
        return text
    return cin.flag_words(text, formula=args.formula is not None, blocks=cin.block_flags(args))


def _print_warnings(caught: Sequence[warnings.WarningMessage],
                    args: argparse.Namespace | None = None) -> None:
    """Each warning (under Python's filters) as one line on stderr,
    ``jdr_stats: warning: ...``, without the library's file and source line,
    in terms of the flags; a message repeated word for word is printed once."""
    seen: set[str] = set()
    for w in caught:
        text = _say(str(w.message), args)
        if text not in seen:
            seen.add(text)
            print(f"jdr_stats: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = _build_parser()
    args = None
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --version and --help print and stop
            return int(exc.code or 0)
        with warnings.catch_warnings(record=True) as caught:
            # the library's warnings are part of the answer: printed, never raised
            warnings.simplefilter("default", JDRWarning)
            try:
                text = _run_demo(args) if args.command == "demo" else _run_fit(args)
            finally:
                _print_warnings(caught, args)
        _emit(text, args.output)
    except _Refused as exc:  # the fit is printed; what was refused, and why, on stderr
        try:
            _emit(exc.text, args.output if args is not None else None)
        except ValueError as err:
            exc.refusals.append(str(err))
        for line in exc.refusals:
            print(f"jdr_stats: error: {_say(line, args)}", file=sys.stderr)
        return EXIT_USAGE
    except _UsageError as exc:
        print(f"jdr_stats: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except np.linalg.LinAlgError:  # (a ValueError) corrupt values: the file, not LAPACK
        print(f"jdr_stats: error: {_not_fitted(args)}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError, ImportError) as exc:  # ImportError: an optional package
        print(f"jdr_stats: error: {_say(str(exc), args)}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError as exc:  # a request the machine cannot hold
        print(f"jdr_stats: error: out of memory: {_say(str(exc), args)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader (e.g. `head`) closed the pipe: stop quietly; point
        # stdout at devnull so that the interpreter's final flush is silent
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
