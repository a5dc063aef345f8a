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


def _json_example():
    """The README's commands that make the data and print the JSON, and the JSON shown."""
    text = (ROOT / "README.md").read_text()
    section = text.split("print the document below", 1)[1]
    blocks = re.findall(r"```[^\n]*\n(.*?)```", section, re.S)
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    return commands, blocks[1]


def _records(shown):
    """Every complete one-line JSON record of the abbreviated document."""
    import json

    out = []
    for line in shown.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{") and line.endswith("}") and "..." not in line:
            out.append(json.loads(line))
    return out


def test_readme_json_example_is_reproducible(tmp_path):
    """Run the README's two commands; the document has the keys shown, in
    order, and every number the README shows."""
    import json
    import os
    import shlex
    import subprocess
    import sys

    import pytest

    commands, shown = _json_example()
    assert len(commands) == 2 and "--format json" in commands[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for cmd in commands:
        argv = shlex.split(cmd)
        assert argv[0] == "python"
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120, check=True)
    doc = json.loads(proc.stdout)
    top = re.findall(r'^  "(\w+)":', shown, re.M)
    assert top == list(doc)
    for key in re.findall(r'^  "(\w+)": ([^\[{\n]+?),?$', shown, re.M):
        assert json.dumps(doc[key[0]]) == key[1].rstrip(","), key
    assert doc["singular_values"] == pytest.approx(
        json.loads(re.search(r'"singular_values": (\[.*?\])', shown).group(1)), rel=1e-9)
    flat = (doc["directions"] + doc["loadings"] + doc["rank_tests"]["tests"]
            + doc["premises"]["table"] + doc["main_effects_test"]["tests"])
    records = _records(shown)
    assert len(records) >= 8
    def same(r, rec):
        return all(k in r and (r[k] == pytest.approx(v, rel=1e-9, abs=1e-15)
                               if isinstance(v, float) else r[k] == v) for k, v in rec.items())

    for rec in records:
        assert any(same(r, rec) for r in flat), rec
