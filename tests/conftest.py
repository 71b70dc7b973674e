"""Shared helpers for the tests that run the `checkeval` command in a subprocess."""
import json, os, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-m', 'checkeval.cli']


@pytest.fixture(scope='module')
def cli_env(tmp_path_factory):
    """Environment for CLI subprocesses: offline, no progress bars, run directories and judge cache in a fresh
    folder per test module (so the tiny model is built once per module and reruns hit the same cache)."""
    tmp = tmp_path_factory.mktemp('cli')
    return {**os.environ, 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'CHECKEVAL_PROGRESS': '0',
            'CHECKEVAL_RUNS': str(tmp/'runs'), 'CHECKEVAL_CACHE': str(tmp/'cache')}


def run_cli(args, env, cmd=CLI, timeout:int=600, json_out:bool=True, returncode:int=0):
    """Run `cmd + args` from the repository root; it must exit with `returncode` (else the test fails with its stderr).

    Returns the JSON summary the command prints on its last stdout line, or the whole stdout with `json_out=False`."""
    r = subprocess.run(list(cmd) + list(args), cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout)
    assert r.returncode == returncode, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]) if json_out else r.stdout


def read_run(path):
    "The records of a run directory (or of a CLI summary with a `run` path): (answers, judgments, meta, artifacts by name)."
    p = Path(path['run'] if isinstance(path, dict) else path)
    rows = lambda f: [json.loads(l) for l in (p/f).read_text().splitlines() if l.strip()]
    arts = {f.stem: json.loads(f.read_text()) for f in (p/'artifacts').glob('*.json')}
    return rows('answers.jsonl'), rows('judgments.jsonl'), json.loads((p/'meta.json').read_text()), arts


# `make test` runs pytest on two workers (pytest-xdist, `--dist loadgroup`): a module's tests stay together (its
# module-scoped fixtures, e.g. a model, are built once) unless they name a group of their own, and the slowest
# modules start first so that both workers finish at about the same time.
SLOW_FIRST = ('test_smollm2_methods', 'test_docs', 'test_smollm2_openai', 'test_reproduce', 'test_cli_evaluate', 'test_rehearsal',
              'test_baselines_cli', 'test_checkeval_cli', 'test_seal_cli', 'test_cli_errors', 'test_cli_data')


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for it in items:
        if not it.get_closest_marker('xdist_group'): it.add_marker(pytest.mark.xdist_group(it.path.stem))
    rank = {m: i for i, m in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.stem, len(rank)))
