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
