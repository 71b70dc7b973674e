"""Check-Eval (`keypoint`) end to end through the `checkeval evaluate` command with the tiny judge.

The tiny judge is a plumbing check: its replies are mostly unreadable, and they must flow into the
records as failures (value null + reason), never as "no". A second identical run must be served
entirely from the cache."""
import json
from pathlib import Path

import pytest

from checkeval import data
from conftest import run_cli, read_run

HAVE_MIRROR = data.available('benchmarks/legal_sts_pt/stj_sample_32.jsonl') and data.available('benchmarks/summeval/summeval.jsonl')
pytestmark = pytest.mark.skipif(not HAVE_MIRROR, reason='benchmark data not available')


@pytest.fixture
def env(cli_env, tmp_path):
    "Run directories per test; the judge cache is shared by the module, so that the tiny model is built once."
    return {**cli_env, 'CHECKEVAL_RUNS': str(tmp_path/'runs')}


def cli(env, *args):
    return run_cli(['evaluate', '--method', 'keypoint', '--judge', 'tiny', *args], env, timeout=240)


def records(run):
    path = Path(run['run'])
    return (path, *read_run(path)[:3])


def check_answers(answers):
    assert answers
    for a in answers:
        assert a['method'] == 'keypoint' and a['judge'] == 'tiny'
        assert a['cache_key'] and a['prompt_tokens'] is not None and a['latency_s'] is not None
        if a['value'] is None: assert a['status'] != 'ok' and a['status'].strip()
        else: assert a['status'] == 'ok' and a['value'] in (0.0, 1.0)


def test_legal_sts_f1_and_rerun_from_cache(env):
    args = ['--benchmark', 'legal_sts', '--limit', '2', '-o', 'max_tokens=24', '-o', 'criteria=consistency,fluency']
    run = cli(env, *args)
    path, answers, judgments, meta = records(run)
    assert path.parts[-4:-1] == ('legal_sts', 'keypoint', 'tiny')
    check_answers(answers)
    assert {a['sub_dimension'] for a in answers} <= {'reference-guided', 'candidate-guided'}
    assert {a['dimension'] for a in answers} == {'consistency', 'fluency'}
    # the tiny judge writes no readable checklist: every failure is recorded with its reason
    assert all(a['value'] is None for a in answers if a['question_id'].endswith(':checklist'))
    assert {j['dimension'] for j in judgments} == {'consistency', 'fluency', 'expert', 'heuristic'}
    assert len(judgments) == 2*4
    for j in judgments:
        if j['score'] is None: assert j['n_failed'] > 0
    cfg = json.loads((path/'artifacts'/'config.json').read_text())
    assert (cfg['mode'], cfg['language']) == ('f1', 'pt')
    lists = json.loads((path/'artifacts'/'checklists.json').read_text())
    assert lists and all({'raw_text', 'status', 'cache_key', 'questions'} <= set(c) for c in lists)
    assert meta['usage']['sent'] == meta['usage']['requests'] > 0
    assert meta['n_failed_answers'] == sum(a['value'] is None for a in answers)

    again = cli(env, *args)
    _, answers2, judgments2, meta2 = records(again)
    assert meta2['usage']['sent'] == 0 and meta2['usage']['cached'] == meta2['usage']['requests'] == meta['usage']['requests']
    assert [a['raw_text'] for a in answers2] == [a['raw_text'] for a in answers]
    assert [j['score'] for j in judgments2] == [j['score'] for j in judgments]


def test_summeval_criterion_guided(env):
    run = cli(env, '--benchmark', 'summeval', '--limit', '2', '--dimensions', 'coherence', '-o', 'max_tokens=24')
    path, answers, judgments, meta = records(run)
    check_answers(answers)
    assert {a['sub_dimension'] for a in answers} == {'criterion-guided'}
    assert [j['dimension'] for j in judgments] == ['coherence', 'coherence']
    lists = json.loads((path/'artifacts'/'checklists.json').read_text())
    assert [c['id'] for c in lists] == ['coherence:criterion']     # one checklist per criterion, shared by the items
    assert meta['config']['options'] == {'max_tokens': 24}
