"CheckEval and G-Eval through the real `openai` backend against the local OpenAI-compatible server (hash replies with logprobs)."
import math
import pytest
from checkeval.testing.server import ChatServer
from checkeval.judges import OpenAIJudge
from checkeval.data import load_benchmark, benchmark_info
from checkeval.methods.checkeval.method import run_checkeval
from checkeval.methods.baselines import run_geval


@pytest.fixture(scope='module')
def server():
    with ChatServer(mode='hash') as s: yield s


def judge(server, tmp_path):
    return OpenAIJudge('local', model='local', base_url=server.url, api_key_env=None, cache=tmp_path/'cache.sqlite', progress=False)


def test_question_granularity_records_p_yes(server, tmp_path):
    items = load_benchmark('summeval')[:2]
    j = judge(server, tmp_path)
    res = run_checkeval(items, j, [benchmark_info('summeval').dimension('fluency')], granularity='question', stage='seed')
    assert len(res.answers) == 2 * 4 and res.artifacts['settings']['logprobs'] is True
    for a in res.answers:
        assert a.ok and a.raw_text.split()[0] in ('yes', 'no')            # hash replies: "yes 3" / "no 2"
        assert a.p_yes is not None and (a.p_yes > 0.5) == (a.value == 1.0)
        assert a.cache_key and a.prompt_tokens > 0
    for jd in res.judgments:
        vals = [a.value for a in res.answers if a.item_id == jd.item_id]
        assert jd.score == pytest.approx(sum(vals) / len(vals))
    # cached: a second run sends nothing
    sent = server.stats()['received']
    j2 = judge(server, tmp_path)
    run_checkeval(items, j2, [benchmark_info('summeval').dimension('fluency')], granularity='question', stage='seed')
    assert server.stats()['received'] == sent and j2.usage()['cached'] == 8


def test_geval_over_http(server, tmp_path):
    items = load_benchmark('summeval')[:1]
    res = run_geval(items, judge(server, tmp_path), [benchmark_info('summeval').dimension('coherence')], n=3, temperature=1.0)
    assert len(res.answers) == 3
    for a in res.answers:   # "yes 3": the only in-range number is the score
        assert a.ok and 1 <= a.value <= 5 and a.value == float(a.raw_text.split()[1])
    assert res.judgments[0].score == pytest.approx(sum(a.value for a in res.answers) / 3)
