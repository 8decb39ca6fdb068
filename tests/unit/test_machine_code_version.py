"""benchmarks.machine.code_version: a results file is not an uncommitted change."""

import subprocess

from benchmarks.machine import code_version


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_result_files_do_not_make_the_tree_dirty_but_code_does(tmp_path):
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    assert code_version(tmp_path)["dirty"] is False
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "run.json").write_text("{}")
    clean = code_version(tmp_path)
    assert clean["dirty"] is False and "worktree_sha256" not in clean
    (tmp_path / "code.py").write_text("x = 2\n")
    dirty = code_version(tmp_path)
    assert dirty["dirty"] is True and dirty["worktree_sha256"]
