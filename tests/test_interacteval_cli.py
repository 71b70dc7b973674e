"""InteractEval end to end through `checkeval evaluate` with the tiny judge (plumbing only: its replies are
unreadable and must be recorded as failures), and a rerun served entirely from the cache."""
import json
from pathlib import Path

import pytest

from checkeval import data
from conftest import run_cli, read_run

pytestmark = pytest.mark.skipif(not data.available('benchmarks/summeval/summeval.jsonl'), reason='SummEval not available')


@pytest.fixture
def env(cli_env, tmp_path):
    "Run directories per test; the judge cache is shared by the module (the tiny model is built once)."
    return {**cli_env, 'CHECKEVAL_RUNS': str(tmp_path/'runs')}


def cli(env, *args):
    run = run_cli(['evaluate', '--method', 'interacteval', '--judge', 'tiny', '--benchmark', 'summeval', *args], env, timeout=400)
    path = Path(run['run'])
    return (path, *read_run(path)[:3])


def test_upstream_checklist_with_tiny_and_rerun(env):
    args = ['--limit', '2', '--dimensions', 'coherence', '-o', 'max_tokens=16']
    path, answers, judgments, meta = cli(env, *args)
    assert path.parts[-4:-1] == ('summeval', 'interacteval', 'tiny')
    checklist = json.loads((path/'artifacts'/'checklists.json').read_text())['coherence']
    assert len(answers) == 2*len(checklist['questions'])
    for a in answers:
        assert a['cache_key'] and a['prompt_tokens'] is not None and a['latency_s'] is not None
        assert a['meta']['question'] and a['question_id'].startswith('coherence-')
        if a['value'] is None: assert a['status'] not in ('ok', '')
        else: assert a['value'] in (0.0, 1.0)
    assert len(judgments) == 2
    for j in judgments:
        assert j['n_questions'] == len(checklist['questions'])
        assert j['score'] is None or 1 <= j['score'] <= 5
        if j['score'] is None: assert j['n_failed'] == j['n_questions']
    assert meta['usage']['sent'] == meta['usage']['requests'] == 2
    _, answers2, judgments2, meta2 = cli(env, *args)
    assert meta2['usage']['sent'] == 0 and meta2['usage']['cached'] == 2
    assert [a['raw_text'] for a in answers2] == [a['raw_text'] for a in answers]


def test_build_with_tiny_records_the_failed_step(env):
    path, answers, judgments, meta = cli(env, '--limit', '2', '--dimensions', 'fluency', '-o', 'max_tokens=16', '-o', 'checklist_source=build')
    record = json.loads((path/'artifacts'/'construction.json').read_text())['fluency']
    assert record['attributes'] and record['stages']['components']['cache_key']
    if record['status'] != 'ok':                       # what a random tiny model almost surely gives
        assert [a['status'] for a in answers] == [f"no checklist: {record['status']}"]*2
        assert [j['score'] for j in judgments] == [None, None]
