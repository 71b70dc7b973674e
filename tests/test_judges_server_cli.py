"""`python -m checkeval.testing.server` as a real process: the tiny model behind the OpenAI API, and a script of canned replies."""
import json, subprocess, sys, urllib.request
from pathlib import Path
import pytest
from checkeval.judges import OpenAIJudge, JudgeRequest, Constraint

ROOT = Path(__file__).resolve().parent.parent


def serve(*args):
    p = subprocess.Popen([sys.executable, '-m', 'checkeval.testing.server', '--port', '0', *args], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    assert line.startswith('listening on '), line
    return p, line.split()[-1]


@pytest.mark.timeout(120)
def test_tiny_server_process(tmp_path):
    p, url = serve('--tiny', '--max-concurrency', '4')
    try:
        j = OpenAIJudge('local-tiny', model='checkeval-tiny-v1', base_url=url, cache=tmp_path / 'c.sqlite', choice_mode='structured_outputs',
                        timeout=60, progress=False)
        msgs = [{'role': 'user', 'content': f'Is the summary number {i} fluent ? Answer yes or no .'} for i in range(6)]
        rs = j.generate([JudgeRequest(messages=[m], constraint=Constraint(choices=['yes', 'no']), logprobs=True, top_logprobs=3, max_tokens=1)
                         for m in msgs] + [JudgeRequest(messages=[msgs[0]], max_tokens=5)])
        assert all(r.ok for r in rs), [r.error for r in rs]
        assert all(r.text in ('yes', 'no') and set(r.top_logprobs[0]) >= {'yes', 'no'} for r in rs[:6])
        assert 1 <= rs[6].completion_tokens <= 5 and rs[6].text.strip()
        st = json.loads(urllib.request.urlopen(url.rsplit('/v1', 1)[0] + '/stats').read())
        assert st['answered'] == 7 and st['max_in_flight'] <= 4
        assert all(r.cached for r in j.generate([JudgeRequest(messages=[m], constraint=Constraint(choices=['yes', 'no']), logprobs=True,
                                                               top_logprobs=3, max_tokens=1) for m in msgs]))
    finally:
        p.terminate(); p.wait(10)


@pytest.mark.timeout(60)
def test_script_server_process(tmp_path):
    script = tmp_path / 'script.jsonl'
    script.write_text('\n'.join(json.dumps(d) for d in [{'match': 'coherent', 'reply': 'Yes'}, {'match': 'fluent', 'reply': 'No'},
                                                          {'reply': 'Score: 4'}]) + '\n')
    p, url = serve('--script', str(script), '--latency-ms', '5')
    try:
        j = OpenAIJudge('scripted', model='local', base_url=url, cache=False, progress=False)
        rs = j.generate([JudgeRequest(messages=[{'role': 'user', 'content': q}]) for q in ['Is it coherent?', 'Is it fluent?', 'Rate it.']])
        assert [r.text for r in rs] == ['Yes', 'No', 'Score: 4']
    finally:
        p.terminate(); p.wait(10)
