"""RocketEval's Table 3 (WildBench, from a local export) and Tables 2/7 (agreement with human pairwise votes) on synthetic
inputs where the right answer is known: a scripted grader whose P(Yes) follows the Arena order must rank the models as Arena
Elo does, and votes that agree with the scores must agree."""
import json, math

import numpy as np
import pandas as pd

import pytest

from checkeval import data, settings
from checkeval.core import Judgment
from checkeval.judges import FunctionJudge, JudgeResponse
from checkeval.runs import evaluate
from checkeval.methods.rocketeval.tables import arena_reference, method_ranking_rows, pairwise_agreement_with_votes

needs_mirror = pytest.mark.skipif(not data.available('rankings/arena_elo/wildbench_test.json'), reason='data mirror not available')


def write_export(d, models, n=3):
    "A synthetic WildBench export: `n` sessions, one output file per model (the reply names the model's rank)."
    (d/'model_outputs').mkdir(parents=True)
    rows = [dict(session_id=f's{k}', conversation_input=[dict(role='user', content=f'Question {k}?')], checklist=[f'Check {k}'],
                 primary_tag='Info', references={'gpt-4': f'Answer {k}.'}) for k in range(n)]
    (d/'wildbench.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    for rank, m in enumerate(models):
        (d/'model_outputs'/f'{m}.json').write_text(json.dumps([dict(session_id=f's{k}', output=[f'reply of rank {rank}']) for k in range(n)]))


@needs_mirror
def test_table3_from_a_synthetic_wildbench_export(tmp_path, monkeypatch):
    elo = data.load_arena_elo('wildbench', 'test')
    models = list(elo.sort_values('rating', ascending=False).model)[:4]
    write_export(tmp_path/'wb', models)
    monkeypatch.setenv(settings.ENV_WILDBENCH, str(tmp_path/'wb')); data.clear_caches()

    def grader(req):   # P(Yes) falls with the model's Arena rank
        rank = int(req.messages[-1]['content'].split('reply of rank ')[1][0])
        p = 0.9 - 0.2 * rank
        return JudgeResponse(text='Yes' if p > .5 else 'No', top_logprobs=[{'Yes': math.log(p), 'No': math.log(1 - p)}])
    try:
        info, res = evaluate('rocketeval', 'wildbench', FunctionJudge(grader, name='scripted', progress=False), root=tmp_path/'runs',
                             options={'checklists': 'fixed'})
    finally: data.clear_caches()
    assert len(res.judgments) == 12 and all(j.score is not None for j in res.judgments)
    rows = method_ranking_rows('RocketEval', res.judgments, res.answers, arena_reference('wildbench'), 'Arena Elo', score='score_unsup',
                               n_boot=50, min_items=None)
    assert rows.set_index('statistic').value.to_dict() == {'kendall': 1.0, 'spearman': 1.0}
    assert set(rows.n) == {4} and set(rows['queries × models']) == {'3 × 4'} and set(rows.parse_rate) == {1.0} and set(rows.judge) == {'scripted'}
    # a table's rule (the default): a ranking of 4 models is not printed, and the row says why
    table = method_ranking_rows('RocketEval', res.judgments, res.answers, arena_reference('wildbench'), 'Arena Elo', score='score_unsup', n_boot=50)
    assert table.value.isna().all() and set(table.note) == {'fewer than 10 systems (4)'} and set(table.n) == {4}
    # the same run with the order reversed by the grader would give -1: the check can fail
    flipped = [j.model_copy(update={'meta': {**j.meta, 'score_unsup': 11 - j.meta['score_unsup']}}) for j in res.judgments]
    assert set(method_ranking_rows('x', flipped, res.answers, arena_reference('wildbench'), 'Arena Elo', score='score_unsup', n_boot=10,
                                   min_items=None).value) == {-1.0}


def test_tables_2_7_from_a_votes_file(tmp_path):
    "Votes in FastChat's shape (question_id, turn, FastChat model names) against scores of the catalog's system ids."
    def j(q, s, v): return Judgment(benchmark='mt_bench_responses', item_id=f'{q}/{s}', system_id=s, method='rocketeval', judge='x',
                                    dimension='overall', score=v, meta={'instance_id': q})
    js = [j('81-t1', 'gpt-4-0314', 9.0), j('81-t1', 'claude-1', 6.0), j('81-t1', 'vicuna-13b', 5.95), j('82-t2', 'gpt-4-0314', 3.0), j('82-t2', 'claude-1', 8.0)]
    votes = [dict(question_id=81, turn=1, model_a='gpt-4', model_b='claude-v1', winner='model_a'),            # agrees
             dict(question_id=81, turn=1, model_a='claude-v1', model_b='vicuna-13b-v1.2', winner='tie'),       # 6.0 vs 5.95: a tie, agrees
             dict(question_id=82, turn=2, model_a='gpt-4', model_b='claude-v1', winner='model_a'),             # disagrees
             dict(question_id=83, turn=1, model_a='gpt-4', model_b='claude-v1', winner='model_b')]             # not scored: not matched
    path = tmp_path/'votes.jsonl'
    path.write_text(''.join(json.dumps(v) + '\n' for v in votes))
    names = {'gpt-4': 'gpt-4-0314', 'claude-v1': 'claude-1', 'vicuna-13b-v1.2': 'vicuna-13b'}
    agr = pairwise_agreement_with_votes(js, str(path), names=names)
    assert (agr['n_votes'], agr['n_matched'], agr['n_with_tie'], agr['n_without_tie']) == (4, 3, 3, 2)
    assert agr['with_tie'] == pytest.approx(2 / 3) and agr['without_tie'] == pytest.approx(1 / 2)
    assert pairwise_agreement_with_votes(js, str(path))['n_matched'] == 0     # without the name map nothing matches


def _paper_runs(root):
    "Runs as the paper notebook finds them: two graders, a creator, the labeller's (gpt-4o) Direct run and a CoT run of two models."
    from checkeval.core import Item
    quality = {'t1': 0.2, 't2': 0.5, 't3': 0.8, 'a': 0.9, 'b': 0.7, 'c': 0.4, 'd': 0.1}
    items = [Item(benchmark='alpacaeval', item_id=f'{q}:{s}', group_id=q, system_id=s, source=f'Query {q}?',
                  output=f'reply of {s}', meta={'split': 'train' if s.startswith('t') else 'test'}) for q in ('q1', 'q2', 'q3') for s in quality]
    five = '\n'.join(f'{k}. Is point {k} covered?' for k in range(1, 6))
    creator = FunctionJudge(lambda r: '1. Is it right?\n2. Is it short?' if 'q3' in r.messages[-1]['content'] else five, name='creator', progress=False)
    def grader(flip):
        def reply(req):
            s = req.messages[-1]['content'].split('reply of ')[1].split()[0].strip('<')
            p = min(max(quality[s] if not flip else 1 - quality[s], 0.05), 0.95)
            return JudgeResponse(text='Yes', top_logprobs=[{'Yes': math.log(p), 'No': math.log(1 - p)}])
        return reply
    def scorer(req):
        s = req.messages[-1]['content'].split('reply of ')[1].split()[0].strip('<')
        return f'Score: {1 + round(9 * quality[s])}'
    make = lambda name: creator
    for g, flip in (('g-big', False), ('g-small', True)):
        evaluate('rocketeval', 'alpacaeval', FunctionJudge(grader(flip), name=g, progress=False), items=items, root=root, make_judge=make,
                 options={'creator': 'creator', 'on_creation_failure': 'fixed'})
    evaluate('instance_judge', 'alpacaeval', FunctionJudge(scorer, name='gpt-4o', progress=False), items=items, root=root, options={'style': 'direct'})
    evaluate('instance_judge', 'alpacaeval', FunctionJudge(scorer, name='g-small', progress=False), items=[i for i in items if i.system_id in 'ab'],
             root=root, options={'style': 'cot'})
    return pd.Series({'a': 4.0, 'b': 3.0, 'c': 2.0, 'd': 1.0})


def test_paper_table6_takes_its_graders_and_labeller_from_the_runs(tmp_path):
    "Issue 27: one block per grader found in the runs, supervised on the labeller's scores with α shown, Fixed apart, CoT kept with its reason."
    from checkeval.reproduction.reporting import run_metas
    from checkeval.methods.rocketeval.tables import ranking_table, grader_variants, vote_table
    ref = _paper_runs(tmp_path)
    runs = run_metas(tmp_path)
    t, missing = ranking_table(runs, 'alpacaeval', [('made-up Elo', ref)], n_boot=10, min_items=None)   # a few made-up models
    assert sorted(set(t.judge)) == ['g-big', 'g-small'] and missing == []
    k = t[t.statistic == 'kendall'].set_index(['judge', 'method'])
    assert set(k.loc['g-big'].index) == {'RocketEval (unsupervised)', 'RocketEval (supervised)', 'Fixed checklist', 'Direct', 'CoT'}
    assert k.loc[('g-big', 'RocketEval (unsupervised)'), 'value'] == 1.0 and k.loc[('g-small', 'RocketEval (unsupervised)'), 'value'] == -1.0
    assert k.loc[('g-big', 'RocketEval (unsupervised)'), 'queries × models'] == '2 × 4'      # q3's 2-question checklist failed: not RocketEval
    assert k.loc[('g-big', 'Fixed checklist'), 'queries × models'] == '1 × 4'                # q3, graded with the fixed list, is the Fixed row
    sup = k.loc[('g-small', 'RocketEval (supervised)')]
    assert sup.fitted_queries == 2 and 0 < sup.alpha <= 1 and "labels: gpt-4o's Direct scores (no CoT run of the labeller) of 3 training models" in sup.note
    assert k.loc[('g-small', 'CoT'), 'note'] == '2 queries shared by every row; only 2 models with a score and a reference; need at least 3' and np.isnan(k.loc[('g-small', 'CoT'), 'value'])
    assert k.loc[('g-big', 'CoT'), 'note'] == 'no CoT run of g-big on alpacaeval'
    # the grader's own Direct run is never the label source: a labeller without a run leaves the supervised row unfitted
    vs, run = grader_variants(runs, 'alpacaeval', 'g-big')
    run['options']['labeler'] = 'nobody'
    from checkeval.methods.rocketeval.tables import rocketeval_variants
    assert rocketeval_variants(run)[1]['note'] == 'not fitted: no CoT or Direct run of the labeller nobody on these items'
    votes = [dict(instance_id='q1', model_a='a', model_b='d', winner='model_a')]
    vt = vote_table(runs, 'alpacaeval', votes)
    assert set(vt.judge) == {'g-big', 'g-small'} and {'Fixed checklist', 'RocketEval (supervised)', 'w/o normalised score', 'w/o weight factor (α = 1)'} <= set(vt.method)
    assert vt.set_index(['judge', 'method']).loc[('g-big', 'RocketEval (unsupervised)'), 'with_tie'] == 1.0


def test_table6_labels_from_the_labellers_cot_run_fixed_run_on_every_query_same_queries(tmp_path):
    "Issue 72: the labeller's CoT judgments label the fit (as the released score.py), a checklists: fixed run grades every query, one query set per table."
    from checkeval.reproduction.reporting import run_metas
    from checkeval.core import Item
    from checkeval.methods.rocketeval.tables import ranking_table
    ref = _paper_runs(tmp_path)
    items = [Item(benchmark='alpacaeval', item_id=f'{q}:{s}', group_id=q, system_id=s, source=f'Query {q}?', output=f'reply of {s}',
                  meta={'split': 'train' if s.startswith('t') else 'test'}) for q in ('q1', 'q2', 'q3') for s in ('t1', 't2', 't3', 'a', 'b', 'c', 'd')]
    q = {'t1': 1, 't2': 9, 't3': 5, 'a': 9, 'b': 7, 'c': 4, 'd': 1}
    cot = FunctionJudge(lambda r: f"Fine.\nScore: {q[r.messages[-1]['content'].split('reply of ')[1].split()[0].strip('<')]}", name='gpt-4o', progress=False)
    evaluate('instance_judge', 'alpacaeval', cot, items=items, root=tmp_path, options={'style': 'cot'})
    fixed = FunctionJudge(lambda r: JudgeResponse(text='Yes', top_logprobs=[{'Yes': math.log(0.6), 'No': math.log(0.4)}]), name='g-big', progress=False)
    evaluate('rocketeval', 'alpacaeval', fixed, items=items, root=tmp_path, options={'checklists': 'fixed'})
    t, _ = ranking_table(run_metas(tmp_path), 'alpacaeval', [('made-up Elo', ref)], n_boot=10, min_items=None)
    k = t[(t.statistic == 'kendall') & (t.judge == 'g-big')].set_index('method')
    assert "labels: gpt-4o's CoT judgments of 3 training models" in k.loc['RocketEval (supervised)', 'note']
    assert k.loc['Fixed checklist', 'note'].startswith('a checklists: fixed run')
    # every row on the same 2 queries: the fixed run's q3 (whose created checklist failed) is left out of the Fixed row too
    rows = k.loc[['RocketEval (unsupervised)', 'RocketEval (supervised)', 'Fixed checklist']]
    assert set(rows['queries × models']) == {'2 × 4'} and all('2 queries shared by every row' in n for n in rows.note)
    assert k.loc['Direct', 'note'] == 'no Direct run of g-big on alpacaeval'


def test_table4_prices_are_the_papers_own():
    "Issue 27: Table 4 prices the tokens at RocketEval's own Table 4 prices, kept as presets in configs/paper_items.yaml."
    import yaml
    from checkeval.settings import configs_dir
    cfg = yaml.safe_load((configs_dir()/'paper_items.yaml').read_text())
    cost, presets = cfg['rocketeval_cost'], cfg['price_presets']
    assert (presets[cost['creator']]['price_in'], presets[cost['creator']]['price_out']) == (1.25, 5.00)      # GPT-4o 2024-08-06
    assert (presets[cost['grader']]['price_in'], presets[cost['grader']]['price_out']) == (0.075, 0.30)      # GPT-4o-mini 2024-07-18
    assert cost['gpu_hour_usd'] == 0.36                                                                      # one A5000 on RunPod


def test_ranking_rows_state_n_as_a_number_for_the_index():
    "Issue 26: a ranking row's n is the number of models behind it (readable by table_content), its queries × models beside it."
    from checkeval.core import Judgment
    from checkeval.reproduction.reporting import table_content
    ref = pd.Series({m: float(-k) for k, m in enumerate('abcdefghijkl')})
    js = [Judgment(benchmark='b', item_id=f'{q}/{m}', system_id=m, method='rocketeval', judge='x', dimension='overall', score=12.0 - k + off,
                   meta={'instance_id': q})
          for q, off in (('q1', 0), ('q2', .3)) for k, m in enumerate('abcdefghijkl')]
    rows = method_ranking_rows('RocketEval', js, [], ref, 'made-up', n_boot=10)
    assert set(rows.n) == {12} and set(rows['queries × models']) == {'2 × 12'} and set(rows.value) == {1.0}
    c = table_content(rows)['judges']['x']
    assert c['n'] == [12] and c['values'] >= 2
    five = method_ranking_rows('RocketEval', [j for j in js if j.system_id in 'abcde'], [], ref, 'made-up', n_boot=10)
    assert five.value.isna().all() and set(five.note) == {'fewer than 10 systems (5)'}
