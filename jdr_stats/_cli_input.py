"""The command line's input side: reading the file, deciding whether it is
streamed, and saying the library's messages in terms of flags.

A CSV file is read into memory unless ``--chunksize`` (or ``--stream``) is
given.  A Parquet file, or a folder of them, is read into memory when its
selected columns take at most :data:`jdr_stats.config.CLI_IN_MEMORY_BYTES`
as float64 (rows x columns x 8 bytes, from the file's metadata), so every
procedure works on it; a larger one is streamed in record batches, and the
procedures that need the rows in memory are refused up front with one line
naming the flags.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import config

__all__ = ["Input", "flag_words", "parse_sep", "plan_input", "read_frame", "streamed_refusal"]

_SEP_NAMES = {"tab": "\t", "\\t": "\t", "semicolon": ";", "comma": ",", "space": " ",
              "pipe": "|"}


def parse_sep(text: str) -> str:
    """``--sep``: one character, or ``tab``, ``\\t``, ``semicolon``, ``comma``,
    ``space``, ``pipe``."""
    sep = _SEP_NAMES.get(text.lower(), text)
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(
            "expected one character (e.g. ';') or one of "
            f"{', '.join(sorted(_SEP_NAMES))}; got {text!r}"
        )
    return sep


# -- streamed or in memory ------------------------------------------------------
@dataclass(frozen=True)
class Input:
    """How the file is read: ``streamed`` and, when it is, why (for messages)."""

    path: Path
    parquet: bool
    streamed: bool
    reason: str = ""


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq") or path.is_dir()


def _parquet_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(path.glob("*.parquet"))
        if not files:
            raise ValueError(f"the folder {str(path)!r} holds no *.parquet files")
        return files
    if not path.exists():
        raise ValueError(f"file not found: {path} (the Parquet file does not exist)")
    return [path]


def parquet_float_bytes(path: Path, columns: list[str] | None) -> int:
    """Bytes of the named columns (all when None) as float64, from the metadata."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - exercised without the extra
        raise ValueError(
            "reading a Parquet file needs pyarrow: pip install 'jdr_stats[parquet]'"
        ) from None
    total = 0
    for f in _parquet_files(path):
        meta = pq.ParquetFile(f).metadata
        ncol = len(columns) if columns is not None else meta.num_columns
        total += meta.num_rows * ncol * 8
    return total


def _mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:.0f} MB"


def plan_input(args: argparse.Namespace) -> Input:
    """Decide how ``args.file`` is read (see the module docstring)."""
    path = Path(args.file)
    parquet = _is_parquet(path)
    if args.chunksize is not None:
        return Input(path, parquet, True, "--chunksize was given")
    if args.stream:
        return Input(path, parquet, True, "--stream was given")
    if not parquet:
        return Input(path, False, False)
    cols = None if args.formula is not None else _wanted(args)
    size = parquet_float_bytes(path, cols)
    limit = config.CLI_IN_MEMORY_BYTES
    if size <= limit:
        return Input(path, True, False)
    return Input(path, True, True,
                 f"its columns take {_mb(size)} as float64, above the "
                 f"{_mb(limit)} read into memory (jdr_stats.config.CLI_IN_MEMORY_BYTES)")


def _wanted(args: argparse.Namespace) -> list[str] | None:
    if not (args.y and args.a and args.b):
        return None
    cols = [*args.y.split(","), *args.a, *args.b]  # several --y columns: multivariate
    cols += [c.strip() for c in args.covariates.split(",")] if args.covariates else []
    return cols + ([args.weights] if args.weights else [])


def streamed_refusal(args: argparse.Namespace, how: Input) -> str | None:
    """One line naming every asked flag that needs the rows in memory, or None."""
    need = []
    if args.formula is not None:
        need.append("--formula")
    if args.missing == "drop":
        need.append("--missing drop")
    if args.rank == "auto" and args.rank_method in ("permutation", "spectral", "combined"):
        need.append(f"--rank-method {args.rank_method}")
    if args.bootstrap is not None and args.bootstrap_method == "pairs":
        need.append("--bootstrap (pairs; --bootstrap-method poisson streams)")
    if args.support:
        need.append("--support")
    if args.features_out:
        need.append("--features-out")
    if not need:
        return None
    kind = "Parquet input" if how.parquet else "the CSV file"
    undo = ("drop --chunksize" if args.chunksize is not None else
            "drop --stream" if args.stream else "raise jdr_stats.config.CLI_IN_MEMORY_BYTES")
    return (f"{', '.join(need)} need{'s' if len(need) == 1 else ''} the rows in memory, "
            f"but {kind} is streamed ({how.reason}); {undo} to read it into memory")


def read_frame(args: argparse.Namespace, how: Input) -> pd.DataFrame:
    """The whole file (only the named columns of a Parquet file) in memory."""
    path = how.path
    if how.parquet:
        _parquet_files(path)  # a clear message for a missing file or empty folder
        try:
            return pd.read_parquet(path, columns=_wanted(args))
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"cannot read {path} as Parquet: {exc}") from None
    try:
        return pd.read_csv(path, sep=args.sep)
    except FileNotFoundError:
        raise ValueError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder; give a CSV or Parquet file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path} as CSV (--sep {args.sep!r}): {exc}") from None


def sep_hint(columns: Any, sep: str) -> str:
    """A hint when a one-column header holds another usual separator."""
    if len(columns) != 1:
        return ""
    head = str(columns[0])
    for cand, flag in ((";", ";"), ("\t", "tab"), ("|", "|"), (",", ",")):
        if cand != sep and cand in head:
            return f" (the header is one column holding {cand!r}: pass --sep '{flag}')"
    return ""


# -- the library's words as flags -----------------------------------------------
_QUOTED = r"""(["'])(\w+)\1"""
_FLAG_WORDS: list[tuple[str, str]] = [
    (r"\bfit\(rank=" + _QUOTED + r"\)", r"--rank \2"),
    (r"\bfit\(rank=" + _QUOTED + r", rank_method=" + _QUOTED + r"\)",
     r"--rank \2 --rank-method \4"),
    (r"\brank_tests\(" + _QUOTED + r"\)", r"--rank auto --rank-method \2"),
    (r"\bmissing\s*=\s*" + _QUOTED, r"--missing \2"),
    (r"\bsparsity\s*=\s*" + _QUOTED, r"--sparsity \2"),
    (r"\bsparsity\s*=\s*\((\w+), (\w+)\)", r"--sparsity \1,\2"),
    (r"\brank_method\s*=\s*" + _QUOTED, r"--rank-method \2"),
    (r"\b(?:bootstrap\()?method\s*=\s*" + _QUOTED + r"\)?", r"--bootstrap-method \2"),
    (r"(?:fit |pass |fit with )?\bstandardize\s*=\s*False\b", "pass --no-standardize"),
    (r"\bwhitening\s*=\s*" + _QUOTED, r"--whitening \2"),
    (r"\bsparsity s([12])\b", r"--sparsity S\1"),
    (r"\bn_jobs\s*=\s*", "--n-jobs "),
    (r"\bn_boot\s*=\s*", "--bootstrap "),
    (r"\bfdr\s*=\s*", "--fdr "),
    (r"\bseed\s*=\s*", "--seed "),
    (r"convert them with pd\.to_numeric", "recode them as numbers in the file"),
    (r"\bin a formula\b", "in --formula"),
]


def flag_words(text: str, *, formula: bool) -> str:
    """``text`` (an error or warning of the library) with its keyword
    arguments and argument names said as the command line's flags."""
    for pattern, repl in _FLAG_WORDS:
        text = re.sub(pattern, repl, text)
    names = ({"exog_a": "block a", "exog_b": "block b", "endog": "the response"} if formula
             else {"exog_a": "--a columns", "exog_b": "--b columns", "endog": "--y column"})
    for arg, words in names.items():
        text = re.sub(rf"\b{arg}\b", words, text)
    return text
