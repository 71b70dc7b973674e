"""Every method declares its rule for missing answers, and a run says how often that rule decided: a scripted judge that
leaves some checklist questions unanswered gives a non-zero count, in the run's summary and in its `meta.json`."""
import json, math, re

import pytest

from checkeval.core import Dimension, Item
from checkeval.judges import FunctionJudge, JudgeResponse
from checkeval.runs import MissingRule, evaluate, list_methods, load_run, method_spec, missing_counts, missing_rules


def test_every_registered_method_declares_its_rule():
    "A new method registered without `missing=` fails here (and in the table of nbs/04_runs.ipynb)."
    table = missing_rules()
    assert list(table.index) == list_methods() and len(table) >= 9
    undeclared = [m for m in list_methods() if not isinstance(method_spec(m).missing, MissingRule)]
    assert undeclared == [], f'methods without a rule for missing answers: {undeclared}'
    assert table.unread.str.len().gt(0).all() and table.source.str.len().gt(0).all()


def half_answered(req):
    "InteractEval's evaluator: 'yes' to the odd-numbered questions, the even-numbered ones left out of the reply."
    n = len(re.findall(r'^\d+\. ', req.messages[-1]['content'].split('Questions:')[1], re.M))
    return json.dumps({'answers': [{'id': i, 'answer': 'yes'} for i in range(1, n + 1, 2)]})


def test_a_run_with_unread_answers_counts_them(tmp_path):
    judge = FunctionJudge(half_answered, name='half', progress=False)
    info, res = evaluate('interacteval', 'summeval', judge, limit=2, dimensions=['coherence'], root=tmp_path)
    rule = method_spec('interacteval').missing
    unread = [a for a in res.answers if not a.ok]
    assert 0 < len(unread) < len(res.answers)
    m = info.summary['missing_rule']
    assert m == {'name': rule.name, 'answers': len(res.answers), 'unread': len(unread), 'no_logprob': 0}
    assert load_run(info.path)[2]['missing_rule'] == m                       # kept with the run
    n_q = len(res.artifacts['checklists']['coherence']['questions'])
    for j in res.judgments:                                                   # the declared rule: missing counts as not yes
        assert j.score == pytest.approx(1 + 4 * math.ceil(n_q / 2) / n_q)


def test_rocketeval_counts_the_unknown_p_yes_and_the_fill():
    "The released rule: an item neither Yes nor No reads is counted as a missing log-probability, and as filled with 0.5."
    from checkeval.methods.rocketeval.method import run_rocketeval
    k = iter(range(10**6))
    def grader(req):
        if 'checklist' in req.messages[-1]['content']:
            return '1. Is it right?\n2. Is it short?\n3. Is it clear?\n4. Is it polite?\n5. Is it complete?'
        return JudgeResponse(text='Yes', top_logprobs=[{'Yes': 0.0} if next(k) % 5 else {'Hmm': 0.0}])
    it = Item(benchmark='demo', item_id='q:m', group_id='q', system_id='m', source='Say hi.', output='Hi.')
    with pytest.warns(UserWarning, match='written by the grading judge'):
        res = run_rocketeval([it], FunctionJudge(grader, name='scripted', progress=False), [])
    m = missing_counts(res.answers, method_spec('rocketeval').missing, res.artifacts)
    assert m == {'name': method_spec('rocketeval').missing.name, 'answers': 5, 'unread': 0, 'no_logprob': 1,
                 'filled with 0.5': res.artifacts['p_yes_fill']['items_filled']} and m['filled with 0.5'] == 1


def test_a_rating_without_a_distribution_is_counted():
    "G-Eval's weighted score: a read sample whose score token shows no scale value is what `no_logprob` decides."
    from checkeval.methods.baselines import run_geval
    replies = {'s0': JudgeResponse(text='4', top_logprobs=[{'4': -0.1, '3': -2.0}]), 's1': JudgeResponse(text='4', top_logprobs=[{'4': 0.0}]),
               's2': JudgeResponse(text='3', top_logprobs=[{'x': 0.0}]),                # read, but no scale value at its score token
               's3': JudgeResponse(text='no idea', top_logprobs=[{'no': 0.0}])}         # not read
    judge = FunctionJudge(lambda r: next(v for k, v in replies.items() if f'summary {k}.' in r.messages[-1]['content']), name='rater', progress=False)
    items = [Item(benchmark='demo', item_id=f'i{n}', group_id='g', system_id='s', source='A text.', output=f'The summary s{n}.') for n in range(4)]
    res = run_geval(items, judge, [Dimension(name='coherence', definition='hangs together', scale=(1, 5))], logprobs=True)
    m = missing_counts(res.answers, method_spec('geval').missing, res.artifacts)
    assert (m['unread'], m['no_logprob']) == (1, 1), [(a.value, a.meta['prob_weighted_status']) for a in res.answers]
