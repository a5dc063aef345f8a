"""README.md's Quickstart holds exactly the two commands that .ci/run runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _quickstart_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1]
    block = re.search(r"```[^\n]*\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_two_commands():
    cmds = _quickstart_commands()
    assert len(cmds) == 2
    assert "pip install ." in cmds[0] and "python -m jdr_stats demo" in cmds[0]
    assert ".[test]" in cmds[1] and "pytest" in cmds[1]


def test_ci_reads_the_readme():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and "## Quickstart" in ci


def test_usage_example_runs(capsys):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Usage\n\n```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "Joint Dimension Reduction Results" in out and "Comparison" in out


def test_readme_figure_exists():
    text = (ROOT / "README.md").read_text()
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (ROOT / path).is_file(), path


def test_ci_runs_lint_types_and_the_equality_tests_with_two_threads():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "\nruff check jdr_stats\n" in ci and "\nmypy jdr_stats\n" in ci
    assert "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1" in ci
    assert (
        "OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 \\\n"
        '    python -m pytest -q -p no:cacheprovider -m "equality and not slow" tests\n'
    ) in ci
    # the lint tools come from an extra that CI installs
    assert ",lint]" in ci and "lint = [" in (ROOT / "pyproject.toml").read_text()
    # lint and types run before any test
    assert ci.index("mypy jdr_stats") < ci.index("python -m pytest")
