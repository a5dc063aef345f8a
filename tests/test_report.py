"""A full report (fit with rank tests, bootstrap, support) on a real data
set, rendered and read back: LaTeX compiled and its log read, HTML parsed,
CSV read by pandas in one call, JSON keys checked."""

import json
import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.report._report import csv_text, html_document, latex_document, tidy, write_csv_dir
from jdr_stats.cli import main

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex is not installed (apt-get install texlive-latex-base)")


@pytest.fixture(scope="module")
def diabetes():
    datasets = pytest.importorskip("sklearn.datasets")
    return datasets.load_diabetes(as_frame=True, scaled=False).frame


@pytest.fixture(scope="module")
def report(diabetes):
    """Summaries of the fit (with chi2 rank tests), bootstrap and support."""
    a = diabetes[["age", "sex", "bmi", "bp"]]
    b = diabetes[[f"s{i}" for i in range(1, 7)]]
    model = jdr.JointDimReduction(diabetes["target"], a, b)
    with warnings.catch_warnings():  # the blocks are correlated: the fit says so
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        # rank 1 given: fit("auto") answers rank 0 here (no evidence), which
        # has no loadings and nothing to bound; the reports need both
        res = model.fit(1)
        boot = res.bootstrap(99, seed=1)
        support = model.select_support(rank=res.rank, seed=2)
        chi2 = res.rank_tests("chi2")
    return [res.summary(rank_tests=chi2), boot.summary(), support.summary()]


def _pdflatex(tmp_path, name, tex):
    (tmp_path / f"{name}.tex").write_text(tex)
    run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert run.returncode == 0, [ln for ln in log.splitlines() if ln.startswith("!")]
    return log


def _bad_boxes(log):
    return [ln for ln in log.splitlines()
            if ln.startswith(("Overfull", "Underfull \\hbox (badness 10000)"))
            or "Float too large" in ln]


@needs_pdflatex
def test_full_report_latex_document_has_no_overfull_box(report, tmp_path):
    log = _pdflatex(tmp_path, "report", latex_document(report))
    assert not _bad_boxes(log)
    assert (tmp_path / "report.pdf").stat().st_size > 0


@needs_pdflatex
def test_each_summary_float_fits_a_plain_article(report, tmp_path):
    body = "\n".join(s.as_latex() for s in report)
    log = _pdflatex(tmp_path, "floats",
                    "\\documentclass{article}\n\\begin{document}\n" + body + "\\end{document}\n")
    assert not _bad_boxes(log)


def test_latex_floats_hold_title_and_notes(report):
    for s in report:
        tex = s.as_latex()
        assert tex.startswith("\\begin{table}[htbp]") and tex.rstrip().endswith("\\end{table}")
        assert "\\caption{" in tex and "\\label" not in tex
        section = s.as_latex(floating=False)
        assert section.startswith("\\section*{") and "\\begin{table}" not in section


def test_html_document_is_complete(report, tmp_path):
    doc = report[0].to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == doc
    text = html_document(report)
    assert text.startswith("<!DOCTYPE html>")
    root = ET.fromstring(text.split("\n", 1)[1])  # the rest is well-formed XML
    assert root.find("head/meta").get("charset") == "utf-8"
    style = root.find("head/style").text
    assert "border" in style and "text-align: right" in style
    sections = root.findall("body/section")
    assert [s.find("h2").text for s in sections] == [s.title for s in report]
    for sec, smry in zip(sections, report):
        tables = sec.findall("table")[1:]  # the first is the model information
        assert [t.find("caption").text for t in tables] == [t.name for t in smry.shown()[0]]
        for td in sec.iter("td"):
            if td.get("class") == "num" and td.text is not None:  # None: padding
                assert td.get("style") == "text-align: right"
                assert re.fullmatch(r"-?[\d.]+(e[-+]\d+)?|<1e-16|-", td.text), td.text


def test_html_fragment_is_one_section(report):
    for s in report:
        frag = s.as_html()
        assert "<html" not in frag and "<style" not in frag
        assert ET.fromstring(frag).tag == "section"


def test_csv_long_table_reads_in_one_call(report, tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(csv_text(report))
    frame = pd.read_csv(path)
    assert list(frame.columns[:3]) == ["summary", "table", "row"]
    names = set(frame["table"])
    assert "k" not in names and "singular values" in names
    assert {"per-SD loadings, block a", "principal angles, block b",
            "Support selection: coordinate tests"} <= names
    # the numbers come back exactly
    long = tidy(report)
    sv = frame[frame["table"] == "singular values"]["singular value"].to_numpy()
    np.testing.assert_array_equal(sv, report[0].named_frames["singular values"]["singular value"])
    assert len(long) == len(frame)


def test_csv_one_table_per_file(report, tmp_path):
    paths = write_csv_dir(report, tmp_path / "out")
    n_tables = sum(len(s.named_frames) + 1 for s in report)  # + model information
    assert len(paths) == n_tables == len(set(paths))
    frame = pd.read_csv(tmp_path / "out" / "joint_dimension_reduction_results__premises.csv",
                        index_col=0)
    premises = report[0].named_frames["premises"]
    assert frame.index.name == "Premises"
    np.testing.assert_array_equal(frame["value"].to_numpy(), premises["value"].to_numpy())


@pytest.fixture(scope="module")
def diabetes_csv(diabetes, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "diabetes.csv"
    diabetes.to_csv(path, index=False)
    return path


# rank 1 given: --rank auto answers rank 0 on these data, where --bootstrap
# and --support have nothing to bound or select (an error)
ARGS = ["--y", "target", "--a", "age,sex,bmi,bp", "--b", "s1,s2,s3,s4,s5,s6", "--rank", "1",
        "--bootstrap", "39", "--support", "--seed", "1"]


def test_cli_output_dir_csv(diabetes_csv, tmp_path, capsys):
    out = tmp_path / "tables"
    assert main(["fit", str(diabetes_csv), *ARGS, "--format", "csv",
                 "--output-dir", str(out)]) == 0
    listed = capsys.readouterr().out.split()
    assert sorted(listed) == sorted(str(p) for p in out.iterdir())
    for path in listed:
        assert pd.read_csv(path, index_col=0).shape[0] > 0


@pytest.mark.parametrize("fmt,ext", [("html", "html"), ("latex", "tex"), ("json", "json")])
def test_cli_output_dir_document(diabetes_csv, tmp_path, capsys, fmt, ext):
    out = tmp_path / "rep"
    assert main(["fit", str(diabetes_csv), *ARGS, "--format", fmt, "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / f"report.{ext}")
    text = (out / f"report.{ext}").read_text(encoding="utf-8")
    if fmt == "json":
        doc = json.loads(text)

        def keys(v):
            if isinstance(v, dict):
                for k, x in v.items():
                    yield k
                    yield from keys(x)
            elif isinstance(v, list):
                for x in v:
                    yield from keys(x)

        assert all(re.fullmatch(r"[A-Za-z0-9_]+", k) for k in keys(doc))
        assert doc["loadings"][0].keys() >= {"block", "variable"}
        assert {r["variable"] for r in doc["support"]["tests"]} >= {"age", "s6"}
    else:
        assert text.startswith("<!DOCTYPE html>" if fmt == "html" else "\\documentclass")


def test_output_and_output_dir_exclusive(diabetes_csv, tmp_path, capsys):
    assert main(["fit", str(diabetes_csv), *ARGS, "--output", str(tmp_path / "x"),
                 "--output-dir", str(tmp_path)]) == 2
    assert "not allowed with" in capsys.readouterr().err


@needs_pdflatex
def test_long_summaries_split_into_floats_that_fit(tmp_path):
    sim = jdr.simulate.bilinear(3000, 30, 25, 2, seed=1)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    long_fit = res.summary(rank_tests=res.rank_tests("chi2"))
    rows = pd.DataFrame({"statistic": np.linspace(0, 5, 120), "pvalue": np.linspace(0, 1, 120)},
                        index=pd.Index([f"v{i}" for i in range(120)], name="variable"))
    long_table = jdr.summary.build_summary("Many variables", {"Method:": "x"},
                                           [("variable", rows)], ["A note."])
    for name, smry in (("fit", long_fit), ("table", long_table)):
        tex = smry.as_latex(label="tab:x")
        assert tex.count("\\begin{table}") > 1 and tex.count("(continued)") >= 1
        assert tex.count("\\label{tab:x}") == 1 and tex.count("A note.") <= 1
        log = _pdflatex(tmp_path, name, "\\documentclass{article}\n\\begin{document}\n" + tex
                        + "\\end{document}\n")
        assert not _bad_boxes(log), name
    # every row is printed once, in order
    tex = long_table.as_latex()
    assert [int(m) for m in re.findall(r"^v(\d+) &", tex, re.M)] == list(range(120))


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    """A fit with 120 + 21 variables (longer tables than a page) as a CSV file."""
    rng = np.random.default_rng(36)
    n = 300
    a = pd.DataFrame(rng.normal(size=(n, 120)), columns=[f"gene{i:03d}" for i in range(120)])
    b = pd.DataFrame(rng.normal(size=(n, 21)), columns=[f"lipid{i:02d}" for i in range(21)])
    y = a["gene000"] * b["lipid00"] + 0.5 * rng.normal(size=n)
    path = tmp_path_factory.mktemp("wide") / "wide.csv"
    pd.concat([y.rename("y"), a, b], axis=1).to_csv(path, index=False)
    return path, list(a.columns), list(b.columns)


def _pdf_words(tmp_path, name):
    """The words of ``name.pdf`` (pdftotext), or None without poppler-utils."""
    if shutil.which("pdftotext") is None:
        return None
    subprocess.run(["pdftotext", f"{name}.pdf"], cwd=tmp_path, check=True, timeout=60)
    return set((tmp_path / f"{name}.txt").read_text(errors="replace").split())


@needs_pdflatex
@pytest.mark.parametrize("floating", [False, True])
def test_tables_longer_than_a_page_lose_no_row(wide_csv, tmp_path, floating, capsys):
    """Issue 36: outside a float a tabular never breaks, so rows past the foot
    of the page were lost (56 of 120 genes); every variable is now in the PDF."""
    path, genes, lipids = wide_csv
    if floating:  # the summary's float(s) pasted into a plain article
        frame = pd.read_csv(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
            res = jdr.JointDimReduction(frame["y"], frame[genes], frame[lipids]).fit(2)
        tex = ("\\documentclass{article}\n\\begin{document}\n" + res.summary().as_latex()
               + "\\end{document}\n")
    else:  # the command line's complete document
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
            assert main(["fit", str(path), "--y", "y", "--a", ",".join(genes),
                         "--b", ",".join(lipids), "--rank", "2", "--format", "latex"]) == 0
        tex = capsys.readouterr().out
    for name in genes + lipids:  # a cell of its own (blocks may sit side by side)
        assert re.search(rf"(^| & ){name} & ", tex, re.M), name
    log = _pdflatex(tmp_path, "wide", tex)
    assert not _bad_boxes(log)
    words = _pdf_words(tmp_path, "wide")
    if words is not None:
        missing = [name for name in genes + lipids if name not in words]
        assert not missing, f"{len(missing)} variables are not in the PDF: {missing[:5]}"
