"""SEAL with scripted judges: aggregation on cases computed by hand, malformed replies, thresholds,
ablations, stage costs, and the real `openai` backend against the local server in script mode."""
import json, math, re

import pytest

from checkeval.core import DataError, Dimension, Item
from checkeval.judges import FunctionJudge, JudgeResponse, OpenAIJudge
from checkeval.methods.seal.method import (load_instantiations, normalise_weights, run_seal, seal_judgments, split_sentences,
                                    threshold_sweep)
from checkeval.methods.seal.tables import holistic_share, request_costs, stage_costs
from checkeval.runs import OptionError
from checkeval.methods.seal.method import NONSTOPPING_MAX_TOKENS

SUMMARY = 'Rain fell all night . The final was postponed . Officials apologised . Fans got refunds .'
SUMM = Item(benchmark='summeval', item_id='d1/M1', group_id='d1', system_id='M1',
            source='It rained all night. The final was postponed to Monday. Officials apologised. Tickets will be refunded.',
            references=['The final was postponed because of rain.'], output=SUMMARY)
TC = Item(benchmark='topical_chat', item_id='t1/s1', group_id='t1', system_id='s1', source='do you like jazz ?\nyes , a lot .\n',
          context='jazz started in new orleans .', output='me too ! have you been to new orleans ?')
QAGS = Item(benchmark='qags_xsum', item_id='7', group_id='7', system_id='7', source='Police said three men robbed a van in Glasgow.',
            output='Three men robbed a van in Edinburgh.')
D = lambda *names: [Dimension(name=n) for n in names]

SOURCE_FACTS = ['It rained all night.', 'The final was postponed.', 'The final was moved to Monday.', 'Officials apologised.', 'Tickets will be refunded.']
OUTPUT_FACTS = ['Rain fell all night.', 'The final was postponed.', 'Officials apologised.', 'Fans got refunds.', 'Fans were angry.', 'The stadium closed.']


def fenced(prompt, tag):
    m = re.search(rf'<{tag}>\n(.*?)\n</{tag}>', prompt, re.S)
    return m.group(1) if m else ''


def n_units(prompt):
    return len(re.findall(r'^U\d+: ', fenced(prompt, 'units'), re.M)) or len(re.findall(r'^S\d+: ', fenced(prompt, 'facts'), re.M))


class Script:
    "A judge script: replies by template, counts requests, remembers the requests it saw."
    def __init__(self, **replies):
        self.replies, self.seen = replies, []

    def __call__(self, req):
        self.seen.append(req)
        t, prompt = req.meta['template'], req.messages[-1]['content']
        r = self.replies.get(t)
        if callable(r): r = r(req, prompt)
        if r is None and t == 'split_sentences': r = json.dumps({'sentences': split_sentences(fenced(prompt, 'summary'))})
        if r is None and t == 'monadic_facts':
            r = json.dumps({'source_facts': SOURCE_FACTS, 'reference_facts': ['The final was postponed.'], 'output_facts': OUTPUT_FACTS})
        return r if r is not None else 'I cannot answer that.'


def by_dimension(prompt_map):
    "A verify reply chosen by the dimension named in the prompt."
    def reply(req, prompt):
        for dim, r in prompt_map.items():
            if f'the {dim} of a' in prompt: return r
    return reply


def scores(res): return {j.dimension: j.score for j in res.judgments}


# --- SummEval: hand-computed aggregation ------------------------------------------------------------------

def test_summeval_hand_computed():
    s = Script(verify_units=by_dimension({'coherence': '{"verdicts": [1, 1, 0]}', 'fluency': '{"verdicts": [1, 1, 1, 0]}',
                                          'relevance': '{"verdicts": [1, 1, 1, 0, 0, 0]}'}),
               verify_support='{"support": [["c1"], ["c2", "c3"], ["c4"], ["c5"], [], []]}')
    j = FunctionJudge(s)
    res = run_seal([SUMM], j, D('coherence', 'fluency', 'consistency', 'relevance'))
    got = scores(res)
    assert got['coherence'] == pytest.approx(2/3)        # 3 transitions: 1, 1, 0
    assert got['fluency'] == pytest.approx(3/4)          # 4 sentences
    assert got['consistency'] == pytest.approx(4/6)      # 6 facts >= threshold 6, four supported
    assert got['relevance'] == pytest.approx(3/6)
    # one split shared by coherence and fluency, one fact request shared by consistency and relevance
    assert [r.meta['template'] for r in s.seen].count('split_sentences') == 1
    assert [r.meta['template'] for r in s.seen].count('monadic_facts') == 1
    split = next(r.messages[-1]['content'] for r in s.seen if r.meta['template'] == 'split_sentences')
    assert fenced(split, 'source') == SUMM.source and fenced(split, 'summary') == SUMMARY   # the split shows the source, as the paper's does
    assert split.index('<source>') < split.index('<summary>') < split.index('Split the summary')
    assert len(s.seen) == 6
    units = {u['dimension']: u for u in res.artifacts['units']}
    assert units['coherence']['segmenter'] == 'judge' and len(units['coherence']['units']) == 3
    assert units['consistency']['facts']['source_facts'] == SOURCE_FACTS
    cons = [a for a in res.answers if a.dimension == 'consistency' and a.meta['stage'] == 'verify']
    assert [a.meta['cited'] for a in cons][:2] == [['c1'], ['c2', 'c3']]
    assert all(a.meta['weight'] == 1.0 and a.meta['weight_status'] == 'single sub-dimension' for a in cons)
    # scores are recomputed from the answers alone
    again = {j.dimension: j.score for j in seal_judgments(res.answers)}
    assert again == got
    for jd in res.judgments: assert jd.n_failed == 0 and jd.meta['status'] == 'ok'


def test_threshold_gates_holistic_rating():
    s = Script(verify_units='{"verdicts": [1, 1, 0]}', rate_units='{"ratings": [4]}')
    res = run_seal([SUMM], FunctionJudge(s), D('coherence'), threshold=5, holistic='rating')   # 4 sentences < 5
    jd = res.judgments[0]
    assert jd.meta['mode'] == 'holistic' and jd.score == pytest.approx((4 - 1)/4) and jd.meta['score_kind'] == 'rating'
    assert [a.meta['stage'] for a in res.answers] == ['decompose', 'rate']
    sw = threshold_sweep([SUMM], FunctionJudge(s), D('coherence'), thresholds=(2, 3, 4, 5), holistic='rating')
    assert sw['mode'].tolist() == ['units', 'units', 'units', 'holistic']
    assert sw['score'].tolist() == pytest.approx([2/3, 2/3, 2/3, 0.75])
    # per-dimension thresholds
    res = run_seal([SUMM], FunctionJudge(s), D('coherence', 'fluency'), threshold={'fluency': 9}, splitter='pysbd')
    assert {j.dimension: j.meta['mode'] for j in res.judgments} == {'coherence': 'units', 'fluency': 'holistic'}


def test_holistic_binary_and_ablations():
    s = Script(verify_units=lambda req, p: json.dumps({'verdicts': [1]*n_units(p)}), rate_units=lambda req, p: json.dumps({'ratings': [5] + [1]*(n_units(p)-1)}))
    # w/o SD: every output evaluated as a whole, here with the binary sub-dimension question
    r = run_seal([SUMM], FunctionJudge(s), D('coherence'), decompose=False, holistic='binary')
    assert r.judgments[0].meta['mode'] == 'holistic' and r.judgments[0].score == 1.0
    assert not any(a.meta['stage'] == 'decompose' for a in r.answers)
    # w/o SV: a 1-5 rating per unit: (5, 1, 1) -> (1, 0, 0) -> 1/3
    r = run_seal([SUMM], FunctionJudge(s), D('coherence'), verify=False)
    assert r.judgments[0].meta['stage'] == 'rate' and r.judgments[0].score == pytest.approx(1/3)
    # a dialogue response is one unit: w/o SV rates it as a whole
    r = run_seal([TC], FunctionJudge(s), D('naturalness'), verify=False)
    assert r.judgments[0].score == 1.0


# --- Topical-Chat and QAGS: weights -----------------------------------------------------------------------

def test_topical_chat_weights_renormalised_and_uniform_ablation():
    reply = '{"verdicts": [[1, 1, 1, 0, 1]], "weights": [0.5, 0.4, 0.4, 0.4, 0.3]}'   # sums to 2
    r = run_seal([TC], FunctionJudge(Script(verify_units=reply)), D('engagingness', 'understandability'))
    jd = r.judgments[0]
    assert jd.score == pytest.approx((0.5 + 0.4 + 0.4 + 0.3)/2)
    assert list(jd.meta['weights'].values()) == pytest.approx([0.25, 0.2, 0.2, 0.2, 0.15])
    w = r.artifacts['weights'][0]
    assert w['raw'] == [0.5, 0.4, 0.4, 0.4, 0.3] and sum(w['used']) == pytest.approx(1) and w['status'] == 'ok'
    assert [a.meta['weight_raw'] for a in r.answers] == [0.5, 0.4, 0.4, 0.4, 0.3]
    assert [a.sub_dimension for a in r.answers] == ['interest', 'emotional_resonance', 'initiative', 'personalization', 'interest_flow']
    assert r.artifacts['skipped_dimensions'] == [{'benchmark': 'topical_chat', 'dimension': 'understandability',
                                                  'reason': 'no SEAL instantiation for topical_chat.understandability'}]
    u = run_seal([TC], FunctionJudge(Script(verify_units=reply)), D('engagingness'), weighting='uniform')
    assert u.judgments[0].score == pytest.approx(4/5)
    assert u.artifacts['weights'][0]['raw'] == [0.5, 0.4, 0.4, 0.4, 0.3]


def test_qags_five_sub_dimensions():
    s = Script(verify_units='{"verdicts": [0, 1, 1, 1, 1], "weights": [0.4, 0.15, 0.15, 0.15, 0.15]}')   # flat list for the one unit
    r = run_seal([QAGS], FunctionJudge(s), D('consistency'))
    assert r.judgments[0].score == pytest.approx(0.6)
    prompt = s.seen[0].messages[-1]['content']
    assert prompt.count('Police said three men') == 1          # QAGS reference = source: shown once
    assert 'Q5. Contextual fidelity' in prompt


# --- malformed replies -----------------------------------------------------------------------------------------

MALFORMED = [
    # reply, expected score, status prefix, weight status prefix
    ('{"verdicts": [[1, 1, 0, 1', None, 'invalid or truncated JSON', 'reply not parsed'),
    ('{"verdicts": [[1, 1, 0]], "weights": [0.2, 0.2, 0.2, 0.2, 0.2]}', None, 'verdict for U1 has 3 answers, expected 5', None),
    ('{"verdicts": [[1,1,1,1,1], [1,1,1,1,1]], "weights": [0.2, 0.2, 0.2, 0.2, 0.2]}', None, 'expected 1 verdicts', None),
    ('{"verdicts": [["1", 1, 1, 1, 1]], "weights": [0.2, 0.2, 0.2, 0.2, 0.2]}', None, 'verdict for U1 is not 0/1', None),
    ('{"verdicts": [[null, 1, 1, 1, 1]], "weights": [0.2, 0.2, 0.2, 0.2, 0.2]}', None, 'verdict for U1 is not 0/1', None),
    ('{"verdicts": "1,1,1,1,1", "weights": "0.2,0.2,0.2,0.2,0.2"}', None, '"verdicts" must be a list', None),
    ('{"scores": [1, 1, 1, 1, 1]}', None, 'missing key(s)', None),
    ('[1, 1, 1, 1, 1]', None, 'reply is JSON but not an object', None),
    ('', None, 'empty reply', None),
    ('All five criteria are met.', None, 'no JSON object in reply', None),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": [0.5, -0.5, 0.5, 0, 0]}', 0.5, 'ok', 'ok'),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": [0, 0, 0, 0, 0]}', 0.2, 'ok', 'uniform fallback: all weights zero'),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": [-1, -1, -1, -1, -1]}', 0.2, 'ok', 'uniform fallback: all weights zero after rejecting'),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": [0.5, 0.5]}', 0.2, 'ok', 'uniform fallback: expected 5 weights, got 2'),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": ["0.5", 0.1, 0.1, 0.1, 0.2]}', 0.2, 'ok', 'uniform fallback: weights must be finite'),
    ('{"verdicts": [[1, 0, 0, 0, 0]], "weights": [NaN, 0.1, 0.1, 0.1, 0.2]}', 0.2, 'ok', 'uniform fallback: weights must be finite'),
    ('{"verdicts": [[1, 0, 0, 0, 0]]}', 0.2, 'ok', 'uniform fallback: no weights in reply'),
    ('{"verdicts": [[1, 1, 1, 1, 0]], "weights": [0.1, 0.1, 0.1, 0.1, 0.6], "explanation": "short"}', 0.4, 'ok', 'ok'),
    ('Here is my evaluation:\n{"verdicts": [[true, true, false, false, false]], "weights": [0.3, 0.3, 0.2, 0.1, 0.1]}\nThanks!', 0.6, 'ok', 'ok'),
    ('```json\n{"verdicts": [[1, 1, 1, 1, 1]], "weights": [1, 1, 1, 1, 1]}\n```', 1.0, 'ok', 'ok'),
]


@pytest.mark.parametrize('reply,score,status,wstatus', MALFORMED)
def test_malformed_replies(reply, score, status, wstatus):
    r = run_seal([TC], FunctionJudge(lambda req: reply), D('naturalness'))
    jd = r.judgments[0]
    assert len(r.answers) == 5
    if score is None:
        assert jd.score is None and jd.n_failed == 5 and jd.n_answered == 0
        assert all(a.value is None and a.status.startswith(status) for a in r.answers)
    else:
        assert jd.score == pytest.approx(score) and jd.n_failed == 0
        assert all(a.ok for a in r.answers)
    if wstatus: assert r.artifacts['weights'][0]['status'].startswith(wstatus), r.artifacts['weights'][0]['status']
    assert all(a.raw_text == reply for a in r.answers)


def test_extra_keys_and_prose_are_noted():
    r = run_seal([TC], FunctionJudge(lambda req: 'Sure: {"verdicts": [1, 1, 1, 1, 1], "weights": [1, 1, 1, 1, 1], "why": "ok"}'), D('naturalness'))
    assert r.answers[0].meta['extra_keys'] == ['why'] and r.answers[0].meta['prose_around_json'] is True


def test_unusable_weights_can_fail():
    r = run_seal([TC], FunctionJudge(lambda req: '{"verdicts": [[1, 0, 0, 0, 0]], "weights": [0, 0, 0, 0, 0]}'), D('naturalness'),
                 weight_fallback='fail')
    assert r.judgments[0].score is None
    assert all(a.value is None and a.status == 'weights unusable: all weights zero' for a in r.answers)


def test_wrong_number_of_units_summeval():
    s = Script(verify_units='{"verdicts": [1, 1]}')     # 3 transitions expected
    r = run_seal([SUMM], FunctionJudge(s), D('coherence'))
    jd = r.judgments[0]
    assert jd.score is None and jd.n_failed == 3
    assert jd.meta['status'] == 'expected 3 verdicts (one per unit), got 2'


def test_support_with_unknown_fact_ids_fails_only_that_unit():
    s = Script(verify_support='{"support": [["c1"], ["c99"], [], ["c4"], [], ["C2"]]}')
    r = run_seal([SUMM], FunctionJudge(s), D('consistency'))
    jd = r.judgments[0]
    assert jd.score == pytest.approx(3/5) and jd.n_failed == 1 and jd.meta['n_units_scored'] == 5
    bad = [a for a in r.answers if a.meta['stage'] == 'verify' and not a.ok]
    assert len(bad) == 1 and bad[0].status == "cites unknown source fact ids ['c99']" and bad[0].question_id == 'u2.entailed'


# --- stage-1 failures ------------------------------------------------------------------------------------------

def test_judge_split_failure_falls_back_to_pysbd_and_is_recorded():
    s = Script(split_sentences='{"sentences": ["Rain fell all night.", "The final was cancelled."]}',   # rewrites the text
               verify_units=lambda req, p: json.dumps({'verdicts': [1]*n_units(p)}))
    r = run_seal([SUMM], FunctionJudge(s), D('fluency'))
    dec = [a for a in r.answers if a.meta['stage'] == 'decompose'][0]
    assert dec.value is None and dec.status.startswith('the split does not reproduce the text')
    assert r.artifacts['units'][0]['segmenter'].startswith('pysbd (judge split failed')
    assert r.judgments[0].score == 1.0 and r.judgments[0].meta['n_units'] == 4
    r = run_seal([SUMM], FunctionJudge(s), D('fluency'), split_fallback=False)
    assert r.judgments[0].score is None and r.judgments[0].n_failed == 1
    assert r.judgments[0].meta['status'].startswith('decomposition failed: the split does not reproduce')


def test_facts_failure_sends_no_verification():
    s = Script(monadic_facts='{"source_facts": ["x"], "reference_facts": [], "output_facts": "not a list"}')
    r = run_seal([SUMM], FunctionJudge(s), D('consistency', 'relevance'))
    assert [q.meta['template'] for q in s.seen] == ['monadic_facts']
    for jd in r.judgments:
        assert jd.score is None and jd.n_failed == 1 and jd.meta['status'] == 'decomposition failed: "output_facts" must be a list of strings'


def test_judge_errors_are_recorded():
    r = run_seal([TC], FunctionJudge(lambda req: JudgeResponse(error='HTTP 500')), D('coherence'))
    assert all(a.value is None and a.status == 'judge error: HTTP 500' for a in r.answers)
    assert r.judgments[0].score is None and r.judgments[0].n_failed == 6


# --- requests, options, configuration --------------------------------------------------------------------------

def test_json_schema_constraint_matches_units():
    s = Script(verify_units='{"verdicts": [1, 1, 0]}')
    run_seal([SUMM], FunctionJudge(s), D('coherence'))
    schema = s.seen[-1].constraint.json_schema
    assert schema['properties']['verdicts']['minItems'] == schema['properties']['verdicts']['maxItems'] == 3
    s2 = Script(verify_units='{"verdicts": [1, 1, 0]}')
    run_seal([SUMM], FunctionJudge(s2), D('coherence'), json_schema=False)
    assert all(q.constraint is None for q in s2.seen)
    s3 = Script(verify_units='{"verdicts": [1, 1, 0]}')
    run_seal([SUMM], FunctionJudge(s3, supports_json_schema=False), D('coherence'))
    assert all(q.constraint is None for q in s3.seen)


def test_options_and_configuration_errors(tmp_path):
    # a direct call is checked by the runner's own path: one OptionError line, as from the grid or the CLI
    with pytest.raises(OptionError, match="^unknown option 'treshold' for method seal; valid options: ") as e:
        run_seal([TC], FunctionJudge(Script()), D('coherence'), treshold=3)
    assert '\n' not in str(e.value)
    with pytest.raises(OptionError, match="^option 'weighting' of method seal: expected one of 'judge', 'uniform'"):
        run_seal([TC], FunctionJudge(Script()), D('coherence'), weighting='learned')
    import checkeval.methods.seal.method as seal_mod
    assert not hasattr(seal_mod, 'seal_options')   # no second validator beside SealOptions
    hanna = Item(benchmark='hanna', item_id='h1', group_id='h', system_id='m', source='Write a story.', output='Once upon a time . The end .')
    with pytest.raises(DataError, match='no instantiation for benchmark'): run_seal([hanna], FunctionJudge(Script()), D('coherence'))
    # borrow the SummEval instantiation
    s = Script(verify_units='{"verdicts": [1]}')
    r = run_seal([hanna], FunctionJudge(s), D('coherence'), instantiation='summeval', threshold=2)
    assert r.judgments[0].score == 1.0
    # a configuration of one's own: sentences with two weighted sub-dimensions
    cfg = tmp_path/'seal.yaml'
    cfg.write_text('hanna:\n  coherence:\n    unit: sentences\n    splitter: pysbd\n    threshold: 2\n    inputs: [source]\n'
                   '    sub_dimensions:\n      - {id: on_topic, name: On topic, question: "Does it follow the prompt?"}\n'
                   '      - {id: clear, name: Clear, question: "Is it clear?"}\n')
    s = Script(verify_units='{"verdicts": [[1, 0], [1, 1]], "weights": [3, 1]}')
    r = run_seal([hanna], FunctionJudge(s), D('coherence'), config=str(cfg))
    assert r.judgments[0].score == pytest.approx((0.75 + 1.0)/2)
    assert load_instantiations(cfg)['hanna']['coherence'].sub_dimensions[1].id == 'clear'


def test_stage_costs_from_records():
    def reply(req):
        t = req.meta['template']
        text = Script()(req) if t in ('split_sentences', 'monadic_facts') else (
            '{"support": [["c1"], ["c2"], ["c4"], ["c5"], [], []]}' if t == 'verify_support' else
            json.dumps({'verdicts': [1]*n_units(req.messages[-1]['content'])}))
        pt, ct, lat = {'split_sentences': (100, 20, 1.0), 'monadic_facts': (300, 120, 4.0)}.get(t, (200, 10, 2.0))
        return JudgeResponse(text=text, prompt_tokens=pt, completion_tokens=ct, latency_s=lat)
    items = [SUMM, SUMM.model_copy(update={'item_id': 'd1/M2', 'system_id': 'M2'})]
    r = run_seal(items, FunctionJudge(reply), D('coherence', 'fluency', 'consistency', 'relevance'))
    c = stage_costs(r.answers).set_index(['dimension', 'stage'])
    assert c.loc[('coherence', 'stage 1'), 'tokens'] == 120 and c.loc[('coherence', 'stage 1'), 'latency_s'] == 1.0
    assert c.loc[('coherence', 'stage 2 & 3'), 'tokens'] == 210
    assert c.loc[('coherence', 'total'), 'tokens'] == 330 and c.loc[('coherence', 'total'), 'latency_s'] == 3.0
    assert c.loc[('consistency', 'stage 1'), 'tokens'] == c.loc[('relevance', 'stage 1'), 'tokens'] == 420
    assert c.loc[('relevance', 'total'), 'latency_s'] == 6.0
    assert c.loc[('average', 'total'), 'tokens'] == pytest.approx((330*2 + 630*2)/4)
    assert (c['n_items'] == 2).all()


# --- the real openai client against the local server with scripted replies -----------------------------------------

def test_openai_backend_with_scripted_server(tmp_path):
    from checkeval.testing.server import ChatServer
    script = tmp_path/'script.jsonl'
    lines = [{'match': 'the naturalness of a response', 'reply': '{"verdicts": [[1, 1, 0, 1, 1]], "weights": [0.3, 0.2, 0.2, 0.1, 0.2]}'},
             {'match': 'the groundedness of a response', 'reply': 'Result: {"verdicts": [[1, 1, 1, 1, 1]], "weights": [0.2, 0.2, 0.2, 0.2, -0.2]} done'},
             {'match': 'the consistency of a summary', 'reply': '{"verdicts": [[1, 1, 0, 1, 1]], "weights": [0.2, 0.2, 0.2, 0.2'}]
    script.write_text('\n'.join(json.dumps(l) for l in lines) + '\n')
    with ChatServer(mode='script', script=script) as srv:
        judge = OpenAIJudge('scripted-http', model='local', base_url=srv.url, cache=str(tmp_path/'cache.sqlite'), supports_json_schema=True)
        r = run_seal([TC], judge, D('naturalness', 'groundedness'))
        got = scores(r)
        assert got['naturalness'] == pytest.approx(0.8)
        assert got['groundedness'] == pytest.approx(1.0)          # negative weight rejected, the rest renormalised
        assert r.artifacts['weights'][1]['rejected'] == [4]
        q = run_seal([QAGS], judge, D('consistency'))
        assert q.judgments[0].score is None and q.answers[0].status.startswith('invalid or truncated JSON')
        assert all(a.cache_key and a.prompt_tokens and a.latency_s is not None for a in r.answers + q.answers)
        sent = judge.usage()['sent']
        r2 = run_seal([TC], judge, D('naturalness', 'groundedness'))     # from the cache
        assert judge.usage()['sent'] == sent and scores(r2) == got
        assert all(a.meta['cached'] for a in r2.answers)


# --- issue 18: w/o SD keeps binary verification, per-dimension sweep ranges, each request counted once ----------------

def test_without_decomposition_defaults_to_binary_on_the_whole_output():
    s = Script(verify_units=lambda req, p: json.dumps({'verdicts': [0]*n_units(p)}), rate_units='{"ratings": [5]}')
    r = run_seal([SUMM], FunctionJudge(s), D('coherence', 'fluency'), decompose=False)
    assert {a.meta['stage'] for a in r.answers} == {'verify'}          # binary decisions, no rating, no decomposition
    assert all(j.meta['mode'] == 'holistic' and j.meta['score_kind'] == 'fraction' and j.score == 0.0 for j in r.judgments)
    r = run_seal([SUMM], FunctionJudge(s), D('coherence'), decompose=False, holistic='rating')
    assert r.judgments[0].meta['score_kind'] == 'rating' and r.judgments[0].score == 1.0
    from checkeval.core import to_frame
    hs = holistic_share(to_frame(r.judgments))
    assert hs.rating_scored.tolist() == [1.0] and hs.holistic.tolist() == [1.0]


def test_threshold_sweep_uses_the_paper_ranges_per_dimension():
    s = Script(verify_units=lambda req, p: json.dumps({'verdicts': [1]*n_units(p)}),
               verify_support=lambda req, p: json.dumps({'support': [['c1']]*n_units(p)}))
    sw = threshold_sweep([SUMM], FunctionJudge(s), D('coherence', 'consistency'))
    got = sw.groupby('dimension').threshold.apply(list).to_dict()
    assert got == {'coherence': [2, 3, 4, 5], 'consistency': [5, 6, 7, 8]}
    # 4 sentences: units up to n=4, whole output at 5; 6 facts: units up to n=6
    assert sw[sw.dimension == 'coherence'].set_index('threshold')['mode'].to_dict() == {2: 'units', 3: 'units', 4: 'units', 5: 'holistic'}
    assert sw[sw.dimension == 'consistency'].set_index('threshold')['mode'].to_dict() == {5: 'units', 6: 'units', 7: 'holistic', 8: 'holistic'}


def test_each_request_counted_once_in_costs():
    def reply(req):
        t = req.meta['template']
        text = Script()(req) if t in ('split_sentences', 'monadic_facts') else json.dumps({'verdicts': [1]*n_units(req.messages[-1]['content'])})
        return JudgeResponse(text=text, prompt_tokens=100, completion_tokens=10, latency_s=1.0)
    r = run_seal([SUMM], FunctionJudge(reply), D('fluency'), splitter='judge')
    n_answers = sum(a.meta['stage'] == 'verify' for a in r.answers)
    assert n_answers == 4                                               # four sentences, one verification request
    reqs = r.artifacts['requests']
    assert [q['stage'] for q in reqs] == ['decompose', 'verify'] and all(q['uses'] == [['summeval', 'd1/M1', 'M1', 'fluency']] for q in reqs)
    c = request_costs(reqs, 'j').set_index(['dimension', 'stage'])
    assert c.loc[('fluency', 'stage 2 & 3'), 'tokens'] == 110 and c.loc[('fluency', 'total'), 'tokens'] == 220
    assert sum((a.prompt_tokens + a.completion_tokens) for a in r.answers) == 110 * (1 + n_answers)   # what the old table summed


def test_runner_checks_seal_options_in_one_line(tmp_path):
    from checkeval.runs import evaluate, OptionError
    with pytest.raises(OptionError, match='holistic'):
        evaluate('seal', 'summeval', FunctionJudge(Script()), limit=1, dimensions=['coherence'], root=tmp_path, holistic='scale')


def _facts_script(req):
    "Replies for the SummEval consistency run: facts, then one support list per summary fact."
    if req.meta['template'] == 'monadic_facts':
        return json.dumps({'source_facts': SOURCE_FACTS, 'reference_facts': [], 'output_facts': OUTPUT_FACTS})
    return json.dumps({'support': [['c1']] * len(OUTPUT_FACTS)})


def test_seal_caps_a_judge_that_cannot_stop_and_says_so():
    # issue 25: smollm2 in the paper's form wrote 4,096 tokens per facts reply; a built-in local judge is capped by default
    seen = []
    weak = FunctionJudge(lambda r: (seen.append(r.max_tokens), _facts_script(r))[1], name='smollm2-like')
    weak.group = 'small-local'
    with pytest.warns(UserWarning, match=f'capped at {NONSTOPPING_MAX_TOKENS} tokens'):
        r = run_seal([SUMM], weak, D('consistency'))
    assert max(seen) == NONSTOPPING_MAX_TOKENS
    cap = r.artifacts['token_cap']
    assert cap['applied'] and cap['max_tokens'] == NONSTOPPING_MAX_TOKENS and 'does not end' in cap['reason']
    assert r.judgments[0].score == 1.0
    # an API judge keeps the paper's per-stage limits (4,096 for the facts), and the run says no cap was applied
    seen.clear()
    api = FunctionJudge(lambda r: (seen.append(r.max_tokens), _facts_script(r))[1], name='gpt-4o-like')
    r = run_seal([SUMM], api, D('consistency'))
    assert max(seen) == 4096 and not r.artifacts['token_cap']['applied']
    # max_tokens= always wins, for either judge
    seen.clear(); run_seal([SUMM], weak, D('consistency'), max_tokens=512)
    assert set(seen) == {512}
    # a judge that says it can stop is not capped, whatever its group
    seen.clear(); weak.can_stop = True; run_seal([SUMM], weak, D('consistency'))
    assert max(seen) == 4096


def test_seal_table_averages_name_the_dimensions_they_average():
    "Issue 26/27: Tables 10 and 11 average over all four dimensions or not at all, and the note names them (or the missing one)."
    import pandas as pd
    from checkeval.methods.seal.tables import average_table, runs_table
    dims = ['coherence', 'fluency', 'consistency', 'relevance']
    rows = pd.DataFrame({'judge': 'j', 'method': ['seal'] * 4 + ['geval'] * 4, 'variant': 'default', 'level': 'summary', 'statistic': 'kendall',
                         'dimension': dims * 2, 'value': [0.1, None, 0.3, None, 0.2, 0.4, 0.6, 0.8], 'n': 12, 'n_items': 12,
                         'note': ['', 'constant judge scores (12 items)', '', 'fewer than 10 scored items (9)', '', '', '', '']})
    av = average_table(rows, dims, ['kendall']).set_index('method')
    assert math.isnan(av.loc['seal', 'τ']) and 'fluency (constant judge scores (12 items))' in av.loc['seal', 'note']
    assert av.loc['geval', 'τ'] == pytest.approx(0.5) and av.loc['geval', 'note'] == 'mean of ' + ', '.join(dims) and av.loc['geval', 'n'] == 12
    three = pd.concat([rows.assign(variant=f's{k}') for k in (1, 2, 3)], ignore_index=True)
    t = runs_table(three, dims, {'s1': 1, 's2': 2, 's3': 3}, ['kendall']).set_index('method')
    assert math.isnan(t.loc['seal', 'τ mean']) and t.loc['seal', 'runs with a value'] == '0/3'   # not the mean of two dimensions
    assert t.loc['geval', 'τ mean'] == pytest.approx(0.5) and t.loc['geval', 'τ std'] == 0 and t.loc['geval', 'n'] == 12


def test_sentence_threshold_share_of_summeval():
    "The share of SummEval summaries a sentence dimension judges holistically at n (about a fifth at the default n = 3)."
    from checkeval import data
    from checkeval.data import load_benchmark
    from checkeval.methods.seal.tables import sentence_threshold_share
    if not data.available('benchmarks/summeval/summeval.jsonl'): pytest.skip('summeval not available')
    s = sentence_threshold_share(load_benchmark('summeval'), (3,)).iloc[0]
    assert s.outputs == 1600 and 0.15 < s.share < 0.3
