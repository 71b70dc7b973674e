"""The built-in `smollm2` judge served over the OpenAI API (`python -m checkeval.testing.server --model smollm2`)
gives the same answers as the `hf` backend in-process: CheckEval (per-question answers with P(yes)) and RocketEval
grading (choices constrained to Yes/No, normalised P(yes)) on one SummEval item (the shortest, `short_items`), one dimension, through the real
`openai` backend. Answer texts and statuses must be equal (CheckEval's replies are held to its JSON schema on both sides)
and P(yes) within 1e-4 (the client sends the requests at once and the server computes those waiting together in one
batch call, as the in-process judge does; how they are grouped may differ: the same model, float noise apart)."""
import os, subprocess, sys
from pathlib import Path
import pytest
from checkeval.judges import OpenAIJudge, get_judge
from checkeval.judges.builtin import ModelFileError
from checkeval.methods.rocketeval.method import grade_items, make_checklist
from checkeval.runs import evaluate
from conftest import short_items

ROOT = Path(__file__).resolve().parent.parent
TOL = 1e-4
QUESTIONS = ['Does the summary state the main event of the article?', 'Is the summary free of facts the article does not contain?']


@pytest.fixture(scope='module')
def hf_judge(tmp_path_factory):
    try: j = get_judge('smollm2', cache=tmp_path_factory.mktemp('hf') / 'cache.sqlite', progress=False)
    except ModelFileError as e: pytest.skip(f'smollm2 is not installed: {e}')   # converted once here, before the server loads it
    return j


@pytest.fixture(scope='module')
def server(hf_judge):
    env = {**os.environ, 'HF_HUB_OFFLINE': '1', 'CHECKEVAL_PROGRESS': '0'}
    p = subprocess.Popen([sys.executable, '-m', 'checkeval.testing.server', '--port', '0', '--model', 'smollm2'], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = p.stdout.readline().strip()
        assert line.startswith('listening on '), line
        yield line.split()[-1]
    finally:
        p.terminate(); p.wait(10)


@pytest.fixture
def openai_judge(server, hf_judge, tmp_path):
    # choices go out as vLLM's structured_outputs and JSON schemas as response_format, so that the server constrains them as the
    # hf backend does (smollm2 holds its replies to a request's schema)
    return OpenAIJudge('smollm2-openai', model=hf_judge.model, base_url=server, api_key_env=None, choice_mode='structured_outputs',
                       supports_json_schema=hf_judge.supports_json_schema,
                       cache=tmp_path / 'cache.sqlite', timeout=300, max_concurrency=8, progress=False)   # the server batches what waits


def assert_same(hf_answers, api_answers):
    key = lambda a: (a.item_id, a.dimension, a.question_id)
    hf, api = {key(a): a for a in hf_answers}, {key(a): a for a in api_answers}
    assert hf and set(hf) == set(api)
    for k, a in hf.items():
        b = api[k]
        assert a.status == b.status, (k, a.status, b.status)    # the same reply parses (or fails) the same way
        assert b.raw_text == a.raw_text, k
        assert (a.p_yes is None) == (b.p_yes is None), k
        if a.p_yes is not None: assert abs(a.p_yes - b.p_yes) <= TOL, (k, a.p_yes, b.p_yes)
        # a value that is a probability (RocketEval's normalised P(Yes)) differs by the same float noise as p_yes
        assert (a.value is None) == (b.value is None), k
        if a.value is not None: assert abs(a.value - b.value) <= TOL, (k, a.value, b.value)
    return hf


@pytest.mark.timeout(600)
def test_checkeval_same_over_the_openai_api(hf_judge, openai_judge, tmp_path):
    opts = dict(granularity='question', stage='seed', max_tokens=8)   # one request per question, P(yes) from its logprobs
    _, local = evaluate('checkeval', 'summeval', hf_judge, items=short_items(1), dimensions=['coherence'], root=tmp_path / 'hf', **opts)
    info, remote = evaluate('checkeval', 'summeval', openai_judge, items=short_items(1), dimensions=['coherence'], root=tmp_path / 'api', **opts)
    assert info.n_items == 1 and len(remote.answers) == len(local.answers) > 1
    same = assert_same(local.answers, remote.answers)
    assert any(a.p_yes is not None for a in same.values())
    assert [j.score for j in local.judgments] == [j.score for j in remote.judgments]


@pytest.mark.timeout(600)
def test_rocketeval_grading_same_over_the_openai_api(hf_judge, openai_judge):
    items = short_items(1)
    cls = {it.group_id: make_checklist(it.group_id, QUESTIONS, benchmark='summeval') for it in items}
    local = grade_items(items, cls, hf_judge, dimension='coherence')
    remote = grade_items(items, cls, openai_judge, dimension='coherence')
    assert len(local) == len(QUESTIONS)
    same = assert_same(local, remote)
    assert all(a.ok and a.p_yes is not None and a.raw_text in ('Yes', 'No') for a in same.values())
