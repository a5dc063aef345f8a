"""Regenerate jdr_stats/datasets/concrete.csv from Debian's r-cran-modeldata.

Provenance of the bundled concrete data (see jdr_stats/datasets/README.md):
the object ``concrete`` of the CRAN package modeldata 1.1.0 (MIT licence),
as shipped by the Debian package ``r-cran-modeldata`` (1.1.0-1), read from
its lazy-load database ``data/Rdata.rdb`` without R.

Usage (needs apt and the PyPI package ``rdata``; not a dependency of
jdr_stats)::

    apt-get download r-cran-modeldata
    dpkg-deb -x r-cran-modeldata_*.deb deb
    pip install --target /tmp/rdata rdata
    PYTHONPATH=/tmp/rdata python tools/make_concrete_csv.py deb

R's lazy-load format: ``Rdata.rdx`` is a gzip-compressed serialized index
(name -> offset, length into ``Rdata.rdb``); each entry of ``Rdata.rdb``
is a 4-byte big-endian uncompressed length, a type byte (``Z``: raw LZMA2,
R's xz compression) and the compressed serialized object.
"""

import gzip
import lzma
import struct
import sys
from pathlib import Path

import pandas as pd
import rdata

OUT = Path(__file__).resolve().parents[1] / "jdr_stats" / "datasets" / "concrete.csv"


def main(root: str) -> None:
    data = Path(root) / "usr/lib/R/site-library/modeldata/data"
    index = rdata.conversion.convert(
        rdata.parser.parse_data(gzip.decompress((data / "Rdata.rdx").read_bytes()))
    )
    off, length = (int(v) for v in index["variables"]["concrete"])
    raw = (data / "Rdata.rdb").read_bytes()[off:off + length]
    size = struct.unpack(">I", raw[:4])[0]
    if raw[4:5] != b"Z":
        raise ValueError(f"unexpected compression type {raw[4:5]!r}")
    dec = lzma.LZMADecompressor(
        format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 64 * 2**20}]
    )
    body = dec.decompress(raw[5:])
    assert len(body) == size
    frame = pd.DataFrame(rdata.conversion.convert(rdata.parser.parse_data(body)))
    frame["age"] = frame["age"].astype(int)
    assert frame.shape == (1030, 9)
    frame.to_csv(OUT, index=False, float_format="%.6g")
    print(f"wrote {OUT} ({frame.shape[0]} rows)")


if __name__ == "__main__":
    main(sys.argv[1])
