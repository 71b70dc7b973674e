"""Check-Eval (`keypoint`) through `checkeval.runs.evaluate` with a scripted judge: both stages, records on disk,
failures as nulls with reasons, and a rerun served from the cache."""
import json, re
from pathlib import Path

import pytest

from checkeval import data
from checkeval.judges import FunctionJudge
from checkeval.runs import evaluate, load_run

pytestmark = pytest.mark.skipif(not data.available('benchmarks/legal_sts_pt/stj_sample_32.jsonl'), reason='legal_sts not available')


def scripted(req):
    "Checklist: one question per long word of the text; evaluation: yes when the word occurs; garbage for one text."
    system, user = req.messages[0]['content'], req.messages[-1]['content']
    if 'Lista de verificação:' in system:
        words = re.findall(r"cita '(\w+)'", system)
        return json.dumps({'answers': [{'id': i, 'answer': 'sim' if w.lower() in user.lower() else 'não'} for i,w in enumerate(words, 1)]})
    words = list(dict.fromkeys(w.lower() for w in re.findall(r'[A-Za-zÀ-ú]{9,}', user)))[:6]
    if 'HABEAS' in user: return 'Não sei.'
    return json.dumps({'items': [f"O texto cita '{w}'?" for w in words]})


def test_evaluate_records_and_cache(tmp_path):
    judge = FunctionJudge(scripted, name='scripted', cache=tmp_path/'cache.sqlite')
    info, res = evaluate('keypoint', 'legal_sts', judge, limit=4, root=tmp_path/'runs', criteria='consistency')
    answers, judgments, meta = load_run(info.path)
    assert len(answers) == len(res.answers) > 0
    ok = [a for a in answers if a.ok]
    assert ok and all(a.cache_key and a.meta['question'].endswith('?') for a in ok)
    failed = [a for a in answers if not a.ok]
    for a in failed: assert a.value is None and a.status.startswith('no checklist: ')
    # scores are recomputable from the answers
    for j in judgments:
        if j.dimension != 'consistency': continue
        parts = {}
        for a in answers:
            if a.item_id == j.item_id and a.dimension == 'consistency' and a.ok: parts.setdefault(a.sub_dimension, []).append(a.value)
        if j.score is not None:
            r = sum(parts['reference-guided'])/len(parts['reference-guided'])
            p = sum(parts['candidate-guided'])/len(parts['candidate-guided'])
            assert j.meta['recall'] == pytest.approx(r) and j.meta['precision'] == pytest.approx(p)
            assert j.score == pytest.approx(0 if r + p == 0 else 2*r*p/(r + p))
    expert = {j.item_id: j.score for j in judgments if j.dimension == 'expert'}
    cons = {j.item_id: j.score for j in judgments if j.dimension == 'consistency'}
    assert expert == cons                              # one criterion: the aggregate is that criterion
    first = judge.usage()
    assert first['sent'] > 0
    judge.reset_usage()
    evaluate('keypoint', 'legal_sts', judge, limit=4, root=tmp_path/'runs', criteria='consistency')
    assert judge.usage()['sent'] == 0 and judge.usage()['cached'] == first['requests']


def test_unparseable_checklist_is_a_failure_not_a_zero(tmp_path):
    from checkeval.data import load_benchmark
    items = [it for it in load_benchmark('legal_sts') if 'HABEAS' in it.output][:1]
    assert items
    judge = FunctionJudge(scripted, name='scripted')
    _, res = evaluate('keypoint', 'legal_sts', judge, items=items, root=tmp_path, criteria='consistency', mode='candidate', save=False)
    assert [(a.question_id, a.value, a.status) for a in res.answers] == [('candidate-guided:checklist', None, 'no checklist: no checklist items')]
    assert [j.score for j in res.judgments] == [None, None, None]
