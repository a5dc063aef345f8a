"""The documentation: getting started runs as shown, the theory pages cite
the paper by the numbers of its PDF, the maths renders offline, one
changelog heading for unreleased work."""

import doctest
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from jdr_stats.exceptions import AssumptionWarning

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_getting_started_runs_as_shown():
    blocks = _python_blocks(DOCS / "getting_started.md")
    assert len(blocks) >= 4
    text = "\n".join(blocks)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "getting_started", "getting_started.md", 0)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 12 and failed == 0
    # the default joint estimator does not assume independent blocks: the
    # correlation the page reports is information, not a premise warning
    shown = [str(w.message) for w in caught if issubclass(w.category, AssumptionWarning)]
    assert not any("the blocks are correlated" in m for m in shown)


def test_getting_started_shows_the_demo_output(capsys):
    from jdr_stats.cli import main

    text = (DOCS / "getting_started.md").read_text()
    shown = re.search(r"```text\n(LBM of 202 athletes.*?)```", text, re.S).group(1)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for line in shown.splitlines():
        if line == "...":
            continue
        head = line.split("...")[0]
        assert head in out, line


# -- the paper cited by the numbers of its PDF ----------------------------------------
#: Counted from the paper's LaTeX source (article class, one counter per
#: theorem type, equations numbered through): the largest number of each.
PAPER_NUMBERS = {"Theorem": 3, "Corollary": 4, "Lemma": 13, "Proposition": 1, "equation": 22}


def _doc_texts():
    paths = [*DOCS.rglob("*.md"), ROOT / "README.md", *(ROOT / "jdr_stats").rglob("*.py")]
    return {p: p.read_text() for p in paths}


def test_no_latex_labels_of_the_paper():
    pattern = re.compile(r"\b(?:thm|lem|cor|eq|pro|sec):[A-Za-z_]|eq\. `|eq\. ``|"
                         r"(?:Theorem|Lemma|Corollary) `")
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p, t in _doc_texts().items()
            for m in pattern.finditer(t)]
    assert hits == []


def test_paper_numbers_exist_in_the_paper():
    pattern = re.compile(r"paper's (Theorem|Corollary|Lemma|Proposition|equation) \(?(\d+)")
    found = 0
    for p, text in _doc_texts().items():
        for kind, num in pattern.findall(" ".join(text.split())):
            found += 1
            assert 1 <= int(num) <= PAPER_NUMBERS[kind], (p, kind, num)
    assert found >= 10


# -- build: offline maths, wide page, changelog ------------------------------------------
def test_conf_bundles_mathjax_and_widens_the_page():
    conf = (DOCS / "conf.py").read_text()
    assert '"sphinx-mathjax-offline"' in conf and "://" not in conf
    assert "sphinx-mathjax-offline" in (ROOT / "pyproject.toml").read_text()
    css = (DOCS / "_static" / "custom.css").read_text()
    assert "max-width: 1400px" in css and '"custom.css"' in conf


def test_one_changelog_heading_for_unreleased_work():
    headings = re.findall(r"^## (.*)$", (DOCS / "changelog.md").read_text(), re.M)
    assert headings[0] == "Unreleased"
    assert [h for h in headings if "nreleased" in h] == ["Unreleased"]


@pytest.mark.slow
def test_built_docs_render_maths_offline(tmp_path):
    """Build the docs, then render a theory page in headless Chromium with the
    network off: MathJax (copied into _static) typesets the maths."""
    pytest.importorskip("sphinx")
    out = tmp_path / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(DOCS),
                    str(out)], check=True, cwd=ROOT, timeout=600)
    page = out / "theory" / "estimator.html"
    html = page.read_text()
    assert 'src="../_static/mathjax/tex-chtml.js"' in html
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert not re.search(r"<script[^>]+src=\"https?://", html)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium to render the page")
    dom = subprocess.run(
        [browser, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--proxy-server=127.0.0.1:9", "--virtual-time-budget=10000", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=True).stdout
    assert dom.count("<mjx-container") > 20


def test_no_inline_maths_line_starts_like_a_list_item():
    # Markdown reads a line "+ \\lvert ..." or "- \\tilde ..." inside a paragraph
    # or list item as a new (nested) list item, which splits the $...$ around
    # it and prints raw LaTeX.  Caught here: a line starting with a list marker
    # while an inline formula of the same paragraph is still open (odd number of
    # single $ so far).  Display maths ($$ blocks, {math} fences) is exempt.
    bad = []
    for path in sorted(DOCS.rglob("*.md")):
        in_display, open_dollars = False, 0
        for no, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if stripped == "$$" or stripped.startswith(("```{math}", "```")):
                in_display = not in_display
                continue
            if in_display:
                continue
            if not stripped:
                open_dollars = 0
                continue
            if open_dollars % 2 and re.match(r"^\s*[-+*]\s", line):
                bad.append(f"{path.relative_to(DOCS)}:{no}: {stripped[:40]}")
            open_dollars += len(re.findall(r"(?<![\\$])\$(?!\$)", line))
    assert not bad, bad
