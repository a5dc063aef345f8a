"""Every results class's summary: numbers in its tables, LaTeX that compiles,
HTML that parses, p-values and df printed as statsmodels does, text laid out
with rules of one width and one number format per column."""

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.report._render import format_cells
from jdr_stats.summary import build_summary, format_pvalue, latex_note


@pytest.fixture(scope="module")
def all_results():
    sim = jdr.simulate.bilinear(400, 5, 4, 2, seed=0)
    a = pd.DataFrame(sim.a, columns=[f"a_{i}" for i in range(5)])  # underscores
    b = pd.DataFrame(sim.b, columns=[f"b_{i}" for i in range(4)])
    y = pd.Series(sim.y, name="y_resp")
    model = jdr.JointDimReduction(y, a, b)
    res = model.fit(2)
    out = {
        "rank_chi2": res.rank_tests("chi2"),
        "rank_robust": res.rank_tests(),
        "rank_wald": res.rank_tests("wald"),
        "rank_general": res.rank_tests("general"),
        "rank_perm": res.rank_tests("permutation", n_perm=19, seed=1),
    }
    out["jdr"] = res
    out["jdr_auto"] = model.fit("auto", rank_method="general")  # shows its rank tests
    out["sparse"] = model.fit(2, sparsity=(3, 3))
    out["boot"] = res.bootstrap(39, seed=1)
    out["support"] = model.select_support(rank=2, seed=1)
    x = pd.concat([a, b], axis=1)
    for cls in (jdr.SIR, jdr.PHD, jdr.SAVE):
        fit = cls(y, x).fit()
        out[cls.__name__] = fit
        out[cls.__name__ + "_dim"] = fit.dimension_tests()
    out["compare"] = jdr.compare(y, a, b, rank=2)
    return out


NAMES = ["rank_chi2", "rank_robust", "rank_wald", "rank_general", "rank_perm", "jdr", "jdr_auto", "sparse", "boot",
         "support", "SIR", "SIR_dim", "PHD", "PHD_dim", "SAVE", "SAVE_dim", "compare"]


def test_fixture_covers_every_results_class(all_results):
    assert set(all_results) == set(NAMES)
    kinds = {type(v).__name__ for v in all_results.values()}
    assert {"JDRResults", "RankTestResults", "BootstrapResults", "SupportResults",
            "SIRResults", "PHDResults", "SAVEResults", "DimensionTests",
            "Comparison"} <= kinds


@pytest.mark.parametrize("name", NAMES)
def test_tables_hold_numbers(all_results, name):
    smry = all_results[name].summary()
    assert smry.tables[0].index.name == "info" and len(smry.info) == len(smry.tables[0])
    assert list(smry.frames) == [t.index.name for t in smry.tables[1:]]
    for frame in smry.tables[1:]:
        for col in frame.columns:
            assert not pd.api.types.is_string_dtype(frame[col]) or col == "block", (name, col)


@pytest.mark.parametrize("name", NAMES)
def test_text_pvalues_and_df(all_results, name):
    smry = all_results[name].summary()
    text = smry.as_text()
    assert "nan" not in text.lower().replace("nann", "")
    disp = smry._display("text")
    for shown, frame in zip(disp.tables[1:], smry.tables[1:]):
        for col in frame.columns:
            if str(col) not in shown.columns:  # a df missing in every row: not printed
                assert str(col) == "df" and frame[col].isna().all(), (name, col)
                assert any(n.startswith("df not shown") for n in disp.extra_txt)
                continue
            cells = list(shown[str(col)])
            if re.search(r"p[ .]?value|qvalue", str(col)):
                assert all(c not in ("0", "0.0", "0.0000") for c in cells), (name, col, cells)
                assert all(c == "-" or c.startswith("<") or float(c) > 0 for c in cells)
            if str(col) == "df" or str(col).startswith("df("):
                vals = frame[col].to_numpy(float)
                for c, v in zip(cells, vals):
                    if not np.isfinite(v):
                        assert c == "-"
                    elif v == round(v):
                        assert c == str(int(v)), (name, col, c)


def test_fit_summary_with_rank_tests(all_results):
    res, rt = all_results["jdr"], all_results["rank_chi2"]
    smry = res.summary(rank_tests=rt)
    assert "Rank tests (chi2)" in smry.frames
    tex = smry.as_latex()
    assert "Rank tests (chi2)" in tex
    assert "Rank tests (general)" in all_results["jdr_auto"].summary().frames


def test_rank_table_numbers(all_results):
    smry = all_results["rank_chi2"].summary()
    frame = smry.frames["k"]
    np.testing.assert_array_equal(frame["pvalue"].to_numpy(),
                                  all_results["rank_chi2"].table["pvalue"].to_numpy())
    assert frame["df"].dtype == float and frame["df"].iloc[0] == 20
    # df = (n1 - k)(n2 - k) = 20 prints as an integer
    assert re.search(r"^\s*0\s+\S+\s+20\s", smry.as_text(), re.M)


@pytest.mark.parametrize("name", NAMES)
def test_html_is_well_formed(all_results, name):
    html = all_results[name].summary().as_html()
    root = ET.fromstring("<div>" + html + "</div>")  # raises on bad markup
    assert root.findall(".//table")


def test_html_escapes_notes():
    smry = build_summary("T", {"a": 1}, notes=["p < 0.05 & r > k"])
    html = smry.as_html()
    assert "p &lt; 0.05 &amp; r &gt; k" in html
    ET.fromstring("<div>" + html + "</div>")


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (apt-get install texlive-latex-base)")
@pytest.mark.parametrize("name", NAMES)
def test_latex_compiles(all_results, name, tmp_path):
    tex = ("\\documentclass{article}\n\\begin{document}\n"
           + all_results[name].summary().as_latex() + "\n\\end{document}\n")
    (tmp_path / "s.tex").write_text(tex)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "s.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
    assert run.returncode == 0 and not errors, errors
    assert (tmp_path / "s.pdf").exists()
    log = (tmp_path / "s.log").read_text(errors="replace")
    boxes = [ln for ln in log.splitlines() if ln.startswith("Overfull") or "Float too large" in ln]
    assert not boxes, boxes


def test_latex_notes_maths_and_escapes():
    assert latex_note("X_lin") == "$X_{lin}$"
    # a one-letter prefix with a word after it is a Python name (a column), not maths
    assert latex_note("n_flips") == r"\texttt{n\_flips}"
    assert latex_note("n_k") == "$n_k$"
    assert latex_note("s_k^2,") == "$s_k^2$,"
    assert latex_note("100% & #1") == r"100\% \& \#1"
    # a double subscript is not maths (it would not compile): escaped text
    assert latex_note("a_b_c") == r"a\_b\_c"
    assert latex_note("['x_1', 'y_2']") == r"['x\_1', 'y\_2']"
    # an attribute name is code, not maths
    assert latex_note("results.directions_a,") == r"\texttt{results.directions\_a},"


@pytest.mark.parametrize(
    "p,text",
    [(0.5, "0.5000"), (1e-4, "0.0001"), (3.2e-7, "3.20e-07"), (1e-20, "<1e-16"),
     (0.0, "<1e-16"), (np.nan, "-")],
)
def test_format_pvalue(p, text):
    assert format_pvalue(p) == text


def test_integer_and_boolean_columns():
    t = pd.DataFrame({"df": [2.0, np.nan], "eff. df": [1.5, 2.0], "n_perm": [99.0, 99.0],
                      "selected": [True, False]}, index=["x", "y"])
    shown = build_summary("T", {}, [("v", t)])._display("text").tables[1]
    assert list(shown["df"]) == ["2", "-"]
    assert list(shown["eff. df"]) == ["1.50", "2.00"]
    assert list(shown["n_perm"]) == ["99", "99"]
    assert list(shown["selected"]) == ["yes", "no"]


@pytest.mark.parametrize("name", NAMES)
def test_latex_notes_inside_the_float_and_no_empty_label(all_results, name):
    smry = all_results[name].summary()
    tex = smry.as_latex()
    assert tex.count("\\begin{table}") == 1 and tex.rstrip().endswith("\\end{table}")
    assert "\\label{}" not in tex
    for note in smry.extra_txt:  # every note is inside the float, after the tables
        first = latex_note(note).split()[0]
        assert tex.index(first, tex.rindex("\\end{tabular}")) < tex.rindex("\\end{table}")
    assert "\\label{tab:x}" in smry.as_latex(label="tab:x")


@pytest.mark.parametrize("name", NAMES)
def test_html_section_with_the_title_as_heading(all_results, name):
    smry = all_results[name].summary()
    root = ET.fromstring(smry.as_html())  # one element: the section
    assert root.tag == "section" and root.find("h2").text == smry.title
    # every printed table has its name as caption: the numeric tables, the
    # blocks' loadings side by side as one table when they fit 100 characters
    captions = [c.text for c in root.findall("./table/caption")]
    assert captions == [t.name for t in smry.shown()[0]]
    separate = [t.name for t in smry.shown(beside=False)[0]]
    assert separate == list(smry.named_frames)
    if len(captions) < len(separate):
        assert "per-SD loadings" in captions


# -- the text layout: rules of one width, labels left-aligned, header cells
# apart, one number format per column ------------------------------------------
FIXED = re.compile(r"^-?\d+\.(\d+)$")
PVAL = re.compile(r"^(0\.\d{4}|1\.0000|\d\.\d{2}e-\d{2}|<1e-16)$")
SCI = re.compile(r"^-?\d\.\d{3}e[-+]\d{2}$")


def _rules(text):
    return [line for line in text.splitlines() if line and set(line) <= {"=", "-"}]


@pytest.mark.parametrize("name", NAMES)
def test_rules_have_one_width_and_nothing_runs_past_them(all_results, name):
    text = all_results[name].summary().as_text()
    rules = _rules(text)
    widths = {len(r) for r in rules}
    assert len(widths) == 1, (name, widths)
    width = widths.pop()
    assert width >= 78
    assert max(len(line) for line in text.splitlines()) <= width


@pytest.mark.parametrize("name", NAMES)
def test_labels_left_aligned_and_header_cells_apart(all_results, name):
    smry = all_results[name].summary()
    lines = smry.as_text().splitlines()
    tables, _ = smry.shown()
    for t in tables:
        # the header line: caption, then the column names, two spaces apart at least
        want = [c for c in [t.caption, *t.columns] if c]
        header = [i for i, line in enumerate(lines[:-1])
                  if set(lines[i + 1]) == {"-"} and line.startswith(t.caption)
                  and [c for c in re.split(r"\s{2,}", line.strip()) if c] == want]
        assert header, (name, t.name, want)
        header = header[0]
        for k, label in enumerate(t.labels):  # labels start the line (left-aligned)
            assert lines[header + 2 + k].startswith(label), (name, label)


@pytest.mark.parametrize("name", NAMES)
def test_info_halves_apart(all_results, name):
    smry = all_results[name].summary()
    pairs = [(str(k), str(v)) for k, v in smry.info.items()]
    half = (len(pairs) + 1) // 2
    text = smry.as_text()
    for key, _ in pairs[half:]:  # each right-hand key has three spaces before it
        assert re.search(r"\S {3,}" + re.escape(key), text), (name, key)


@pytest.mark.parametrize("name", NAMES)
def test_one_number_format_per_column(all_results, name):
    tables, _ = all_results[name].summary().shown()
    for t in tables:
        for j, col in enumerate(t.columns):
            # "" pads the shorter block of tables printed side by side
            cells = [row[j] for row in t.cells if row[j] not in ("-", "")]
            if not t.numeric[j] or not cells:
                continue
            if all(PVAL.match(c) for c in cells):  # the p-value format (pvalue, qvalue, ...)
                continue
            if all(re.fullmatch(r"-?\d+", c) for c in cells):  # counts and df
                continue
            fixed = [FIXED.match(c) for c in cells]
            if all(fixed):
                assert len({len(m.group(1)) for m in fixed}) == 1, (name, col, cells)
            else:  # p-value rows (a premise's p) aside, scientific throughout
                plain = [row[j] for row, lab in zip(t.cells, t.labels)
                         if not lab.endswith(", p") and row[j] not in ("-", "")]
                assert all(SCI.match(c) for c in plain) or all(FIXED.match(c) for c in plain), \
                    (name, col, cells)


def test_issue_example_column_has_one_format():
    # one format: the column's scale decides (an entry small beside it is ~0)
    assert format_cells("x", pd.Series([-7.468e-05, -0.333, 0.0817])) == \
        ["-0.0001", "-0.3330", "0.0817"]
    assert format_cells("x", pd.Series([2.1e-05, -7.4e-06, 0.0])) == \
        ["2.100e-05", "-7.400e-06", "0.000e+00"]
    assert format_cells("x", pd.Series([1.5e8, 2.0])) == ["1.500e+08", "2.000e+00"]
    assert format_cells("x", pd.Series([0.638, 2.58, 18.42])) == ["0.6380", "2.5800", "18.4200"]


def test_pvalue_row_of_a_value_column():
    t = pd.DataFrame({"value": [0.638, 7.4e-51, 2.58]},
                     index=pd.Index(["corr.", "Bartlett test, p", "ratio"], name="premise"))
    (shown,), _ = build_summary("T", {}, [("premise", t)]).shown()
    assert [r[0] for r in shown.cells] == ["0.6380", "<1e-16", "2.5800"]


def test_all_missing_df_is_dropped_with_a_note():
    t = pd.DataFrame({"statistic": [3.0, 1.0], "df": [np.nan, np.nan], "pvalue": [0.01, 0.3],
                      "eff_df": [4.5, 2.5], "scale": [1.1, 0.9]},
                     index=pd.Index([0, 1], name="k"))
    smry = build_summary("Rank tests (robust)", {"Method:": "robust"}, [("k", t)])
    text = smry.as_text()
    header = next(line for line in text.splitlines() if line.startswith("k "))
    assert "df" not in header.replace("eff_df", "")
    assert "df not shown in 'Rank tests (robust)'" in " ".join(text.split())
    assert "scale * chi2(eff_df)" in " ".join(text.split())
    # the numbers keep the column
    assert "df" in smry.frames["k"].columns


def test_fit_header_cells_do_not_run_together(all_results):
    text = all_results["jdr"].summary().as_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("Model:"))
    # the second column starts with the next key (which one depends on the rows:
    # "Response:" and "Adjusted for:" were added later)
    assert re.search(r"Joint dimension reduction {3,}[A-Z][\w .()]*:", line)
