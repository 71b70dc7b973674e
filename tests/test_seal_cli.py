"""SEAL end to end through `checkeval evaluate` with the tiny judge on SummEval, Topical-Chat and QAGS samples.

The tiny judge is a plumbing check: its replies are unreadable, and they must reach the records as
failures (value null + reason), never as 0. A second identical run is served entirely from the cache."""
import json
from pathlib import Path

import pytest

from checkeval import data
from conftest import run_cli, read_run

BENCH_FILES = ['benchmarks/summeval/summeval.jsonl', 'benchmarks/topical_chat/topical_chat.jsonl',
               'benchmarks/qags/qags_cnndm.jsonl', 'benchmarks/qags/qags_xsum.jsonl']
pytestmark = pytest.mark.skipif(not all(data.available(f) for f in BENCH_FILES), reason='benchmark data not available')

SEAL = ['evaluate', '--method', 'seal', '--judge', 'tiny']


def records(run):
    path = Path(run['run'])
    return (path, *read_run(path)[:3])


def check_records(answers, judgments, meta):
    assert answers and judgments
    for a in answers:
        assert a['method'] == 'seal' and a['judge'] == 'tiny'
        assert a['meta']['stage'] in ('decompose', 'verify', 'rate')
        assert a['cache_key'] and a['prompt_tokens'] is not None and a['latency_s'] is not None
        if a['value'] is None: assert a['status'] != 'ok' and a['status'].strip()
        elif a['meta']['stage'] == 'verify': assert a['status'] == 'ok' and a['value'] in (0.0, 1.0)
    for j in judgments:
        assert j['method'] == 'seal' and j['meta']['status']
        if j['score'] is None: assert j['n_failed'] > 0
        else: assert 0 <= j['score'] <= 1
    assert meta['n_failed_answers'] == sum(a['value'] is None for a in answers)
    assert meta['usage']['requests'] > 0


@pytest.mark.parametrize('benchmark,args,n_dims', [
    ('summeval', ['--limit', '1', '--dimensions', 'coherence', 'consistency'], 2),
    ('topical_chat', ['--limit', '2'], 4),
    ('qags_xsum', ['--limit', '2'], 1),
])
def test_evaluate_with_tiny_and_rerun_from_cache(cli_env, benchmark, args, n_dims):
    args = ['--benchmark', benchmark, *args, '-o', 'max_tokens=24']
    run = run_cli(SEAL + args, cli_env, timeout=240)
    path, answers, judgments, meta = records(run)
    assert path.parts[-4:-1] == (benchmark, 'seal', 'tiny')
    check_records(answers, judgments, meta)
    assert len({j['dimension'] for j in judgments}) == n_dims
    assert len(judgments) == n_dims*run['items']
    arts = {p.stem for p in (path/'artifacts').glob('*.json')}
    assert {'units', 'weights', 'instantiations', 'options', 'skipped_dimensions'} <= arts
    if benchmark == 'topical_chat':
        skipped = json.loads((path/'artifacts'/'skipped_dimensions.json').read_text())
        assert {s['dimension'] for s in skipped} == {'understandability', 'overall'}
        assert {a['sub_dimension'] for a in answers if a['dimension'] == 'coherence'} >= {'referential_continuity', 'presupposition_support'}
    if benchmark == 'summeval':
        units = json.loads((path/'artifacts'/'units.json').read_text())
        coh = [u for u in units if u['dimension'] == 'coherence'][0]
        assert coh['segmenter'] == 'judge' or coh['segmenter'].startswith('pysbd (judge split failed')
        assert any(a['meta']['stage'] == 'decompose' for a in answers)
    assert meta['usage']['sent'] == meta['usage']['requests'] - meta['usage']['cached']

    again = run_cli(SEAL + args, cli_env, timeout=240)
    _, answers2, judgments2, meta2 = records(again)
    assert meta2['usage']['sent'] == 0 and meta2['usage']['cached'] == meta2['usage']['requests'] == meta['usage']['requests']
    assert [a['raw_text'] for a in answers2] == [a['raw_text'] for a in answers]
    assert [j['score'] for j in judgments2] == [j['score'] for j in judgments]


def test_ablation_option_makes_its_own_variant(tmp_path):
    "In process (no model): an option gives the run its own variant, the same in the directory, answers and judgments."
    from checkeval.judges import FunctionJudge
    from checkeval.runs import evaluate
    judge = FunctionJudge(lambda req: '{"verdicts": [[1, 1, 0, 1, 1]], "weights": [0.3, 0.2, 0.2, 0.1, 0.2]}')
    info, res = evaluate('seal', 'topical_chat', judge, limit=1, dimensions=['naturalness'], root=tmp_path, weighting='uniform')
    path, answers, judgments, meta = records({'run': str(info.path)})
    assert path.name.startswith('weighting=uniform')
    assert {a['variant'] for a in answers} == {j['variant'] for j in judgments} == {path.name.partition('--')[0]}   # folder: <variant>--<run key>
    assert meta['config']['options'] == {'weighting': 'uniform'}
    assert judgments[0]['score'] == pytest.approx(0.8)
