"The shipped judge entries against test servers that behave as vLLM >= 0.12, OpenAI's API and llama.cpp's server do."
import os, subprocess, sys, time
from pathlib import Path
import pytest
from checkeval.judges import JudgeRequest, Constraint, get_judge, load_judges_config
from checkeval.settings import UserError
from checkeval.testing.server import ChatServer

ROOT = Path(__file__).resolve().parents[1]
YES_NO = Constraint(choices=['yes', 'no'])


def _vllm_entries():
    return sorted(n for n, e in load_judges_config().items()
                  if e.get('backend') == 'openai' and e.get('base_url_env') and e.get('choice_mode') == 'structured_outputs')


@pytest.mark.parametrize('name', _vllm_entries())
def test_every_vllm_entry_is_constrained_by_a_server_that_ignores_guided_fields(name, tmp_path):
    e = load_judges_config()[name]
    with ChatServer(profile='vllm', models=[e['model']]) as s:
        j = get_judge(name, base_url=s.url, base_url_env=None, cache=tmp_path/'c.sqlite', progress=False)
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': f'Is text {i} fluent?'}], max_tokens=1, constraint=YES_NO,
                                      logprobs=True, top_logprobs=20) for i in range(6)])
        assert [r.error for r in rs if not r.ok] == []
        assert {r.text for r in rs} <= {'yes', 'no'}, [r.text for r in rs]
        assert all(len(r.top_logprobs[0]) == 20 for r in rs)
        assert not any(k.startswith('refused') for k in s.stats()['faults'])


def test_the_openai_profile_refuses_what_openai_refuses(tmp_path):
    "A request a reasoning model refuses is refused by the profile; the o4-mini entry sends none of it."
    with ChatServer(profile='openai', api_key='test-key', models=['o4-mini-2025-04-16', 'gpt-4o-mini-2024-07-18']) as s, \
         pytest.MonkeyPatch.context() as mp:
        mp.setenv('OPENAI_API_KEY', 'test-key')
        bad = get_judge('gpt-4o-mini', base_url=s.url, cache=False, progress=False, model='o4-mini-2025-04-16', preflight=False)
        r = bad.generate([JudgeRequest(messages=[{'role': 'user', 'content': 'Is it?'}], max_tokens=4)])[0]
        assert 'max_completion_tokens' in r.error
        j = get_judge('o4-mini', base_url=s.url, cache=tmp_path/'c.sqlite', progress=False)
        s.reset()
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': f'Is text {i} fluent?'}], max_tokens=1, constraint=YES_NO,
                                      logprobs=True, top_logprobs=20, temperature=0.0) for i in range(4)])
        assert [r.error for r in rs if not r.ok] == [] and {r.text for r in rs} <= {'yes', 'no'}
        assert s.stats()['faults'] == {}
        assert j.usage()['reasoning_tokens'] > 0
        mp.setenv('OPENAI_API_KEY', 'wrong')
        with pytest.raises(UserError, match='refused the API key in OPENAI_API_KEY'):
            get_judge('o4-mini', base_url=s.url, cache=False, progress=False).generate([JudgeRequest(messages=[{'role': 'user', 'content': 'x'}])])


def test_a_reasoning_budget_spent_before_the_answer_is_a_failure_not_an_answer(tmp_path):
    with ChatServer(profile='openai', models=['o4-mini-2025-04-16']) as s:
        j = get_judge('o4-mini', base_url=s.url, cache=tmp_path/'c.sqlite', progress=False, reasoning_tokens=0, api_key_env=None)
        r = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': 'Is it?'}], max_tokens=1, constraint=YES_NO)])[0]
        assert not r.ok and 'finish_reason=length' in r.error
        assert j.cache.get(request_key_of(j, r)) is None


def request_key_of(j, r): return r.cache_key


def test_n_samples_go_in_one_request(tmp_path):
    with ChatServer(profile='vllm') as s:
        j = get_judge('qwen2.5-7b', base_url=s.url, base_url_env=None, cache=tmp_path/'c.sqlite', progress=False)
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': 'Rate it 1-5.'}], max_tokens=4, temperature=1.0, n=20, seed=1)])
        assert len(rs[0].samples) == 20 and s.stats()['answered'] == 1


def test_insufficient_quota_stops_the_run(tmp_path):
    with ChatServer(profile='openai', quota=2, models=['gpt-4o-mini-2024-07-18']) as s:
        j = get_judge('gpt-4o-mini', base_url=s.url, cache=tmp_path/'c.sqlite', progress=False, api_key_env=None, max_concurrency=1)
        with pytest.raises(UserError, match='no quota left'):
            j.generate([JudgeRequest(messages=[{'role': 'user', 'content': f'q{i}'}], max_tokens=2) for i in range(10)])
        assert s.stats()['answered'] == 2


def test_llamacpp_profile_serves_any_name_and_holds_a_grammar(tmp_path, monkeypatch):
    with ChatServer(profile='llamacpp', model='/models/smollm2.gguf') as s:
        monkeypatch.setenv('CHECKEVAL_URL_LLAMACPP_SMOLLM2', s.url)
        j = get_judge('llamacpp-smollm2', cache=tmp_path/'c.sqlite', progress=False)
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': f'Is text {i} fluent?'}], max_tokens=1, constraint=YES_NO,
                                      logprobs=True, top_logprobs=20) for i in range(4)])
        assert {r.text for r in rs} <= {'yes', 'no'} and all(r.ok for r in rs)


def test_a_judge_at_a_closed_port_fails_fast_with_exit_2_and_no_run_folder(tmp_path):
    import socket
    sock = socket.socket(); sock.bind(('127.0.0.1', 0)); port = sock.getsockname()[1]; sock.close()
    env = {**os.environ, 'CHECKEVAL_URL_QWEN25_7B': f'http://127.0.0.1:{port}/v1', 'CHECKEVAL_RUNS': str(tmp_path/'runs'),
           'CHECKEVAL_PROGRESS': '0'}
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, '-m', 'checkeval.cli', 'evaluate', '--method', 'geval', '--benchmark', 'summeval',
                        '--judge', 'qwen2.5-7b', '--limit', '2'], env=env, capture_output=True, text=True, cwd=ROOT, timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 2, p.stderr[-600:]
    assert 'nothing answers at' in p.stderr and took < 15, (took, p.stderr[-400:])
    assert not any((tmp_path/'runs').rglob('answers.jsonl'))


METHOD_OPTIONS = {'rocketeval': {'creator': 'o4-mini'}}


@pytest.mark.parametrize('method', ['checkeval', 'geval', 'likert', 'seeval', 'keypoint', 'seal', 'interacteval', 'rocketeval'])
def test_every_method_with_a_reasoning_model_sends_nothing_openai_refuses(method, tmp_path, monkeypatch):
    "Each method run with the o4-mini entry against a server holding OpenAI's rules: no request refused, or one line before any request."
    from checkeval.runs import evaluate
    with ChatServer(profile='openai', api_key='k', models=['o4-mini-2025-04-16']) as s:
        monkeypatch.setenv('OPENAI_API_KEY', 'k')
        make = lambda name: get_judge(name, base_url=s.url, cache=tmp_path/'c.sqlite', progress=False)
        try: evaluate(method, 'summeval', make('o4-mini'), limit=1, dimensions=['coherence'], root=tmp_path/'runs',
                      options=METHOD_OPTIONS.get(method, {}), make_judge=make)
        except UserError as e:
            assert '\n' not in str(e) and s.stats()['received'] == 0, (str(e), s.stats()['received'])
            return
        st = s.stats()
        assert st['received'] > 0
        assert not {k: v for k, v in st['faults'].items() if k.startswith('refused')}, st['faults']


def test_a_server_that_ignores_n_is_asked_the_missing_samples(tmp_path):
    with ChatServer() as s:    # the plain test server (as the rehearsal judges) answers one choice whatever n says
        j = get_judge('qwen2.5-7b', base_url=s.url, base_url_env=None, cache=tmp_path/'c.sqlite', progress=False)
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': 'Rate it 1-5.'}], max_tokens=4, temperature=1.0, n=5, seed=1)])
        assert len(rs[0].samples) == 5 and all(x is not None for x in rs[0].samples) and rs[0].error is None
        assert s.stats()['answered'] == 5
