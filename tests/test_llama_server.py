"""Every method through the `openai` backend against llama.cpp's own `llama-server` (a server this project did not write),
serving the GGUF file of the built-in `smollm2` judge, as the judges-file entry `llamacpp-smollm2`: each request must be
accepted (no HTTP or connection error in any answer), some answer of each method must parse, and every answer without a
value must carry its failure reason. The server renders prompts with the chat template the GGUF file carries: it must be
the one the `hf` backend applies, to the token.

`make test-servers` builds the server once (cached under data/cache/llama.cpp/), sets CHECKEVAL_LLAMA_SERVER and runs
this file; without that variable every test here skips, with the reason (`make test` builds no C++)."""
import os, sys, warnings
from pathlib import Path
import pytest
from conftest import run_method, short_items

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.llama_server import JUDGE, MODEL, URL_ENV, binary, post, serve

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
SENT_BADLY = ('judge error', 'HTTP ', 'connection error', 'malformed response', 'timeout')


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    from checkeval.judges.builtin import ModelFileError, smollm2_gguf
    try: gguf = smollm2_gguf()
    except ModelFileError as e: pytest.skip(f'smollm2 is not installed: {e}')
    log = tmp_path_factory.mktemp('llama-server') / 'server.log'
    with serve(EXE, gguf, log=log) as url:
        old = os.environ.get(URL_ENV)
        os.environ[URL_ENV] = url
        try: yield url
        finally:
            if old is None: os.environ.pop(URL_ENV, None)
            else: os.environ[URL_ENV] = old


@pytest.fixture(scope='module')
def judge(server, tmp_path_factory):
    from checkeval.judges import get_judge
    return get_judge(JUDGE, cache=tmp_path_factory.mktemp('llamacpp') / 'cache.sqlite', progress=False)


def test_the_server_answers_to_the_judge_entrys_model(server, judge):
    import json, urllib.request
    with urllib.request.urlopen(server + '/models', timeout=10) as r: ids = [m['id'] for m in json.loads(r.read())['data']]
    assert judge.model == MODEL and MODEL in ids, ids


def test_chat_template_is_the_hf_backends(server, smollm2):
    "The prompt llama-server builds from a method's messages is the hf backend's, text and token ids alike (a CheckEval and a RocketEval request, and one with a system turn)."
    from checkeval.methods.checkeval.method import checklist_requests, get_checklist
    from checkeval.methods.rocketeval.method import grading_messages, instance_of
    it = short_items(1)[0]
    grouped = checklist_requests([it], {'coherence': get_checklist('summeval', 'coherence')})[0][1].messages
    grading = grading_messages(instance_of(it), it.output, 'Does the summary state the main event of the article?')
    for messages in (grouped, grading, [{'role': 'system', 'content': 'You grade summaries.'}] + grading):
        prompt = post(server, '/apply-template', {'messages': messages})['prompt']
        assert prompt == smollm2.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
        ids = post(server, '/tokenize', {'content': prompt, 'add_special': False, 'parse_special': True})['tokens']
        assert ids == smollm2.chat_ids(messages)


def sent_well(res):
    "Every answer's request was accepted and answered by the server (a reply that does not parse is the model's, not the transport's)."
    bad = [a.status for a in res.answers if a.status and any(s in a.status for s in SENT_BADLY)]
    assert not bad, bad[:3]


def test_checkeval_p_yes(judge, tmp_path):
    "CheckEval, one question per request held to yes/no: P(yes) from the server's top log-probabilities."
    res, parsed = run_method('checkeval', 'summeval', judge, tmp_path, ['coherence'], granularity='question', answer='choices')
    sent_well(res)
    assert all(a.value in (0.0, 1.0) for a in parsed) and any(a.p_yes is not None and 0.0 <= a.p_yes <= 1.0 for a in parsed)


def test_checkeval_grouped_json_schema(judge, tmp_path):
    "CheckEval's grouped answers, replies held to the method's JSON schema by the server's grammar."
    res, parsed = run_method('checkeval', 'summeval', judge, tmp_path, ['coherence'])
    sent_well(res)
    assert all(a.value in (0.0, 1.0) for a in parsed)


@pytest.mark.parametrize('method', ['geval', 'likert'])
def test_rating_with_log_probabilities(judge, tmp_path, method):
    "G-Eval and Likert: the rating on the dimension's scale, and its probability-weighted form from the top log-probabilities."
    # G-Eval's paper setting decodes a free reply, which this judge does not write as a number: its rating held to the scale
    res, parsed = run_method(method, 'summeval', judge, tmp_path, ['coherence'], **({'answer': 'choices'} if method == 'geval' else {}))
    sent_well(res)
    assert all(1.0 <= a.value <= 5.0 for a in parsed)
    assert any(a.meta.get('prob_weighted') is not None and 1.0 <= a.meta['prob_weighted'] <= 5.0 for a in parsed)


def test_seeval(judge, tmp_path):
    res, parsed = run_method('seeval', 'summeval', judge, tmp_path, ['coherence'], max_tokens=60)
    sent_well(res)
    assert all(1.0 <= a.value <= 5.0 for a in parsed)


def test_rocketeval_p_yes(judge, tmp_path):
    "RocketEval grading: one-token Yes/No answers, each a normalised P(Yes) read from the top log-probabilities."
    res, parsed = run_method('rocketeval', 'summeval', judge, tmp_path, ['coherence'], checklists='fixed')
    sent_well(res)
    assert all(0.0 <= a.value <= 1.0 and a.p_yes == a.value for a in parsed)


@pytest.mark.parametrize('method,options', [('seal', {'max_tokens': 60}), ('seal', {'verdicts': 'per_unit', 'max_tokens': 60}),
                                            ('keypoint', {'max_tokens': 250}), ('keypoint', {'answers': 'per_question', 'max_tokens': 250})])
def test_json_schema_methods(judge, tmp_path, method, options):
    "SEAL and Check-Eval, whose replies (units, checklists, verdicts) are held to JSON schemas, and their one-token forms."
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        from checkeval.runs import evaluate
        info, res = evaluate(method, 'summeval', judge, items=short_items(1), dimensions=['coherence'], seed=0, root=tmp_path / 'runs', options=options)
    assert res.answers
    sent_well(res)
    for a in res.answers:
        assert a.value in (0.0, 1.0) if a.value is not None else a.status not in ('ok', None)
    assert any(a.value is not None for a in res.answers), [a.status for a in res.answers][:3]


@pytest.mark.parametrize('options', [{'sample_unit': 'items'}, {'answers': 'per_question', 'sample_unit': 'items'}])
def test_interacteval(judge, tmp_path, options):
    "InteractEval with the released checklist, its answers in one reply and one per question."
    res, parsed = run_method('interacteval', 'summeval', judge, tmp_path, ['coherence'], **options)
    sent_well(res)


def chat(server, **body):
    "One raw chat request to the server: (HTTP status, JSON reply)."
    import json, urllib.error, urllib.request
    req = urllib.request.Request(server + '/chat/completions', data=json.dumps({'model': MODEL, **body}).encode(),
                                 headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=120) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read() or b'{}')


ASK = [{'role': 'user', 'content': 'Is the sky blue on a clear day? Answer Yes or No.'}]


def test_what_the_server_does_with_the_constraint_fields(server):
    """What the llamacpp profile of the test server copies, seen on the real one: vLLM's choice fields are ignored with
    HTTP 200 (the reply is free), a GBNF `grammar` holds the reply to the choices, a JSON schema in `response_format` holds
    it to the schema, and top log-probabilities come back as many as asked, as decoded token texts."""
    import json
    for field in ({'guided_choice': ['Maybe']}, {'structured_outputs': {'choice': ['Maybe']}}):
        status, r = chat(server, messages=ASK, max_tokens=4, temperature=0, **field)
        assert status == 200 and r['choices'][0]['message']['content'] != 'Maybe', (field, r)
    status, r = chat(server, messages=ASK, max_tokens=4, temperature=0, grammar='root ::= "Maybe" | "Never"',
                     logprobs=True, top_logprobs=20)
    assert status == 200 and r['choices'][0]['message']['content'] in ('Maybe', 'Never'), r
    assert len(r['choices'][0]['logprobs']['content'][0]['top_logprobs']) == 20
    schema = {'type': 'object', 'properties': {'answer': {'type': 'string', 'enum': ['Maybe', 'Never']}}, 'required': ['answer'], 'additionalProperties': False}
    status, r = chat(server, messages=ASK, max_tokens=48, temperature=0,
                     response_format={'type': 'json_schema', 'json_schema': {'name': 'choice', 'strict': True, 'schema': schema}})
    assert status == 200 and r['choices'][0]['finish_reason'] == 'stop', r
    assert json.loads(r['choices'][0]['message']['content'])['answer'] in ('Maybe', 'Never'), r


def test_samples_and_model_names(server):
    """`n` samples come back in one reply (this llama-server does not refuse n > 1), and a request naming another model is
    answered by the one model the server has."""
    status, r = chat(server, messages=ASK, max_tokens=1, n=2, temperature=1.0, seed=1)
    assert status == 200 and len(r['choices']) == 2, (status, r)
    status, r = chat(server, messages=ASK, max_tokens=1, model='no-such-model')
    print('unknown model:', status, str(r)[:300])
    assert status == 200 and r['model'] in (MODEL, 'no-such-model'), (status, r)
