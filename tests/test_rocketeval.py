"RocketEval's supervised path through `run_rocketeval`, on synthetic annotations where the right weights are known."
import json, math

import numpy as np
import pytest

from checkeval.core import Item
from checkeval.data import load_arena_elo
from checkeval.judges import FunctionJudge, JudgeResponse
from checkeval.methods.rocketeval import fit_query_predictor, make_checklist, run_rocketeval, save_checklists, unsupervised_score

TRAIN = list(load_arena_elo('mt_bench', 'train')['name'])     # 10 training models
TEST = list(load_arena_elo('mt_bench', 'test')['name'])[:4]   # 4 test models
QS = ['Is point one covered?', 'Is point two covered?', 'Is point three covered?', 'Is point four covered?']


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('rocket_sup')
    rng = np.random.default_rng(0)
    p = {}          # (instance, system) -> item probabilities the scripted judge will report
    labels = []     # annotations of the training models
    for iid in ('A', 'B', 'C'):
        for k, s in enumerate(TRAIN + TEST):
            v = rng.uniform(0.05, 0.95, size=4)
            if iid == 'A': v[2] = 0.05 + 0.9 * (k % 10) / 9          # item 3 decides query A
            if s in TEST and iid == 'A': v[2] = [0.9, 0.6, 0.3, 0.1][TEST.index(s)]
            p[(iid, s)] = [float(x) for x in v]
            if s in TRAIN:
                y = {'A': 1 + 9 * v[2], 'B': 5.0, 'C': [3.0, 8.0][k % 2]}[iid]
                labels.append({'instance_id': iid, 'model': s, 'score': float(y)})
    items = [Item(benchmark='mt_bench', item_id=f'{i}:{s}', group_id=i, system_id=s, source=f'query {i}', output=f'answer of {s} to {i}')
             for i in ('A', 'B', 'C') for s in TRAIN + TEST]
    cls = save_checklists(tmp/'cl.jsonl', [make_checklist(i, QS, benchmark='mt_bench') for i in ('A', 'B', 'C')])
    (tmp/'ann.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in labels))

    def grader(req):
        text = req.messages[-1]['content']
        ans = text.split('<answer>\n')[1].split('\n</answer>')[0]          # 'answer of <system> to <instance>'
        s, iid = ans[len('answer of '):].rsplit(' to ', 1)
        q = text.split('<question>\n')[1].split('\n</question>')[0]
        x = p[(iid, s)][QS.index(q)]
        return JudgeResponse(text='Yes' if x > .5 else 'No', top_logprobs=[{'Yes': math.log(x), 'No': math.log(1 - x)}])
    judge = FunctionJudge(grader, name='scripted', progress=False)
    return items, judge, str(cls), str(tmp/'ann.jsonl'), p, labels


def by_item(res): return {j.item_id: j for j in res.judgments}


def test_unsupervised_matches_the_scripted_probabilities(setup):
    items, judge, cls, ann, p, _ = setup
    res = run_rocketeval(items, judge, [], checklists=cls)
    j = by_item(res)
    for (iid, s), v in p.items():
        assert j[f'{iid}:{s}'].score == pytest.approx(np.mean(v) * 9 + 1)
    # the list-level evaluation ran on the four test models (plus the training ones that have Arena Elo)
    assert isinstance(res.artifacts['ranking'], list) and {r['statistic'] for r in res.artifacts['ranking']} == {'kendall', 'spearman'}


def test_supervised_weights(setup):
    items, judge, cls, ann, p, labels = setup
    res = run_rocketeval(items, judge, [], checklists=cls, annotations=ann)
    j = by_item(res)
    # query A: ten distinct labels on 1-10 -> alpha = 1; the predictor follows item 3
    ja = [j[f'A:{s}'] for s in TEST]
    assert all(x.meta['alpha'] == pytest.approx(1.0) for x in ja)
    assert [x.score for x in ja] == sorted([x.score for x in ja], reverse=True)      # item 3 is 0.9, 0.6, 0.3, 0.1
    fa = fit_query_predictor([p[('A', s)] for s in TRAIN], [r['score'] for r in labels if r['instance_id'] == 'A'])
    assert int(np.argmax(fa.feature_importances_)) == 2
    assert ja[0].score == pytest.approx(fa.predict([p[('A', TEST[0])]])[0])
    # query B: identical labels -> alpha = 0 -> the supervised score is the unsupervised one
    for s in TEST:
        jb = j[f'B:{s}']
        assert jb.meta['alpha'] == pytest.approx(0.0) and jb.score == pytest.approx(unsupervised_score(p[('B', s)]))
        assert jb.meta['split'] == 'test'
    # query C: two equally frequent labels -> alpha = log 2 / log 10, blended by Eq. 4
    a = math.log(2) / math.log(10)
    fc = fit_query_predictor([p[('C', s)] for s in TRAIN], [r['score'] for r in labels if r['instance_id'] == 'C'])
    for s in TEST:
        jc = j[f'C:{s}']
        assert jc.meta['alpha'] == pytest.approx(a)
        assert jc.score == pytest.approx((1 - a) * unsupervised_score(p[('C', s)]) + a * fc.predict([p[('C', s)]])[0])
    assert j[f'C:{TRAIN[0]}'].meta['split'] == 'train'
    # the list-level evaluation reports both the supervised and the unsupervised ranking
    assert {r['scores'] for r in res.artifacts['ranking']} == {'supervised', 'unsupervised'}


def test_without_weight_factor_the_predictor_decides(setup):
    items, judge, cls, ann, p, _ = setup
    j = by_item(run_rocketeval(items, judge, [], checklists=cls, annotations=ann, weight_factor=False))
    for s in TEST:
        assert j[f'B:{s}'].meta['alpha'] == 1.0 and j[f'B:{s}'].score == pytest.approx(5.0)


def test_missing_training_annotations_fall_back_to_unsupervised(setup):
    items, judge, cls, ann, p, _ = setup
    j = by_item(run_rocketeval(items, judge, [], checklists=cls, annotations=ann, train_models=['nobody']))
    x = j[f'A:{TEST[0]}']
    assert x.meta['supervised'] is False and x.meta['supervised_reason'].startswith('0 annotated training responses')
    assert x.score == pytest.approx(unsupervised_score(p[('A', TEST[0])]))
