"CheckEval: one checklist built/filtered once by a fixed builder judge and answered by every evaluator; the answered-share floor."
import json, re

import pytest

from checkeval.core import DataError
from checkeval.data import benchmark_info, load_benchmark
from checkeval.judges import FunctionJudge
from checkeval.methods.checkeval.method import load_checklist, run_checkeval


def builder_fn(calls):
    def fn(req):
        calls.append(req.meta.get('stage'))
        pool = re.findall(r'^- (.*\?)$', req.messages[-1]['content'], re.M)
        return json.dumps({'kept': pool[::2]})        # keeps every other question
    return fn


def evaluator(name, yes_every):
    def fn(req):
        qs = re.findall(r'^Q(\d+): ', req.messages[-1]['content'].split('# Questions')[-1], re.M)
        return '\n'.join(f"Q{k}: {'yes' if int(k) % yes_every else 'no'}" for k in qs)
    return FunctionJudge(fn, name=name, progress=False)


@pytest.fixture
def items(): return load_benchmark('summeval', limit=2)


def test_one_filtered_checklist_for_every_evaluator(items, tmp_path):
    calls = []
    builder = FunctionJudge(builder_fn(calls), name='builder', progress=False)
    dims = [benchmark_info('summeval').dimension('coherence')]
    runs = [run_checkeval(items, evaluator(n, k), dims, builder=builder, filter=True, checklist_dir=str(tmp_path)) for n, k in (('a', 2), ('b', 3))]
    assert calls == ['filter']                          # built once: the second evaluator read it back
    qa, qb = ({x.question_id for x in r.answers} for r in runs)
    assert qa == qb and len(qa) == 12                  # the released union has 23 coherence questions; every other one kept
    con = [r.artifacts['construction'] for r in runs]
    assert (con[0]['reused'], con[1]['reused']) == (False, True) and con[0]['builder']['name'] == 'builder'
    cl = load_checklist(next(tmp_path.rglob('coherence.yaml')))
    assert len([q for q in cl.questions if q.stage != 'removed']) == 12 and cl.meta['builder']['name'] == 'builder'
    assert json.loads(next(tmp_path.rglob('construction.json')).read_text())['report']['coherence']['status'] == 'ok'
    assert runs[0].artifacts['settings']['checklist_label'] == 'filtered by builder (12)'


def test_unreadable_filter_fails_the_build(items, tmp_path):
    bad = FunctionJudge(lambda r: 'They all look fine to me.', name='bad', progress=False)
    with pytest.raises(DataError, match='could not be read'):
        run_checkeval(items, evaluator('a', 2), [benchmark_info('summeval').dimension('coherence')], builder=bad, filter=True, checklist_dir=str(tmp_path))
    assert not list(tmp_path.rglob('*.yaml'))


def test_answered_share_floor_and_union_label(items):
    dims = [benchmark_info('summeval').dimension('coherence')]
    half = FunctionJudge(lambda r: '\n'.join(f'Q{k}: yes' for k in re.findall(r'^Q(\d+): ', r.messages[-1]['content'], re.M)[:1]), name='h', progress=False)
    res = run_checkeval(items, half, dims, min_answered=0.5)
    j = res.judgments[0]
    assert j.n_answered < j.n_questions / 2 and j.score is None and 'min_answered 0.5' in j.meta['no_score']
    default = run_checkeval(items, half, dims)      # the released aggregation.py: every item scored
    assert default.judgments[0].score == 1.0 and default.artifacts['score_rules']['below 0.5 answered'] == len(items)
    none = FunctionJudge(lambda r: 'I cannot tell.', name='n', progress=False)
    zero = run_checkeval(items, none, dims)
    assert zero.judgments[0].score == 0.0 and 'released aggregation.py' in zero.judgments[0].meta['score_rule']
    assert all(not a.ok for a in zero.answers)      # the answers stay failures with their reasons
    assert run_checkeval(items, none, dims, unanswered='none').judgments[0].score is None
    assert res.artifacts['settings']['checklist_label'] == 'unfiltered union (23)'
    with pytest.raises(ValueError, match='min_answered'):
        run_checkeval(items, half, dims, min_answered=2)


def test_qags_uses_the_consistency_checklist():
    it = load_benchmark('qags_xsum', limit=1)
    seen = []
    j = FunctionJudge(lambda r: seen.append(r) or 'Q1: yes', name='s', progress=False)
    res = run_checkeval(it, j, [benchmark_info('qags_xsum').dimension('consistency')])
    assert res.artifacts['settings']['checklist_label'] == 'unfiltered union (29)'


def test_per_question_filter_for_a_weak_builder(items, tmp_path):
    "filter_form=per_question: one constrained keep/drop request per question; 'no' drops it; the label says the form."
    asked = []
    def keep(req):
        asked.append(req)
        assert req.constraint.choices == ['yes', 'no'] and req.max_tokens == 1
        return 'no' if len(asked) % 4 == 0 else 'yes'          # drops every fourth question
    builder = FunctionJudge(keep, name='weak', progress=False)
    dims = [benchmark_info('summeval').dimension('coherence')]
    res = run_checkeval(items, evaluator('a', 2), dims, builder=builder, filter=True, filter_form='per_question', checklist_dir=str(tmp_path))
    assert len(asked) == 23 and len({x.question_id for x in res.answers}) == 23 - 5
    assert res.artifacts['settings']['checklist_label'] == 'filtered by weak, one question at a time (no redundancy check) (18)'
    rep = json.loads(next(tmp_path.rglob('construction.json')).read_text())['report']['coherence']
    assert rep['status'] == 'ok' and 'redundancy not checked' in rep['form']
    bad = FunctionJudge(lambda r: 'perhaps', name='bad', progress=False)
    with pytest.raises(DataError, match='could not be read'):
        run_checkeval(items, evaluator('a', 2), dims, builder=bad, filter=True, filter_form='per_question', checklist_dir=str(tmp_path / 'b'))


def test_qags_shares_the_summeval_filter(tmp_path):
    "QAGS answers SummEval's consistency checklist filtered once by the builder: the SummEval run's set, not a second filter."
    calls = []
    builder = FunctionJudge(builder_fn(calls), name='builder', progress=False)
    se = benchmark_info('summeval')
    run_se = run_checkeval(load_benchmark('summeval', limit=1), evaluator('a', 2), se.dimensions, builder=builder, filter=True,
                           checklist_dir=str(tmp_path))
    run_q = run_checkeval(load_benchmark('qags_xsum', limit=1), evaluator('a', 2), [benchmark_info('qags_xsum').dimension('consistency')],
                          builder=builder, filter=True, checklist_dir=str(tmp_path))
    assert calls == ['filter'] * 4                      # SummEval's four dimensions, filtered once; QAGS read them back
    assert run_q.artifacts['construction']['reused'] and run_q.artifacts['construction']['folder'] == run_se.artifacts['construction']['folder']
    assert {a.question_id for a in run_q.answers} == {a.question_id for a in run_se.answers if a.dimension == 'consistency'}
    assert set(run_q.artifacts['checklists']) == {'consistency'}
