"""A reduced rehearsal (issue 26): three simulated judges, 16 SummEval summaries, G-Eval and CheckEval, through the real
OpenAI client, cache and methods against the rehearsal server; the planted checks must pass, and must fail when the reply
path is broken on the client side."""
import json
import pytest
import yaml
import checkeval.judges.openai as oa
from checkeval.rehearse import rehearse

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
    s = rehearse(config=small_config(tmp_path), papers=False, out=tmp_path/'out', n_boot=300, progress=False)
    assert s['failed_points'] == []
    assert s['planted_checks']['failed'] >= 2*3*2 and not s['ok']

def test_judge_groups_read_the_judges_file_from_the_library(tmp_path):
    # found by the rehearsal: the paper notebook's agreement tables crashed (NameError: yaml) once two real judges had runs
    from checkeval.analyses import judge_groups
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
