"""InteractEval's paper tables (issue 27): which runs reach the main tables, MAE on the run's own scale, the per-question
run kept apart from the released-checklist row, the authors' prompts at every stage, and the pooled Table 9's title."""
import json, re, warnings

import pandas as pd
import pytest

from checkeval import data
from checkeval.judges import FunctionJudge
from checkeval.runs import evaluate
from checkeval.reproduction.reporting import run_metas
from checkeval.methods.interacteval.method import run_interacteval, upstream_checklist
from checkeval.methods.interacteval.build import CONSTRUCTION_STAGES
from checkeval.methods.interacteval.tables import (TABLE_TITLES, describe, condition_order, main_table_frame, mae_table,
                                                   run_score_ranges)

pytestmark = [pytest.mark.filterwarnings('ignore::UserWarning'),
              pytest.mark.skipif(not data.available('benchmarks/summeval/summeval.jsonl'), reason='SummEval not available')]


def _echo(r): return r.meta.get('placeholder') or 'yes'


def test_self_built_ellipse_and_sampled_runs_reach_the_main_tables(tmp_path):
    if not data.available('benchmarks/ellipse/ellipse_test.csv'): pytest.skip('ELLIPSE not available')
    j = FunctionJudge(_echo, name='echo')
    ell = {'checklist_source': 'build', 'attributes': 'think_aloud', 'condition': 'SL-TA', 'ta_judges': 'echo', 'task': 'essay'}
    evaluate('interacteval', 'ellipse', j, limit=3, dimensions=['cohesion'], options=ell, root=tmp_path)
    evaluate('interacteval', 'summeval', j, limit=4, dimensions=['coherence'], options={'sample_frac': 0.5, 'sample_seed': 1}, root=tmp_path)
    evaluate('interacteval', 'summeval', j, limit=4, dimensions=['coherence'], root=tmp_path)
    evaluate('interacteval', 'summeval', j, limit=4, dimensions=['coherence'], options={'checklist_source': 'build', 'components': 3}, root=tmp_path)
    runs = run_metas(tmp_path)
    frame = runs[['benchmark', 'method', 'judge', 'variant']]
    kept = main_table_frame(frame, runs)
    assert sorted(zip(kept.benchmark, kept.variant != 'default')) == [('ellipse', True), ('summeval', False), ('summeval', True)]
    assert not kept.variant.str.contains('components').any()


def test_mae_follows_the_runs_scale_not_its_values(tmp_path):
    items = data.load_benchmark('summeval')[:4]
    no = FunctionJudge(lambda r: json.dumps({'answers': [{'id': i, 'answer': 'no'} for i in range(1, r.meta['n_questions'] + 1)]}), name='no')
    evaluate('interacteval', 'summeval', no, items=items, dimensions=['coherence'], root=tmp_path)
    runs = run_metas(tmp_path)
    scales = {'coherence': (1, 5)}
    ranges = run_score_ranges(runs, scales)
    assert ranges[('interacteval', 'no', 'default', 'coherence')] == (1.0, 5.0)
    from checkeval.reproduction.reporting import scores_with_human
    frame = scores_with_human('summeval', ['interacteval'], root=tmp_path)
    assert set(frame.score) == {1.0}
    t = mae_table(frame, scales, ranges)
    expected = (frame.human - 1.0).abs().mean()                 # all "no" = 1.0 on 1–5 (was mapped to 5.0)
    assert t.mae.iloc[0] == pytest.approx(expected)


def test_the_per_question_run_has_its_own_condition_row():
    assert describe({})['condition'] != describe({'answers': 'per_question'})['condition']
    rows = condition_order([describe({'answers': 'per_question'})['condition'], 'released checklist'])
    assert rows.count('released checklist') == 1 and len(rows) == 7


def test_upstream_prompts_at_every_stage():
    items = data.load_benchmark('summeval')[:1]
    seen = []
    def judge(req):
        seen.append((req.meta['stage'], req.constraint, req.messages[0]['content']))
        if req.meta['stage'] == 'think_aloud': return '{"1": "The sentences should follow a logical order."}'
        if req.meta['stage'] == 'evaluate': return json.dumps({q: 'Yes' for q in re.findall(r'^- (.+\?)$', req.messages[-1]['content'], re.M)})
        return req.meta['placeholder']
    from checkeval.core import Dimension
    res = run_interacteval(items, FunctionJudge(judge, name='gpt-4'), [Dimension(name='coherence', scale=(1, 5))], checklist_source='build',
                           attributes='think_aloud', condition='SL-TA', prompt_source='upstream')
    assert [s for s, _, _ in seen] == ['think_aloud', *CONSTRUCTION_STAGES, 'evaluate']
    assert all(c is None for s, c, _ in seen if s != 'evaluate')       # the authors' prompts ask for their own shapes
    assert seen[0][2].startswith('You are an assessor who rate coherence')
    assert seen[1][2].startswith('Given a set of attributes')
    assert res.artifacts['construction']['coherence']['prompt_source'] == 'upstream' and res.judgments[0].score == 5.0


def test_pooled_table9_is_not_titled_sample_level():
    assert 'pooled' in TABLE_TITLES['table09_summeval_correlations']
    assert not any('sample-level' in t for t in TABLE_TITLES.values())
