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
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import config
from ..streams._integrity import check_parquet_types, parquet_metadata, parquet_schema

__all__ = ["Input", "expand_columns", "expand_patterns", "flag_words", "parse_sep",
           "plan_input", "read_frame", "streamed_refusal"]

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
        import pyarrow.parquet  # noqa: F401
    except ImportError:  # pragma: no cover - exercised without the extra
        raise ValueError(
            "reading a Parquet file needs pyarrow: pip install 'jdr_stats[parquet]'"
        ) from None
    total = 0
    for f in _parquet_files(path):
        meta = parquet_metadata(f)
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
    kblocks = getattr(args, "kblocks", None)
    if kblocks and args.y:  # three or more --block
        cols = [*args.y.split(","), *(c for _, block in kblocks for c in block)]
    elif not (args.y and args.a and args.b):
        return None
    else:
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
        files = _parquet_files(path)  # a clear message for a missing file or empty folder
        cols = _wanted(args)
        # one type per column in every file (the in-memory read would cast a drift)
        check_parquet_types(files, [], cols if cols is not None else
                            parquet_schema(files[0]).names)
        try:  # a file written with page checksums: a corrupt data page is refused
            return pd.read_parquet(path, columns=_wanted(args), page_checksum_verification=True)
        except (OSError, ValueError, KeyError) as exc:
            text = " ".join(str(exc).split())
            if "checksum" in text.lower() or "page integrity" in text.lower():
                raise ValueError(f"cannot read {str(path)!r} as Parquet: a data page failed "
                                 f"its checksum (the file is corrupt: {text})") from None
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


# -- column patterns ------------------------------------------------------------
def _is_pattern(token: str) -> bool:
    return token.startswith("re:") or any(ch in token for ch in "*?[") or ":" in token


def expand_columns(tokens: list[str], columns: list[str], flag: str, file: str) -> list[str]:
    r"""The columns ``tokens`` name, in the order given, each once.

    A token is a column name when the file has a column of that name;
    otherwise ``re:REGEX`` selects the columns that ``REGEX`` matches
    (``re.search``: anchor it with ``^...$``), a token with ``*``, ``?`` or
    ``[...]`` the columns matching it as a glob (case-sensitive), and
    ``FIRST:LAST`` the columns from ``FIRST`` to ``LAST`` in the file's
    order.  A pattern that selects nothing is an error naming the flag.

    Examples
    --------
    >>> cols = ["y", "g1", "g2", "g3", "gene_1", "gene_22", "x"]
    >>> expand_columns(["gene_*", "g1:g2"], cols, "--a", "f.csv")
    ['gene_1', 'gene_22', 'g1', 'g2']
    >>> expand_columns([r"re:^g\d$"], cols, "--a", "f.csv")
    ['g1', 'g2', 'g3']
    """
    out: list[str] = []
    known = set(columns)
    for token in tokens:
        if token in known or not _is_pattern(token):
            out.append(token)  # a name (an unknown one is reported with the others)
            continue
        if token.startswith("re:"):
            try:
                rx = re.compile(token[3:])
            except re.error as exc:
                raise ValueError(f"{flag}: {token!r} is not a regular expression ({exc})") \
                    from None
            hits = [c for c in columns if rx.search(c)]
        elif ":" in token and not any(ch in token for ch in "*?["):
            first, _, last = token.partition(":")
            bad = [end for end in (first, last) if end not in known]
            if bad:
                raise ValueError(
                    f"{flag}: the range {token!r} needs two columns of {file}; it has no "
                    f"column(s) {bad}" + _nearby(bad, columns))
            i, j = columns.index(first), columns.index(last)
            if i > j:
                raise ValueError(f"{flag}: the range {token!r} runs backwards ({last!r} "
                                 f"comes before {first!r} in {file}); write {last}:{first}")
            hits = columns[i:j + 1]
        else:
            hits = [c for c in columns if fnmatch.fnmatchcase(c, token)]
        if not hits:
            raise ValueError(f"{flag}: the pattern {token!r} matches no column of {file}"
                             + _nearby([token], columns))
        out.extend(hits)
    return list(dict.fromkeys(out))


def _nearby(tokens: list[str], columns: list[str], shown: int = 12) -> str:
    more = f", ... ({len(columns)} columns)" if len(columns) > shown else ""
    return f"; its columns are {', '.join(columns[:shown])}{more}"


def _header(args: argparse.Namespace, path: Path) -> list[str]:
    """The file's column names, without reading its rows."""
    if _is_parquet(path):
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:  # pragma: no cover - exercised without the extra
            raise ValueError(
                "reading a Parquet file needs pyarrow: pip install 'jdr_stats[parquet]'"
            ) from None
        return [str(c) for c in parquet_schema(_parquet_files(path)[0]).names]
    try:
        return [str(c) for c in pd.read_csv(path, sep=args.sep, nrows=0).columns]
    except FileNotFoundError:
        raise ValueError(f"file not found: {path}") from None
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError,
            UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path} as CSV (--sep {args.sep!r}): {exc}") from None


def expand_patterns(args: argparse.Namespace) -> None:
    """Replace the patterns of ``--a`` and ``--b`` by the columns they select
    (:func:`expand_columns`), reading only the file's header."""
    if args.formula is not None:
        return
    kblocks = getattr(args, "kblocks", None)
    if kblocks:  # three or more --block NAME=COLS
        if any(_is_pattern(t) for _, cols in kblocks for t in cols):
            columns = _header(args, Path(args.file))
            args.kblocks = [(name, expand_columns(cols, columns, f"--block {name}", args.file))
                            for name, cols in kblocks]
        return
    wanted = [(attr, flag) for attr, flag in zip(("a", "b"), block_flags(args), strict=True)
              if getattr(args, attr) and any(_is_pattern(t) for t in getattr(args, attr))]
    if not wanted:
        return
    columns = _header(args, Path(args.file))
    for attr, flag in wanted:
        setattr(args, attr, expand_columns(getattr(args, attr), columns, flag, args.file))


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
    (r"\bfit\(independent_blocks=False\)", "--independent-blocks no"),
    (r"\bindependent_blocks\s*=\s*False\b", "--independent-blocks no"),
    (r"\bindependent_blocks\s*=\s*True\b", "--independent-blocks yes"),
    (r"\b(?:bootstrap\()?method\s*=\s*" + _QUOTED + r"\)?", r"--bootstrap-method \2"),
    (r"(?:fit |pass |fit with )?\bstandardize\s*=\s*False\b", "pass --no-standardize"),
    (r"\bwhitening\s*=\s*" + _QUOTED, r"--whitening \2"),
    (r"\bsparsity s([12])\b", r"--sparsity S\1"),
    (r"--sparsity s1,s2\b", "--sparsity S1,S2"),
    (r"\bn_jobs\s*=\s*", "--n-jobs "),
    (r"\bn_boot\s*=\s*", "--bootstrap "),
    (r"\bfdr\s*=\s*", "--fdr "),
    (r"\bseed\s*=\s*", "--seed "),
    (r"convert them with pd\.to_numeric", "recode them as numbers in the file"),
    (r"\bin a formula\b", "in --formula"),
]


def block_flags(args: argparse.Namespace) -> tuple[str, str]:
    """How the user gave the two blocks: ``--a``, ``--b`` or ``--block NAME``."""
    names = getattr(args, "block_names", None)
    return ("--a", "--b") if not names else (f"--block {names[0]}", f"--block {names[1]}")


def flag_words(text: str, *, formula: bool, blocks: tuple[str, str] = ("--a", "--b")) -> str:
    """``text`` (an error or warning of the library) with its keyword
    arguments and argument names said as the command line's flags
    (``blocks``: the flags that gave the two blocks)."""
    for pattern, repl in _FLAG_WORDS:
        # never inside a word already said as a flag ("--sparsity s1,s2")
        text = re.sub(r"(?<![-\w])" + pattern, repl, text)
    names = ({"exog_a": "block a", "exog_b": "block b", "endog": "the response"} if formula
             else {"exog_a": f"{blocks[0]} columns", "exog_b": f"{blocks[1]} columns",
                   "endog": "--y column"})
    for arg, words in names.items():
        text = re.sub(rf"\b{arg}\b", words, text)
    return text
