"""`checkeval reproduce`: the grid runs with papermill, reruns only what changed, fails loudly, and never spends money unasked."""
import json, os, subprocess, sys, time
from pathlib import Path
import pytest, yaml

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-m', 'checkeval.cli']


def _env(tmp_path, grid, judges=None):
    env = {**os.environ, 'CHECKEVAL_RUNS': str(tmp_path/'runs'), 'CHECKEVAL_GRID': str(tmp_path/'grid.yaml'),
           'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'CHECKEVAL_JOBS': '2'}
    (tmp_path/'grid.yaml').write_text(yaml.safe_dump(grid))
    if judges is not None:
        (tmp_path/'judges.yaml').write_text(yaml.safe_dump(judges)); env['CHECKEVAL_JUDGES'] = str(tmp_path/'judges.yaml')
    return env


def _reproduce(env, *args, timeout=400):
    t0 = time.time()
    r = subprocess.run([*CLI, 'reproduce', '--only', 'grid', *args], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return r, time.time() - t0


GRID = {'defaults': {'notebook': 'nbs/experiments/run_method.ipynb'},
        'blocks': [{'name': 'lexical', 'notebook': 'nbs/experiments/run_lexical.ipynb', 'benchmarks': ['legal_sts'],
                    'methods': 'lexical', 'judges': 'none', 'code': ['checkeval/lexical.py']},
                   {'name': 'plumbing', 'label': 'plumbing', 'benchmarks': ['summeval'], 'methods': ['checkeval'],
                    'judges': ['tiny'], 'limit': 2, 'dimensions': ['coherence']}]}


def test_cold_warm_and_changed_cell(tmp_path):
    env = _env(tmp_path, GRID)
    r, cold = _reproduce(env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert '2 ran, 0 unchanged, 0 failed' in r.stdout
    run = tmp_path/'runs'/'summeval'/'checkeval'/'tiny'/'default'
    meta = json.loads((run/'meta.json').read_text())
    assert meta['n_answers'] > 0 and meta['judge']['name'] == 'tiny'
    for k in ('git', 'config_hash', 'packages', 'data', 'time'): assert k in meta     # provenance
    assert len(list((tmp_path/'runs'/'legal_sts').glob('*/none/*/judgments.jsonl'))) == 5   # five lexical metrics
    assert (ROOT/'_runs'/'summeval'/'checkeval'/'tiny'/'default.ipynb').exists()         # executed copy kept for reading
    # warm: nothing changed, nothing runs
    r, warm = _reproduce(env)
    assert r.returncode == 0 and '0 ran, 2 unchanged' in r.stdout, r.stdout[-2000:]
    assert warm < cold
    # a changed sample size reruns that cell only
    grid = json.loads(json.dumps(GRID)); grid['blocks'][1]['limit'] = 3
    env = _env(tmp_path, grid)
    r, _ = _reproduce(env, '--only', 'plan')
    assert 'changed: config' in r.stdout, r.stdout
    r, _ = _reproduce(env)
    assert r.returncode == 0 and '1 ran, 1 unchanged' in r.stdout, r.stdout[-2000:]
    assert len(json.loads((run/'meta.json').read_text())['config']['item_ids']) == 3


def test_missing_method_fails_loudly(tmp_path):
    grid = {'blocks': [{'name': 'x', 'benchmarks': ['summeval'], 'methods': ['no_such_method'], 'judges': ['tiny'], 'limit': 1}]}
    r, _ = _reproduce(_env(tmp_path, grid))
    assert r.returncode == 1
    assert 'FAILED: summeval/no_such_method/tiny/default' in r.stdout and 'unknown method' in r.stdout


def test_paid_cell_needs_confirmation(tmp_path):
    judges = {'judges': {'paid-judge': {'backend': 'openai', 'model': 'some-model', 'base_url': 'http://127.0.0.1:9/v1',
                                        'api_key_env': 'CHECKEVAL_TEST_NO_KEY', 'price_in': 2.5, 'price_out': 10.0}}}
    grid = {'blocks': [{'name': 'paid', 'benchmarks': ['summeval'], 'methods': ['checkeval'], 'judges': ['paid-judge'],
                        'limit': 2, 'dimensions': ['coherence']}]}
    env = _env(tmp_path, grid, judges)
    r, t = _reproduce(env, timeout=120)     # stdin is not a terminal: refuse, never wait for an answer
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'estimated cost up to $' in r.stdout and 'REFUSED: summeval/checkeval/paid-judge' in r.stdout, r.stdout
    assert not (tmp_path/'runs'/'summeval'/'checkeval'/'paid-judge').exists()
