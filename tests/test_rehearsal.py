"""A reduced rehearsal (issue 26): three simulated judges, 16 SummEval summaries, G-Eval and CheckEval, through the real
OpenAI client, cache and methods against the rehearsal server; the planted checks must pass, and must fail when the reply
path is broken on the client side."""
import json
import pytest
import yaml
import checkeval.judges.openai as oa
from checkeval.reproduction.rehearsal import rehearse

JUDGES = {'gpt-4o': {'noise': 0.4}, 'llama-3.1-8b': {'noise': 1.3}, 'qwen2.5-7b': {'noise': 1.2}}

def small_config(tmp_path):
    cfg = {'judges': JUDGES, 'blocks': [{'grid': 'methods-summeval-four-dimensions', 'judges': sorted(JUDGES),
                                         'methods': ['geval', 'checkeval'], 'dimensions': ['coherence', 'fluency'], 'limit': 16}]}
    p = tmp_path/'rehearsal.yaml'; p.write_text(yaml.safe_dump(cfg))
    return p

def test_reduced_rehearsal_meets_the_planted_truth(tmp_path, capsys):
    s = rehearse(config=small_config(tmp_path), papers=False, out=tmp_path/'out', n_boot=300, progress=False)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last)['planted_checks'] == s['planted_checks']          # the last line is the summary
    assert s['failed_points'] == [] and s['requests'] > 150
    assert s['planted_checks']['passed'] >= 2*3*2*2 and s['planted_checks']['failed'] == 0, s
    assert (tmp_path/'out'/'planted_checks.csv').exists()
    assert not (tmp_path/'out'/'figures').exists() or not any((tmp_path/'out'/'figures').iterdir())

def test_a_broken_reply_path_fails_the_planted_checks(tmp_path, monkeypatch):
    orig = oa.parse_chat_completion
    def broken(data, **kw):                          # a client that reads every answer backwards
        ch = data['choices'][0]; t = ch['message']['content'] or ''
        t = t.replace('yes', '\0').replace('no', 'yes').replace('\0', 'no')
        ch['message']['content'] = str(6 - int(t)) if t.strip().isdigit() and 1 <= int(t) <= 5 else t
        ch['logprobs'] = None
        return orig(data, **kw)
    monkeypatch.setattr(oa, 'parse_chat_completion', broken)
    # the patch lives in this process: the points run in its threads (the test above runs them in worker processes)
    s = rehearse(config=small_config(tmp_path), papers=False, out=tmp_path/'out', n_boot=300, progress=False, workers='thread')
    assert s['failed_points'] == [], s['failed_points']
    assert s['planted_checks']['failed'] >= 2*3*2 and not s['ok'], {k: s[k] for k in ('planted_checks', 'items_waiting', 'requests')}

def test_judge_groups_read_the_judges_file_from_the_library(tmp_path):
    # found by the rehearsal: the paper notebook's agreement tables crashed (NameError: yaml) once two real judges had runs
    from checkeval.metaeval.analyses import judge_groups
    p = tmp_path/'judges.yaml'; p.write_text(yaml.safe_dump({'judges': {'a': {'group': 'large'}, 'b': {'group': 'small'}}}))
    assert judge_groups(['a', 'b'], config=p) == {'all': ['a', 'b'], 'large': ['a'], 'small': ['b']}

def test_request_keys_of_rendered_prompts_are_unchanged():
    "The template cache and the rehearsal speed-ups change no request: a judge cache of real runs stays valid (key pinned from before them)."
    from checkeval.prompts import render
    from checkeval.judges.types import JudgeRequest, Constraint, request_key
    def key():
        msgs = render('geval/evaluate', task='a summary of a news article', target='summary', dimension='coherence',
                      inputs=[{'label': 'Article', 'text': 'The cat sat on the mat.', 'tag': 'article'},
                              {'label': 'Summary', 'text': 'A cat sat.', 'tag': 'summary'}],
                      definition='the summary is well organised', lo=1, hi=5)
        return request_key(JudgeRequest(model='meta-llama/Llama-3.1-70B-Instruct', messages=msgs, max_tokens=8, temperature=0.0,
                                        logprobs=True, top_logprobs=5, constraint=Constraint(choices=['1', '2', '3', '4', '5'])))
    assert key() == key() == 'b765b23f65c20aa5c525c5a49ee2d0ce9b55eb0c87d32585faf7f16948abea84'

def test_seal_engagingness_requests_are_answered_on_engagingness():
    "SEAL's Topical-Chat engagingness prompt also names a sub-dimension 'Coherence with interest flow': the simulated judge must still answer on engagingness."
    from checkeval.core import Dimension, Item
    from checkeval.judges.engine import FunctionJudge
    from checkeval.methods.seal.method import run_seal
    from checkeval.testing.rehearsal import ItemIndex, PlantedResponder
    dims = ['coherence', 'engagingness', 'groundedness', 'naturalness', 'overall', 'understandability']
    words = 'river garden piano window orange silver marble candle forest bottle ladder pencil'.split()
    items = [Item(benchmark='topical_chat', item_id=f'tc{i}', group_id=f'g{i}', system_id='s',
                  source=f'A: did you know about the {words[i]} festival downtown?\nB: no, tell me more about it please',
                  context=f'The {words[i]} festival is held every spring.',
                  output=f'I went to the {words[i]} festival with my {words[i+6]} club and we loved every minute of it there.',
                  scores={d: float((3*i + 2*k) % 5 + 1) for k, d in enumerate(dims)}) for i in range(6)]
    r = PlantedResponder(ItemIndex({'topical_chat': items}))
    seen = []
    def fn(req):
        seen.append(r.recognise('\n'.join(m['content'] for m in req.messages))[:2])
        rf = {'type': 'json_schema', 'json_schema': {'schema': req.constraint.json_schema}} if req.constraint else None
        return r.answer({'model': 'gpt-4o', 'messages': req.messages, 'response_format': rf})[0]
    res = run_seal(items, FunctionJudge(fn, name='gpt-4o'), [Dimension(name='engagingness', definition='how much the response makes one want to go on talking')])
    assert [it.item_id for it, _ in seen] == [it.item_id for it in items]
    assert {d for _, d in seen} == {'engagingness'}, seen
    assert all(j.meta['status'] == 'ok' for j in res.judgments)

def test_one_yes_no_decision_per_item_is_a_checklist_of_one():
    "SEAL without decomposition scores each summary 0 or 1: the planted truth must be a yes/no decision, not the continuous opinion."
    import numpy as np, pandas as pd
    from checkeval.reproduction.rehearsal import run_form, planted_interval
    from checkeval.testing.rehearsal import form_scores
    sel = pd.DataFrame({'score': [0., 1., 1., 0., 1.], 'meta': [{}]*5})
    assert run_form(sel, 'summeval', 'coherence') == ('checklist', None, 1)
    z = np.linspace(-2, 2, 60)
    f = form_scores(z, 'checklist', k=1, share=0.3)
    assert set(f) == {0., 1.} and abs(f.mean() - 0.3) < 0.05                   # demanding question: as few yes as the run gave
    draws = np.array([form_scores(z, 'checklist', k=1, share=0.3, draw=d) for d in range(8)])
    assert planted_interval('kendall', z, draws, n_boot=200)[1] <= planted_interval('kendall', z, draws[0], n_boot=200)[2]

def test_a_share_of_each_items_own_answers_is_planted_per_item():
    "SEAL on sentence pairs: one decision per pair, 1 to 5 pairs per summary; the planted checklist has each item's own length."
    import pandas as pd
    from checkeval.reproduction.rehearsal import run_form
    from checkeval.testing.rehearsal import form_scores
    sel = pd.DataFrame({'item_id': ['a', 'b', 'c', 'd'], 'score': [0., 0.5, 1/3, 1.], 'n_questions': [1, 2, 3, 2], 'meta': [{}]*4})
    assert run_form(sel, 'summeval', 'coherence') == ('checklist', None, {'a': 1, 'b': 2, 'c': 3, 'd': 2})
    assert form_scores([-3., 0.1, 0.1, 3.], 'checklist', k=[1, 2, 3, 2]).tolist()[::3] == [0., 1.]

SEAL_RUN = r'''
from checkeval.core import Dimension, Item
from checkeval.judges.engine import FunctionJudge
from checkeval.methods.seal.method import run_seal
from checkeval.testing.rehearsal import ItemIndex, PlantedResponder, planted_judges
s = [f'The {w} story goes on with the {w} and what happened to the people there.' for w in
     ('harbour', 'station', 'bakery', 'library', 'garden', 'market', 'museum')]
items = [Item(benchmark='summeval', item_id=f'd1/M{i}', group_id='d1', system_id=f'M{i}', source='a news story', output=o,
              scores={DIM: float(1 + (3*i) % 5)}) for i, o in enumerate(pick(s))]
r = PlantedResponder(ItemIndex({'summeval': items}), planted_judges({'gpt-4o': {'group': 'api', 'noise': 0.4}}))
def fn(req):
    rf = {'type': 'json_schema', 'json_schema': {'schema': req.constraint.json_schema}} if req.constraint and req.constraint.json_schema else None
    return r.answer({'model': 'gpt-4o', 'messages': req.messages, 'response_format': rf})[0]
res = run_seal(items, FunctionJudge(fn, name='gpt-4o'), [Dimension(name=DIM, definition=DEFINITION)])
'''   # SEAL on a few summaries of one story, answered by the simulated GPT-4o (`pick`: the summaries from the sentences `s`)

SEAL_PAIRS_SCRIPT = ('import json\nDIM, DEFINITION = "coherence", "how well the sentences hang together"\n'
                     'pick = lambda s: [" ".join(s[1:4])]*4 + [" ".join(s[:4]), " ".join(s[3:7]), " ".join(s[2:6])]\n' + SEAL_RUN +
                     'print(json.dumps({j.system_id: [j.score, j.meta["mode"]] for j in res.judgments}, sort_keys=True))\n')

def test_seal_sentence_pair_scores_do_not_depend_on_the_hash_seed():
    "SEAL's coherence prompt shows a summary as its sentence pairs (never whole): the simulated judge must find the same item in every process."
    import os, subprocess, sys
    def scores(seed):
        env = {**os.environ, 'PYTHONHASHSEED': str(seed)}
        p = subprocess.run([sys.executable, '-c', SEAL_PAIRS_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return json.loads(p.stdout.strip().splitlines()[-1])
    runs = [scores(seed) for seed in range(5)]
    assert all(v[1] == 'units' for v in runs[0].values()), runs[0]          # every summary judged pair by pair (the path under test)
    assert all(r == runs[0] for r in runs[1:]), runs

def test_a_seal_rating_is_planted_as_a_rating():
    "SEAL without verification rates on 1-5 and maps the rating onto [0, 1]: the planted form is the rating, not a checklist of four."
    import pandas as pd
    from checkeval.reproduction.rehearsal import run_form
    sel = pd.DataFrame({'item_id': list('abcde'), 'score': [0., .25, .5, .75, 1.], 'n_questions': [1]*5, 'meta': [{'rating_scale': [1, 5]}]*5})
    assert run_form(sel, 'summeval', 'coherence') == ('rating', (1, 5), None)

def test_one_checklist_for_every_item_is_planted_with_shared_questions():
    """InteractEval puts each item's share of yes answers to the same K questions on the dimension's scale: the planted form is
    one checklist of K (its questions' difficulties shared by every item), not each item's own questions (found at full size:
    per-item difficulties planted too low a correlation, 29 failed checks)."""
    import numpy as np, pandas as pd
    from checkeval.reproduction.rehearsal import run_form
    from checkeval.testing.rehearsal import form_scores
    sel = pd.DataFrame({'item_id': list('abcd'), 'score': [1., 1 + 4/3, 1 + 8/3, 5.], 'n_questions': [3]*4, 'meta': [{'scale': [1., 5.]}]*4})
    assert run_form(sel, 'summeval', 'coherence') == ('checklist', None, 3)
    z = np.linspace(-2, 2, 200)
    shared = form_scores(z, 'checklist', k=3)
    assert set(np.round(shared, 6)) <= {0.0, 0.333333, 0.666667, 1.0}    # a share of three answers

def test_seal_verdicts_are_planted_from_the_questions_asked(tmp_path):
    "SEAL's answers name each verdict's question and unit: the planted share of every item is the one the server's replies give."
    import pandas as pd
    from checkeval.core import write_jsonl
    from checkeval.reproduction.rehearsal import asked_shares
    ns = {'DIM': 'fluency', 'DEFINITION': 'how well the sentences read',
          'pick': lambda s: [' '.join(s[i:i + 1 + i % 4]) for i in range(6)]}     # one to four sentences: one unit (holistic) up to several
    exec(SEAL_RUN, ns)
    r, res = ns['r'], ns['res']
    write_jsonl(tmp_path/'answers.jsonl', res.answers)
    sel = pd.DataFrame({'item_id': [j.item_id for j in res.judgments], 'score': [j.score for j in res.judgments],
                        'n_questions': [j.n_questions for j in res.judgments], 'run': str(tmp_path)})
    assert sel.score.notna().all() and sel.score.nunique() > 1
    planted = asked_shares(r, sel, 'summeval', 'fluency', 'gpt-4o', list(sel.item_id))
    assert planted is not None and planted.tolist() == sel.score.tolist()
