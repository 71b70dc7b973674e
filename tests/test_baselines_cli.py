"`checkeval evaluate --method geval|seeval|likert` end to end with the tiny judge (plumbing): records, failures as nulls, samples, cache."
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-m', 'checkeval.cli']


@pytest.fixture(scope='module')
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('baselines')
    return {**os.environ, 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'CHECKEVAL_PROGRESS': '0',
            'CHECKEVAL_RUNS': str(tmp/'runs'), 'CHECKEVAL_CACHE': str(tmp/'cache')}


def run(args, env):
    r = subprocess.run(CLI + args, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def read(run_dir):
    p = Path(run_dir)
    rows = lambda f: [json.loads(l) for l in (p/f).read_text().splitlines() if l.strip()]
    arts = {f.stem: json.loads(f.read_text()) for f in (p/'artifacts').glob('*.json')}
    return rows('answers.jsonl'), rows('judgments.jsonl'), json.loads((p/'meta.json').read_text()), arts


@pytest.mark.parametrize('method,benchmark,dims,extra', [
    ('geval', 'summeval', ['coherence', 'fluency'], ['-o', 'n=2', '-o', 'temperature=1.0']),
    ('seeval', 'topical_chat', ['groundedness'], ['-o', 'max_tokens=12']),
])
def test_rating_methods(env, method, benchmark, dims, extra):
    args = ['evaluate', '--method', method, '--benchmark', benchmark, '--judge', 'tiny', '--limit', '2', '--dimensions', *dims] + extra
    out = run(args, env)
    answers, judgments, meta, arts = read(out['run'])
    n = 2 if method == 'geval' else 1
    assert len(answers) == 2 * len(dims) * n and len(judgments) == 2 * len(dims)
    assert {a['question_id'] for a in answers} == {f'sample-{k}' for k in range(n)}
    for a in answers:
        assert a['method'] == method and a['judge'] == 'tiny' and a['prompt_tokens'] > 0 and len(a['cache_key']) == 64 and a['latency_s'] is not None
        lo, hi = a['meta']['scale']
        if a['status'] == 'ok': assert lo <= a['value'] <= hi
        else: assert a['value'] is None and a['status']
    if method == 'geval':   # distinct samples are distinct requests (different cache keys)
        keys = {(a['item_id'], a['dimension']): set() for a in answers}
        for a in answers: keys[(a['item_id'], a['dimension'])].add(a['cache_key'])
        assert all(len(v) == 2 for v in keys.values())
    for j in judgments:
        ok = [a['value'] for a in answers if a['item_id'] == j['item_id'] and a['dimension'] == j['dimension'] and a['status'] == 'ok']
        assert j['n_answered'] == len(ok) and j['meta']['mean_of_samples'] == (sum(ok) / len(ok) if ok else None)
    assert set(arts['parse_failures']) == {f'tiny|{d}' for d in dims}
    again = run(args, env)
    assert again['usage']['sent'] == 0 and again['usage']['cached'] == again['usage']['requests'] == len(answers)
